import {
  conversationDecider,
  nextSequence,
  type Attachment,
  type ConversationCommand,
  type ConversationEvent,
  type ConversationState,
  type ExistingConversation,
  type ToolCallRef,
} from '@parley/domain';
import { type ConversationSnapshot, type TurnFailureCode, type MemoryStrategy } from '@parley/core';
import type { LlmMessage } from '@parley/llm';
import { snapshotFixture } from '@parley/testing';
import { buildMessages } from './build-messages';

const meta = { now: '2026-01-01T00:00:00.000Z', actor: 'client-a' };

/**
 * A conversation told step by step and folded with the real decider: the client's commands go
 * through `decide`, the turn worker's events are recorded as the worker records them, each
 * entry numbered with the next sequence of the current turn.
 */
class Story {
  private state: ConversationState = conversationDecider.initialState();

  constructor(snapshot: Partial<ConversationSnapshot> = {}) {
    this.command({
      type: 'StartConversation',
      data: {
        conversationId: 'c1',
        agentCode: 'HELPDESK',
        actionCode: 'ANSWER',
        metadata: {},
        snapshot: snapshotFixture(snapshot),
      },
      meta,
    });
  }

  get conversation(): ExistingConversation {
    return this.state as ExistingConversation;
  }

  user(content: string, attachments: Attachment[] = []): this {
    return this.command({ type: 'SendMessage', data: { content, tokenCount: 1, attachments }, meta });
  }

  assistant(content: string | null, ...toolCalls: ToolCallRef[]): this {
    const data = { sequence: this.sequence, role: 'AS' as const, content, turnNo: this.turnNo, tokenCount: 1 };
    return this.record({ type: 'MessageRecorded', data: toolCalls.length ? { ...data, toolCalls } : data });
  }

  reply(content: string): this {
    return this.assistant(content).record({
      type: 'ConversationCompleted',
      data: { turnNo: this.turnNo, finishReason: 'ST', reply: content, responseModel: 'sim-chat' },
    });
  }

  started(call: ToolCallRef): this {
    const { id: toolCallId, name, arguments: args } = call;
    return this.record({
      type: 'ToolCallStarted',
      data: { turnNo: this.turnNo, toolCallId, name, arguments: args, kind: 'in_process' },
    });
  }

  result(call: ToolCallRef, output: string): this {
    return this.started(call).record({
      type: 'ToolCallCompleted',
      data: {
        turnNo: this.turnNo,
        sequence: this.sequence,
        toolCallId: call.id,
        name: call.name,
        output,
        truncated: false,
        durationMs: 1,
      },
    });
  }

  ask(call: ToolCallRef): this {
    const questions = [{ key: 'order', question: 'Which order?' }];
    return this.record({
      type: 'QuestionAsked',
      data: { turnNo: this.turnNo, sequence: this.sequence, toolCallId: call.id, questions, expiresAt: meta.now },
    });
  }

  answer(answers: Record<string, string>): this {
    return this.command({ type: 'SubmitAnswers', data: { answers }, meta });
  }

  awaitApproval(call: ToolCallRef): this {
    const { id: toolCallId, name, arguments: args } = call;
    return this.record({
      type: 'ToolCallApprovalRequested',
      data: { turnNo: this.turnNo, toolCallId, name, arguments: args },
    });
  }

  approve(call: ToolCallRef): this {
    return this.command({ type: 'ApproveToolCall', data: { toolCallId: call.id }, meta });
  }

  reject(call: ToolCallRef, reason: string | null): this {
    return this.command({ type: 'RejectToolCall', data: { toolCallId: call.id, reason }, meta });
  }

  fail(code: TurnFailureCode): this {
    return this.record({ type: 'ConversationFailed', data: { turnNo: this.turnNo, code, message: code } });
  }

  clearMemory(): this {
    return this.command({ type: 'ClearMemory', data: { reason: null }, meta });
  }

