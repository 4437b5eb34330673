import { TurnContext, TurnPreempted } from './turn-context';
import { startTurn, useTurnStore } from './turn.test-kit';

const call = { turnNo: 1, callNo: 1, attempt: 1 };

describe('TurnContext', () => {
  const store = useTurnStore('turn_context');

  it('refuses every append queued behind one that found the stream moved, so nothing lands on the new state', async () => {
    const { id, repository, ctx } = await startTurn(store());
    // Another worker finishes the same turn first.
    const other = new TurnContext(id, repository, await repository.load(id), `turn:${id}:1`);
    await other.append([
      { type: 'ModelCallStarted', data: { ...call, model: 'sim-chat', provider: 'SIM' } },
      { type: 'ConversationCompleted', data: { turnNo: 1, finishReason: 'ST', reply: 'done', responseModel: null } },
    ]);

    const flush = ctx.append([{ type: 'ModelCallStarted', data: { ...call, model: 'sim-chat', provider: 'SIM' } }]);
    const outcome = ctx.append([{ type: 'ChunksReceived', data: { ...call, text: 'late', reasoning: '', count: 1 } }]);

    await expect(flush).rejects.toBeInstanceOf(TurnPreempted);
    await expect(outcome).rejects.toBeInstanceOf(TurnPreempted);
    const types = (await store().readStream(`conversation-${id}`)).map((e) => e.type);
    expect(types).toEqual([
      'ConversationStarted',
      'MessageRecorded',
      'TurnStarted',
      'ModelCallStarted',
      'ConversationCompleted',
    ]);
    expect(ctx.state.status).toBe('CO');
  });

  it('folds staged events into its state at once and stores them, in order, with the next append', async () => {
    const { id, ctx } = await startTurn(store());
    const toolCall = { id: 'call-1', name: 'ORDER_STATUS', arguments: '{}' };
    await ctx.append([
      {
        type: 'MessageRecorded',
        data: { sequence: 2, role: 'AS', content: null, turnNo: 1, tokenCount: 1, toolCalls: [toolCall] },
      },
    ]);

    ctx.stage([
      {
        type: 'ToolCallStarted',
        data: { turnNo: 1, toolCallId: 'call-1', name: 'ORDER_STATUS', arguments: '{}', kind: 'in_process' },
      },
      {
        type: 'ToolCallCompleted',
        data: {
          turnNo: 1,
          sequence: 3,
          toolCallId: 'call-1',
          name: 'ORDER_STATUS',
          output: '{"ok":true}',
          truncated: false,
          durationMs: 3,
        },
      },
    ]);

    expect(ctx.state.turn!.toolCalls).toEqual([expect.objectContaining({ id: 'call-1', status: 'completed' })]);
    expect(ctx.revision).toBe(3n);
    const typesNow = async () => (await store().readStream(`conversation-${id}`)).map((e) => e.type);
    expect(await typesNow()).not.toContain('ToolCallCompleted');
    await ctx.append([{ type: 'ModelCallStarted', data: { ...call, callNo: 2, model: 'sim-chat', provider: 'SIM' } }]);
    expect((await typesNow()).slice(-3)).toEqual(['ToolCallStarted', 'ToolCallCompleted', 'ModelCallStarted']);
    expect(ctx.revision).toBe(6n);
    expect(ctx.state.turn!.toolCalls[0].status).toBe('completed');
  });
});
