import type { ConversationEvent } from './conversation.events';
import { call, fold, limits, replied, started, T0, toolDone, toolFailedEvent, tools } from './turn.fixtures';
import { nextTurnStep } from './turn.step';

const step = (events: ConversationEvent[], afterMs = 1_000) => nextTurnStep(fold(events), T0 + afterMs);
const recorded = (events: ConversationEvent[], afterMs?: number) => {
  const s = step(events, afterMs);
  if (s.kind !== 'record') throw new Error(`expected a record step, got ${s.kind}`);
  return s.events;
};

describe('nextTurnStep: what a running turn does next', () => {
  describe('the model call', () => {
    it('calls the model first, with the first call and all its attempts', () => {
      expect(step(started())).toEqual({
        kind: 'call_model',
        plan: { callNo: 1, firstAttempt: 1, attempts: 3, maxTokens: 512, checkPrompt: false, deadline: T0 + 60_000 },
      });
    });

    it('makes a call a crashed worker left open again, at the next attempt', () => {
      const open: ConversationEvent = {
        type: 'ModelCallStarted',
        data: { turnNo: 1, callNo: 1, attempt: 2, model: 'sim-chat', provider: 'SIM' },
      };
      expect(step([...started(), open])).toMatchObject({
        kind: 'call_model',
        plan: { callNo: 1, firstAttempt: 3, attempts: 1 },
      });
    });

    it('caps the completion at what the turn budget has left and checks the prompt when there is a budget', () => {
      const events = [
        ...started({
          limits: limits({ maxPromptTokens: 1_000, maxCompletionTokens: 300 }),
        }),
        ...replied(2, [call('a', 'lookup')], { inputTokens: 10, outputTokens: 250 }),
        toolDone(3, 'a', 'lookup'),
      ];
      expect(step(events)).toMatchObject({ kind: 'call_model', plan: { callNo: 2, maxTokens: 50, checkPrompt: true } });
    });
  });

  describe('limits', () => {
    it('fails the turn once it runs past its time budget', () => {
      expect(recorded(started(), 60_001)).toEqual([
        {
          type: 'ConversationFailed',
          data: { turnNo: 1, code: 'LLM_LIMIT_EXCEEDED', message: 'The turn ran past its time budget of 60000 ms.' },
        },
      ]);
    });

    it('starts nothing more once the deadline is reached: the last millisecond leaves no time for a step', () => {
      expect(step(started(), 59_999)).toMatchObject({ kind: 'call_model' });
      expect(recorded(started(), 60_000)).toMatchObject([
        { type: 'ConversationFailed', data: { code: 'LLM_LIMIT_EXCEEDED' } },
      ]);
    });

    it('fails the turn after two tool calls in a row failed, before running the next one', () => {
      const events = [
        ...started(),
        ...replied(2, [call('a', 'refund'), call('b', 'refund'), call('c', 'lookup')]),
        toolFailedEvent(3, 'a', 'refund'),
        toolFailedEvent(4, 'b', 'refund'),
      ];
      expect(recorded(events)).toEqual([
        {
          type: 'ConversationFailed',
          data: { turnNo: 1, code: 'TOOL_ERRORS', message: 'Two tool calls in a row failed.' },
        },
      ]);
    });

    it('fails the turn on a tool output cut at its limit where the snapshot says so (generate), and goes on where it does not', () => {
      const cut = (overflow?: 'fail' | 'truncate') =>
        [
          ...started({ limits: limits({ maxToolOutputBytes: 1_000, toolOutputOverflow: overflow }) }),
          ...replied(2, [call('a', 'lookup')]),
          {
            ...toolDone(3, 'a', 'lookup', 'x…[truncated: 5000 bytes total]'),
            data: { ...toolDone(3, 'a', 'lookup').data, truncated: true },
          },
        ] as ConversationEvent[];
      expect(recorded(cut('fail'))).toEqual([
        {
          type: 'ConversationFailed',
          data: {
            turnNo: 1,
            code: 'LLM_LIMIT_EXCEEDED',
            message: "The output of tool 'lookup' is over the limit of 1000 bytes.",
          },
        },
      ]);
      expect(step(cut('truncate')).kind).toBe('call_model');
      expect(step(cut()).kind).toBe('call_model');
    });

    it('goes on after a failure followed by a success', () => {
      const events = [
        ...started(),
        ...replied(2, [call('a', 'refund'), call('b', 'lookup')]),
        toolFailedEvent(3, 'a', 'refund'),
        toolDone(4, 'b', 'lookup'),
      ];
      expect(step(events).kind).toBe('call_model');
    });

    it('fails the turn when the model keeps asking for tools past the tool-round limit', () => {
      const rounds = (n: number) =>
        Array.from({ length: n }, (_, i) => [
          ...replied(2 + 2 * i, [call(`c${i}`, 'lookup')], undefined, i + 1),
          toolDone(3 + 2 * i, `c${i}`, 'lookup'),
        ]).flat();
      const twoRounds = limits({ maxToolRounds: 2 });
      expect(step([...started({ limits: twoRounds }), ...rounds(2)]).kind).toBe('call_model');
      expect(recorded([...started({ limits: twoRounds }), ...rounds(3)])).toMatchObject([
        {
          type: 'ConversationFailed',
          data: { code: 'LLM_LIMIT_EXCEEDED', message: 'The model asked for tools more than 2 rounds in a row.' },
        },
      ]);
    });

    it('fails the turn before a model call once its completion or total token budget is used', () => {
      const budgets = (maxCompletionTokens: number | null, maxTotalTokens: number | null) =>
        limits({ maxCompletionTokens, maxTotalTokens });
      const after = (l: ReturnType<typeof budgets>) => [
        ...started({ limits: l }),
        ...replied(2, [call('a', 'lookup')], { inputTokens: 40, outputTokens: 20 }),
        toolDone(3, 'a', 'lookup'),
      ];
      expect(recorded(after(budgets(20, null)))[0]).toMatchObject({
        data: { code: 'LLM_LIMIT_EXCEEDED', message: 'The turn used its completion token budget (20 of 20).' },
      });
      expect(recorded(after(budgets(null, 60)))[0]).toMatchObject({
        data: { code: 'LLM_LIMIT_EXCEEDED', message: 'The turn used its total token budget (60 of 60).' },
      });
      expect(step(after(budgets(21, 61))).kind).toBe('call_model');
    });
  });

  describe('tool calls', () => {
    it('runs the calls of the last reply in order, with the repository each tool came from', () => {
      const events = [...started(), ...replied(2, [call('a', 'lookup'), call('b', 'refund')])];
      expect(step(events)).toEqual({
        kind: 'run_tool',
        call: { ...call('a', 'lookup'), status: 'requested' },
        tool: tools.lookup,
        repositoryId: null,
        deadline: T0 + 60_000,
      });
      expect(step([...events, toolDone(3, 'a', 'lookup')])).toMatchObject({ kind: 'run_tool', call: { id: 'b' } });
    });

    it('refuses a tool the action does not offer, as a failure the model reads', () => {
      expect(recorded([...started(), ...replied(2, [call('x', 'drop_tables')])])).toEqual([
        {
          type: 'ToolCallFailed',
          data: {
            turnNo: 1,
            sequence: 3,
            toolCallId: 'x',
            name: 'drop_tables',
            code: 'NOT_ALLOWED',
            message: "Tool 'drop_tables' is not available to this action.",
            durationMs: 0,
          },
        },
      ]);
    });

    it('records a call that may not run twice and was cut short by a crash as INTERRUPTED', () => {
      const events: ConversationEvent[] = [
        ...started(),
        ...replied(2, [call('r', 'refund')]),
        {
          type: 'ToolCallStarted',
          data: { turnNo: 1, toolCallId: 'r', name: 'refund', arguments: '{}', kind: 'in_process' },
        },
      ];
      expect(recorded(events)).toMatchObject([
        { type: 'ToolCallFailed', data: { toolCallId: 'r', code: 'INTERRUPTED' } },
      ]);
    });

    it('runs an idempotent call cut short by a crash again', () => {
      const events: ConversationEvent[] = [
        ...started(),
        ...replied(2, [call('l', 'lookup')]),
        {
          type: 'ToolCallStarted',
          data: { turnNo: 1, toolCallId: 'l', name: 'lookup', arguments: '{}', kind: 'in_process' },
        },
      ];
      expect(step(events)).toMatchObject({ kind: 'run_tool', call: { id: 'l', status: 'started' } });
    });

    it('asks for approvals only once every other call of the round is done, all together', () => {
      const events = [...started(), ...replied(2, [call('d', 'delete_order', { orderId: '7' }), call('l', 'lookup')])];
      expect(step(events)).toMatchObject({ kind: 'run_tool', call: { id: 'l' } });
      expect(recorded([...events, toolDone(3, 'l', 'lookup')])).toEqual([
        {
          type: 'ToolCallApprovalRequested',
          data: { turnNo: 1, toolCallId: 'd', name: 'delete_order', arguments: '{"orderId":"7"}' },
        },
      ]);
    });

    it('runs an approved call', () => {
      const events: ConversationEvent[] = [
        ...started(),
        ...replied(2, [call('d', 'delete_order')]),
        {
          type: 'ToolCallApprovalRequested',
          data: { turnNo: 1, toolCallId: 'd', name: 'delete_order', arguments: '{}' },
        },
        { type: 'ToolCallApproved', data: { toolCallId: 'd' } },
        { type: 'TurnResumed', data: { turnNo: 1, reason: 'approval' } },
      ];
      expect(step(events)).toMatchObject({ kind: 'run_tool', call: { id: 'd', status: 'approved' } });
    });

    it('gives each approval asked for its expiry when the snapshot has an approval timeout', () => {
      const events = [
        ...started({ limits: limits({ approvalTimeoutMs: 60_000 }) }),
        ...replied(2, [call('d', 'delete_order')]),
      ];
      expect(recorded(events, 5_000)).toEqual([
        {
          type: 'ToolCallApprovalRequested',
          data: {
            turnNo: 1,
            toolCallId: 'd',
            name: 'delete_order',
            arguments: '{}',
            expiresAt: new Date(T0 + 65_000).toISOString(),
          },
        },
      ]);
    });

    it('approves a call by itself under auto_confirm, recording it as auto, then runs it', () => {
      const events = [...started({ autoConfirm: true }), ...replied(2, [call('d', 'delete_order')])];
      const approved = recorded(events);
      expect(approved).toEqual([{ type: 'ToolCallApproved', data: { toolCallId: 'd', by: 'auto' } }]);
      expect(step([...events, ...approved])).toMatchObject({ kind: 'run_tool', call: { id: 'd', status: 'approved' } });
    });

    it("asks the model's question, expiring after the question timeout", () => {
      const ask = call('q', 'AskUserQuestion', {
        questions: [{ key: 'size', question: 'Which size?', options: ['S', 'M'] }],
      });
      expect(recorded([...started(), ...replied(2, [ask])], 5_000)).toEqual([
        {
          type: 'QuestionAsked',
          data: {
            turnNo: 1,
            sequence: 3,
            toolCallId: 'q',
            questions: [{ key: 'size', question: 'Which size?', options: ['S', 'M'] }],
            expiresAt: new Date(T0 + 5_000 + 300_000).toISOString(),
          },
        },
      ]);
    });

    it('turns a malformed question into INVALID_ARGUMENTS the model reads', () => {
      const ask = call('q', 'AskUserQuestion', { questions: [{ key: '', question: 'Which?' }] });
      expect(recorded([...started(), ...replied(2, [ask])])).toMatchObject([
        {
          type: 'ToolCallFailed',
          data: { code: 'INVALID_ARGUMENTS', message: 'questions[0].key: expected a non-empty string' },
        },
      ]);
    });

    it("discloses a skill's tools when the model asks for the skill", () => {
      expect(recorded([...started(), ...replied(2, [call('s', 'billing')])])).toMatchObject([
        { type: 'SkillDisclosed', data: { skillCode: 'BILLING', tools: [{ name: 'invoice' }] } },
        {
          type: 'ToolCallCompleted',
          data: {
            toolCallId: 's',
            output: 'Skill BILLING is now enabled. Its tools are available: invoice.\nMind the invoices.',
          },
        },
      ]);
    });

    it('is idle while the conversation waits for a human', () => {
      const ask = call('q', 'AskUserQuestion', { questions: [{ key: 'k', question: 'Q?' }] });
      const events = [...started(), ...replied(2, [ask])];
      expect(step([...events, ...recorded(events)])).toEqual({ kind: 'idle' });
    });
  });

  describe('the end of the turn', () => {
    it('completes the turn when the last reply asked for no tool (a reply recorded before a crash)', () => {
      expect(recorded([...started(), ...replied(2, [])])).toEqual([
        {
          type: 'ConversationCompleted',
          data: { turnNo: 1, finishReason: 'ST', reply: 'done', responseModel: 'sim-chat-1' },
        },
      ]);
    });

    it("completes the turn with a returnDirect tool's output as the reply, without another model call", () => {
      const direct: ConversationEvent = {
        type: 'ToolCallCompleted',
        data: {
          turnNo: 1,
          sequence: 3,
          toolCallId: 'n',
          name: 'answer_now',
          output: '42',
          truncated: false,
          durationMs: 1,
          returnDirect: true,
        },
      };
      expect(recorded([...started(), ...replied(2, [call('n', 'answer_now')]), direct])).toEqual([
        {
          type: 'ConversationCompleted',
          data: { turnNo: 1, finishReason: 'TC', reply: '42', responseModel: 'sim-chat-1' },
        },
      ]);
    });

    it('is idle once the turn has ended', () => {
      const events = [...started(), ...replied(2, [])];
      expect(step([...events, ...recorded(events)])).toEqual({ kind: 'idle' });
    });
  });
});