  summarised(fromSequence: number, throughSequence: number, summary: string): this {
    const usage = { inputTokens: 10, outputTokens: 2, estimated: false };
    return this.command({
      type: 'RecordMemorySummary',
      data: { fromSequence, throughSequence, summary, responseModel: null, usage, latencyMs: 1 },
      meta,
    } as unknown as ConversationCommand);
  }

  /** The turn worker's automatic recall of long-term memory before the first model call. */
  recalled(...texts: string[]): this {
    const hits = texts.map((text, i) => ({
      memoryId: `m${i}`,
      scope: 'user' as const,
      text,
      importance: 0.5,
      similarity: 0.9,
      score: 0.8,
    }));
    return this.command({
      type: 'RecordAutoRecall',
      data: { query: 'q', hits },
      meta,
    } as unknown as ConversationCommand);
  }

  retrieved(context: string | null): this {
    return this.command({
      type: 'RecordContextRetrieved',
      data: {
        query: 'q',
        searches: [],
        chunks: [],
        blocks: context ? 1 : 0,
        dropped: [],
        context,
        budget: { promptTokens: null, withoutContext: 0, context: 0 },
      },
      meta,
    } as unknown as ConversationCommand);
  }

  private get turnNo(): number {
    return this.conversation.turn?.no ?? 0;
  }

  private get sequence(): number {
    return nextSequence(this.conversation);
  }

  private command(command: ConversationCommand): this {
    return this.record(...conversationDecider.decide(command, this.state));
  }

  private record(...events: ConversationEvent[]): this {
    for (const e of events) this.state = conversationDecider.evolve(this.state, e);
    return this;
  }
}

const call = (id: string, name = 'ORDER_STATUS'): ToolCallRef => ({ id, name, arguments: '{}' });
const status1 = call('status-1');
const status2 = call('status-2');
const ask1 = call('ask-1', 'AskUserQuestion');
const cancel1 = call('cancel-1', 'CANCEL_ORDER');
const refund1 = call('refund-1', 'REFUND');

/**
 * Fifteen entries over three turns; the third is running and its next step is a model call.
 *   turn 1:  1 US, 2 AS calls status-1 status-2, 3 TO, 4 TO, 5 AS reply
 *   turn 2:  6 US, 7 AS calls ask-1, 8 QU, 9 TO answer, 10 AS calls cancel-1, 11 TO rejected, 12 AS reply
 *   turn 3: 13 US, 14 AS calls refund-1, 15 TO (approved, then run)
 */
const orders = (memory: MemoryStrategy) =>
  new Story({ memory })
    .user('Where are my orders?')
    .assistant(null, status1, status2)
    .result(status1, 'A-1 shipped')
    .result(status2, 'A-2 shipped')
    .reply('Both shipped.')
    .user('Cancel one of them.')
    .assistant(null, ask1)
    .ask(ask1)
    .answer({ order: 'A-2' })
    .assistant(null, cancel1)
    .awaitApproval(cancel1)
    .reject(cancel1, 'I still want it.')
    .reply('I left the order as it is.')
    .user('Then refund it.')
    .assistant(null, refund1)
    .awaitApproval(refund1)
    .approve(refund1)
    .result(refund1, 'refunded').conversation;

const ORDERS_SENT = [
  'user: Where are my orders?',
  'assistant calls status-1, status-2',
  'tool status-1: A-1 shipped',
  'tool status-2: A-2 shipped',
  'assistant: Both shipped.',
  'user: Cancel one of them.',
  'assistant calls ask-1',
  'tool ask-1: {"answers":{"order":"A-2"}}',
  'assistant calls cancel-1',
  'tool cancel-1: The user rejected this tool call: I still want it. Do not retry it unless asked.',
  'assistant: I left the order as it is.',
  'user: Then refund it.',
  'assistant calls refund-1',
  'tool refund-1: refunded',
];
const sentFrom = (first: string) => ['system', ...ORDERS_SENT.slice(ORDERS_SENT.indexOf(first))];

