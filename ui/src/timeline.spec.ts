import { Timeline, type StoredEvent } from './timeline';

let revision = 0;
const event = (type: string, data: Record<string, unknown>): StoredEvent => ({
  revision: revision++,
  position: `pg:1:${revision}`,
  type,
  data,
  createdAt: '2026-11-27T12:00:00.000Z',
});
const call = { turnNo: 1, callNo: 1, attempt: 1 };

describe('the timeline built from events', () => {
  beforeEach(() => {
    revision = 0;
  });

  it('streams a reply from deltas and stored chunks alike, and replaces it with the recorded message', () => {
    const t = new Timeline();
    t.apply(event('ModelCallStarted', { ...call, model: 'sim', provider: 'SIM' }));
    t.delta({ ...call, text: 'Hel' });
    t.delta({ ...call, text: 'lo' });
    t.apply(event('ChunksReceived', { ...call, text: 'Hel', reasoning: '', count: 1 }));
    expect(t.items.at(-1)).toMatchObject({ kind: 'live', text: 'Hello' });
    t.apply(event('ModelCallCompleted', { ...call, inputTokens: 3, outputTokens: 2, cost: 0.1, latencyMs: 5 }));
    t.apply(event('MessageRecorded', { sequence: 2, role: 'AS', content: 'Hello', turnNo: 1, tokenCount: 2 }));
    expect(t.items.map((i) => i.kind)).toEqual(['model', 'message']);
    expect(t.items[0]).toMatchObject({ attempts: [{ outcome: 'ok', inputTokens: 3, latencyMs: 5 }] });
  });

  it('keeps each attempt of a model call with its failure and retry', () => {
    const t = new Timeline();
    t.apply(event('ModelCallStarted', { ...call, model: 'sim', provider: 'SIM' }));
    t.apply(event('ModelCallFailed', { ...call, kind: 'rate_limited', message: 'slow down', retryable: true }));
    t.apply(event('ModelCallRetryScheduled', { ...call, delayMs: 100 }));
    t.apply(event('ModelCallStarted', { ...call, attempt: 2, model: 'sim', provider: 'SIM' }));
    expect(t.items).toHaveLength(1);
    expect(t.items[0]).toMatchObject({
      attempts: [
        { attempt: 1, outcome: 'failed', failure: 'rate_limited: slow down', retryAfterMs: 100 },
        { attempt: 2, outcome: 'running' },
      ],
    });
  });

  it('knows the approvals and the question still pending, until they are settled', () => {
    const t = new Timeline();
    t.apply(event('ToolCallApprovalRequested', { turnNo: 1, toolCallId: 'a', name: 'CANCEL', arguments: '{}' }));
    t.apply(event('QuestionAsked', { turnNo: 1, toolCallId: 'q', questions: [{ key: 'k', question: 'Why?' }] }));
    expect(t.pendingApprovals().map((i) => i.name)).toEqual(['CANCEL']);
    expect(t.pendingQuestion()?.questions).toEqual([{ key: 'k', question: 'Why?' }]);
    t.apply(event('ToolCallApproved', { toolCallId: 'a' }));
    t.apply(event('AnswersSubmitted', { turnNo: 1, toolCallId: 'q', answers: { k: 'because' } }));
    expect(t.pendingApprovals()).toEqual([]);
    expect(t.pendingQuestion()).toBeNull();
    t.apply(event('ToolCallCompleted', { toolCallId: 'a', name: 'CANCEL', output: 'ok', durationMs: 7 }));
    expect(t.items[0]).toMatchObject({ outcome: 'ok', approval: 'approved', durationMs: 7 });
  });

  it('ignores an event it has already applied (a stream resumed), and closes after a kill', () => {
    const t = new Timeline();
    const started = event('TurnStarted', { turnNo: 1 });
    t.apply(started);
    t.apply(started);
    expect(t.items).toHaveLength(1);
    expect(t.closed).toBe(false);
    t.apply(event('ConversationPaused', { reason: null }));
    expect(t.closed).toBe(false);
    t.apply(event('ConversationKilled', { reason: 'runaway' }));
    expect(t.closed).toBe(true);
    expect(t.items.at(-1)).toMatchObject({ kind: 'marker', text: 'Killed: runaway' });
  });
});