/** One line per message, so a whole request reads at a glance in a failing diff. */
function sent(c: ExistingConversation): string[] {
  return buildMessages(c).map((m) => {
    if (m.role === 'system') return 'system';
    if (m.role === 'tool') return `tool ${m.toolCallId}: ${m.content}`;
    if (m.role === 'assistant')
      return m.toolCalls ? `assistant calls ${m.toolCalls.map((t) => t.id).join(', ')}` : `assistant: ${m.content}`;
    return `user: ${typeof m.content === 'string' ? m.content : JSON.stringify(m.content)}`;
  });
}

/**
 * What OpenAI checks: a tool message answers a call of the assistant message it follows (with
 * only tool messages between), and every call of an assistant message is answered before the
 * next user or assistant message.
 */
function pairingViolations(messages: LlmMessage[]): string[] {
  const violations: string[] = [];
  let open: Set<string> | null = null;
  const close = () => open?.forEach((id) => violations.push(`call ${id} has no tool message`));
  for (const m of messages) {
    if (m.role === 'tool') {
      if (!open?.delete(m.toolCallId)) violations.push(`tool message ${m.toolCallId} follows no call of that id`);
      continue;
    }
    close();
    open = m.role === 'assistant' ? new Set(m.toolCalls?.map((t) => t.id)) : null;
  }
  close();
  return violations;
}

describe('buildMessages', () => {
  describe('FULL memory', () => {
    it('sends the system prompt, then every turn in order, tool results after the calls that asked for them', () => {
      expect(sent(orders({ kind: 'FULL' }))).toEqual(['system', ...ORDERS_SENT]);
    });

    it('sends assistant tool calls as they were made and replies without a toolCalls field', () => {
      const messages = buildMessages(orders({ kind: 'FULL' }));
      expect(messages.slice(0, 3)).toStrictEqual([
        { role: 'system', content: "You are ACME's support assistant." },
        { role: 'user', content: 'Where are my orders?' },
        { role: 'assistant', content: null, toolCalls: [status1, status2] },
      ]);
      expect(messages[5]).toStrictEqual({ role: 'assistant', content: 'Both shipped.' });
    });

    it('sends no system message when the snapshot has no system prompt', () => {
      const c = new Story({ systemPrompt: '' }).user('Hi').conversation;
      expect(sent(c)).toEqual(['user: Hi']);
    });
  });

  describe('WINDOW memory', () => {
    const windowOf = (windowSize: number) => sent(orders({ kind: 'WINDOW', windowSize }));

    it('keeps exactly the last N entries when the window starts at a user message', () => {
      expect(windowOf(3)).toEqual(sentFrom('user: Then refund it.'));
      expect(windowOf(10)).toEqual(sentFrom('user: Cancel one of them.'));
    });

    it('keeps exactly the last N entries when the window starts at an assistant message', () => {
      expect(windowOf(4)).toEqual(sentFrom('assistant: I left the order as it is.'));
      expect(windowOf(6)).toEqual(sentFrom('assistant calls cancel-1'));
    });

    it('keeps the assistant message that asked when the window starts at its tool result', () => {
      expect(windowOf(1)).toEqual(sentFrom('assistant calls refund-1'));
    });

    it('keeps the assistant message that asked when the window starts at a rejected approval', () => {
      expect(windowOf(5)).toEqual(sentFrom('assistant calls cancel-1'));
    });

    it('keeps the assistant message that asked when the window starts at the question', () => {
      expect(windowOf(8)).toEqual(sentFrom('assistant calls ask-1'));
    });

    it('keeps the assistant message that asked, over its question, when the window starts at the answer', () => {
      expect(windowOf(7)).toEqual(sentFrom('assistant calls ask-1'));
    });

    it('keeps every result of one assistant message when the window starts inside their run', () => {
      expect(windowOf(12)).toEqual(sentFrom('assistant calls status-1, status-2'));
      expect(windowOf(13)).toEqual(sentFrom('assistant calls status-1, status-2'));
    });

    it('sends the whole conversation when the window is as long as the transcript or longer', () => {
      expect(windowOf(15)).toEqual(['system', ...ORDERS_SENT]);
      expect(windowOf(100)).toEqual(['system', ...ORDERS_SENT]);
    });

    it('keeps the last 20 entries when the strategy names no size', () => {
      const story = new Story({ memory: { kind: 'WINDOW' } });
      for (let n = 1; n <= 12; n++) story.user(`Question ${n}`).reply(`Answer ${n}`);
      const messages = sent(story.conversation);
      expect(messages).toHaveLength(21);
      expect(messages[1]).toBe('user: Question 3');
    });
  });

  describe('NONE memory', () => {
    it('sends only the current turn, with its tool calls and their results', () => {
      expect(sent(orders({ kind: 'NONE' }))).toEqual(sentFrom('user: Then refund it.'));
    });

    it("keeps the current turn's answered question and rejected approval", () => {
      const c = new Story({ memory: { kind: 'NONE' } })
        .user('Hi')
        .reply('Hello')
        .user('Cancel one of them.')
        .assistant(null, ask1)
        .ask(ask1)
        .answer({ order: 'A-2' })
        .assistant(null, cancel1)
        .awaitApproval(cancel1)
        .reject(cancel1, null).conversation;
      expect(sent(c)).toEqual([
        'system',
        'user: Cancel one of them.',
        'assistant calls ask-1',
        'tool ask-1: {"answers":{"order":"A-2"}}',
        'assistant calls cancel-1',
        'tool cancel-1: The user rejected this tool call. Do not retry it unless asked.',
      ]);
    });
  });

  describe('cleared and summarised memory', () => {
    it('sends nothing from before a clear, whatever the strategy', () => {
      for (const memory of [{ kind: 'FULL' }, { kind: 'WINDOW', windowSize: 10 }, { kind: 'SUMMARY' }] as const) {
        const story = new Story({ memory }).user('My name is Ada.').reply('Hello Ada.').clearMemory();
        expect(sent(story.user('Who am I?').conversation)).toEqual(['system', 'user: Who am I?']);
        expect(story.conversation.transcript).toHaveLength(3);
      }
    });

    it('sends the summary as a labelled system message, then only the entries after it', () => {
      const story = new Story({ memory: { kind: 'SUMMARY' } })
        .user('Question 1')
        .reply('Answer 1')
        .user('Question 2')
        .reply('Answer 2')
        .user('Question 3');
      // The summary is recorded by the turn worker while turn 3 runs.
      const c = story.summarised(1, 2, 'The user asked one question.').conversation;
      const messages = buildMessages(c);
      expect(messages[1]).toEqual({
        role: 'system',
        content: 'Summary of the earlier conversation:\nThe user asked one question.',
      });
      expect(sent(c)).toEqual(['system', 'system', 'user: Question 2', 'assistant: Answer 2', 'user: Question 3']);
    });
  });

  describe('long-term memory', () => {
    it('sends the facts the turn recalled as a labelled system message, after the prompt, in this turn only', () => {
      const story = new Story({ memory: { kind: 'FULL' } })
        .user('What colour do I like?')
        .recalled('likes teal', 'has a cat');
      expect(buildMessages(story.conversation)[1]).toEqual({
        role: 'system',
        content: 'Facts remembered from earlier conversations (long-term memory):\n- likes teal\n- has a cat',
      });
      expect(sent(story.conversation)).toEqual(['system', 'system', 'user: What colour do I like?']);
      const next = story.reply('Teal.').user('Thanks.');
      expect(sent(next.conversation)).toEqual([
        'system',
        'user: What colour do I like?',
        'assistant: Teal.',
        'user: Thanks.',
      ]);
    });

    it('adds no block when the recall found nothing', () => {
      const story = new Story().user('Hello').recalled();
      expect(sent(story.conversation)).toEqual(['system', 'user: Hello']);
    });
  });

  describe('the context block of retrieval', () => {
    it("sends the turn's block, as recorded, right before its user message, and never an earlier turn's", () => {
      const story = new Story({ memory: { kind: 'FULL' } })
        .user('Question 1')
        .retrieved('CONTEXT 1')
        .reply('Answer 1')
        .user('Question 2')
        .retrieved('CONTEXT 2');
      expect(sent(story.conversation)).toEqual([
        'system',
        'user: Question 1',
        'assistant: Answer 1',
        'system',
        'user: Question 2',
      ]);
      expect(buildMessages(story.conversation)[3]).toEqual({ role: 'system', content: 'CONTEXT 2' });
      // It stays for the turn's later calls, after tool results too.
      const later = story.assistant(null, status1).result(status1, 'shipped').conversation;
      expect(buildMessages(later).filter((m) => m.content === 'CONTEXT 2')).toHaveLength(1);
    });

    it('sends no block when nothing was kept, and follows the system messages when the window left the user message out', () => {
      expect(sent(new Story().user('Question').retrieved(null).conversation)).toEqual(['system', 'user: Question']);
      let story = new Story({ memory: { kind: 'WINDOW', windowSize: 2 } }).user('Question').retrieved('CONTEXT');
      for (const id of ['a', 'b']) story = story.assistant(null, call(id)).result(call(id), 'ok');
      const messages = buildMessages(story.conversation);
      expect(messages.slice(0, 2).map((m) => m.role)).toEqual(['system', 'system']);
      expect(messages[1].content).toBe('CONTEXT');
      expect(messages.some((m) => m.role === 'user')).toBe(false);
    });
  });

  describe('interrupted calls', () => {
    it('answers a tool call an earlier turn left without a result, so the provider accepts the request', () => {
      const c = new Story()
        .user('Where is A-1?')
        .assistant(null, status1)
        .started(status1)
        .fail('LLM_RUNTIME_ERROR')
        .user('Still there?').conversation;
      expect(sent(c)).toEqual([
        'system',
        'user: Where is A-1?',
        'assistant calls status-1',
        'tool status-1: The tool call did not complete.',
        'user: Still there?',
      ]);
    });

    it('answers the call of a question that expired unanswered in an earlier turn', () => {
      const c = new Story()
        .user('Cancel one of them.')
        .assistant(null, ask1)
        .ask(ask1)
        .fail('QUESTION_TIMEOUT')
        .user('Never mind.').conversation;
      expect(sent(c)).toEqual([
        'system',
        'user: Cancel one of them.',
        'assistant calls ask-1',
        'tool ask-1: The tool call did not complete.',
        'user: Never mind.',
      ]);
    });

    it('gives a call of the current turn that is still pending no result of its own', () => {
      const c = new Story()
        .user('Refund A-2 once you know its status.')
        .assistant(null, status2, refund1)
        .result(status2, 'A-2 shipped')
        .awaitApproval(refund1).conversation;
      expect(sent(c)).toEqual([
        'system',
        'user: Refund A-2 once you know its status.',
        'assistant calls status-2, refund-1',
        'tool status-2: A-2 shipped',
      ]);
    });
  });

  describe('questions and approvals', () => {
    const asked = new Story()
      .user('Cancel one of them.')
      .assistant(null, ask1)
      .ask(ask1)
      .answer({ order: 'A-2' }).conversation;

    it("never sends the question itself; the answer goes as the AskUserQuestion call's tool result", () => {
      const messages = buildMessages(asked);
      expect(asked.transcript.map((m) => m.role)).toEqual(['US', 'AS', 'QU', 'TO']);
      expect(JSON.stringify(messages)).not.toContain('Which order?');
      expect(messages.at(-1)).toEqual({ role: 'tool', toolCallId: 'ask-1', content: '{"answers":{"order":"A-2"}}' });
    });

    it('tells the model a rejected call was rejected, with the reason, and not to retry it', () => {
      expect(sent(orders({ kind: 'FULL' }))).toContain(
        'tool cancel-1: The user rejected this tool call: I still want it. Do not retry it unless asked.',
      );
    });

    it("sends an approved call's output as its result", () => {
      expect(sent(orders({ kind: 'FULL' })).at(-1)).toBe('tool refund-1: refunded');
    });
  });

  describe('attachments', () => {
    const photo = { mediaType: 'image/png', url: 'https://files.example/photo.png' };
    const invoice = { mediaType: 'application/pdf', url: 'https://files.example/invoice.pdf' };
    const userMessage = (capabilities: string[], attachment: Attachment) => {
      const model = { ...snapshotFixture().model, capabilities };
      return buildMessages(new Story({ model }).user('What is wrong here?', [attachment]).conversation)[1];
    };

    it('sends an image as an image part to a model that sees images (VI)', () => {
      expect(userMessage(['FC', 'VI'], photo)).toEqual({
        role: 'user',
        content: [
          { type: 'text', text: 'What is wrong here?' },
          { type: 'image_url', url: photo.url },
        ],
      });
    });

    it('names an image in text to a model that does not see images', () => {
      expect(userMessage(['FC'], photo)).toEqual({
        role: 'user',
        content: [
          { type: 'text', text: 'What is wrong here?' },
          { type: 'text', text: `[Attachment image/png: ${photo.url}]` },
        ],
      });
    });

    it('names a document in text even to a model that sees images', () => {
      expect(userMessage(['FC', 'VI'], invoice)).toEqual({
        role: 'user',
        content: [
          { type: 'text', text: 'What is wrong here?' },
          { type: 'text', text: `[Attachment application/pdf: ${invoice.url}]` },
        ],
      });
    });
  });

  describe('the pairing providers require', () => {
    const lookup2 = call('lookup-2');
    const ask2 = call('ask-2', 'AskUserQuestion');
    const refund2 = call('refund-2', 'REFUND');
    const ask3 = call('ask-3', 'AskUserQuestion');
    const status4 = call('status-4');
    const cancel5 = call('cancel-5', 'CANCEL_ORDER');
    /** Every kind of entry, a reply whose calls mix a tool, a question and an approval, and two interrupted turns. */
    const everything = (memory: MemoryStrategy) =>
      new Story({ memory })
        .user('Where are my orders?')
        .assistant(null, status1, status2)
        .result(status1, 'A-1 shipped')
        .result(status2, 'A-2 late')
        .reply('A-2 is late.')
        .user('Refund the late one.')
        .assistant('Let me check.', lookup2, ask2, refund2)
        .result(lookup2, 'A-2 late by 3 days')
        .ask(ask2)
        .answer({ order: 'A-2' })
        .awaitApproval(refund2)
        .approve(refund2)
        .result(refund2, 'refunded')
        .reply('Refunded.')
        .user('Change my address.')
        .assistant(null, ask3)
        .ask(ask3)
        .fail('QUESTION_TIMEOUT')
        .user('Still there?')
        .assistant(null, status4)
        .started(status4)
        .fail('LLM_RUNTIME_ERROR')
        .user('Cancel A-1.')
        .assistant(null, cancel5)
        .awaitApproval(cancel5)
        .reject(cancel5, null).conversation;

    it('pairs every tool message with a call and every call with a tool message, for every window size', () => {
      const entries = everything({ kind: 'FULL' }).transcript.length;
      const strategies: MemoryStrategy[] = [{ kind: 'FULL' }, { kind: 'NONE' }];
      for (let windowSize = 1; windowSize <= entries + 1; windowSize++) strategies.push({ kind: 'WINDOW', windowSize });
      for (const memory of strategies) {
        const messages = buildMessages(everything(memory));
        expect({ memory, violations: pairingViolations(messages) }).toEqual({ memory, violations: [] });
        expect(messages.at(-1)).toEqual({ role: 'tool', toolCallId: 'cancel-5', content: expect.any(String) });
      }
    });
  });
});
