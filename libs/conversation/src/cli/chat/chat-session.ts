import type { Question } from '@parley/domain';
import {
  HttpTransport,
  ParleyError,
  type ParleyClient,
  type StreamFrame,
  type TurnReply,
  type TurnResult,
} from '@parley/client';

/** A turn-running command's answer as the session reads it: a turn still going on is `accepted`. */
type TurnAnswer = TurnReply & { accepted?: boolean };

const NO_USAGE = { inputTokens: 0, outputTokens: 0, estimatedCost: 0 };
const answerOf = (result: TurnResult): TurnAnswer =>
  result.done ? result : { ...result, reply: null, usage: NO_USAGE, accepted: true };

/** The terminal, as the session sees it: text out, one line in (null: input ended). */
export interface ChatIO {
  write(text: string): void;
  ask(prompt: string): Promise<string | null>;
}

export interface ChatOptions {
  agent?: string;
  action?: string;
}

interface CatalogRow {
  code: string;
  description?: string | null;
}

/** Events that settle a turn: the command's answer is printed once the stream has shown one. */
const SETTLING = new Set([
  'ConversationCompleted',
  'ConversationFailed',
  'QuestionAsked',
  'ToolCallApprovalRequested',
  'ConversationKilled',
  'ConversationPaused',
  'ConversationStuck',
]);
const RESULT_CHARS = 300;
const CATCH_UP_MS = 3_000;

/**
 * `parley chat`: one conversation at a time against a running Parley. The replies stream from
 * the conversation's SSE stream (live deltas, then the stored chunks for whatever the deltas
 * missed); tool calls show with their results; questions and approvals are asked inline; each
 * turn ends with its cost. `interrupt()` (Ctrl-C) kills a running turn, and ends the chat when
 * no turn runs or a kill is already under way.
 */
export class ChatSession {
  private conversationId = '';
  private agent = '';
  private action = '';
  private stream: AbortController | null = null;
  /** Per model call attempt (`turn:call:attempt`): how much of its text is on the screen. */
  private readonly shown = new Map<string, { printed: number; live: string; stored: string; started: boolean }>();
  private atLineStart = true;
  private settled = 0;
  private readonly settleWaiters = new Set<() => void>();
  private turnRunning = false;
  private killing = false;
  private ended = false;
  private endChat: (() => void) | null = null;
  /** The last turn ended in a kill: the conversation is closed, the next message needs a new one. */
  private killedConversation = false;
  /** Whether the stream showed any of this turn's text (else the answer's `reply` is printed). */
  private printedThisTurn = false;
  /** A 202's turn: called with the event that settles it. */
  private onSettle: ((frame: StreamFrame) => void) | null = null;
  private lastSettle: StreamFrame | null = null;
  /** The turn's usage as its ModelCallCompleted events add up (for a turn followed on the stream). */
  private turnUsage = { inputTokens: 0, outputTokens: 0, estimatedCost: 0 };

  constructor(
    private readonly client: ParleyClient,
    private readonly io: ChatIO,
    private readonly options: ChatOptions = {},
  ) {}

  /** Runs until the input ends, `/quit`, or a Ctrl-C with no turn running. */
  async run(): Promise<void> {
    const transport = this.client.transport;
    // The agents' list is a route of the HTTP API only; elsewhere the code is asked for.
    const agents = () =>
      transport instanceof HttpTransport ? transport.get<CatalogRow[]>(`/api/v1/catalog/agents`) : null;
    this.agent = this.options.agent ?? (await this.pick('agent', agents));
    if (this.ended) return;
    this.action =
      this.options.action ??
      (await this.pick('action', async () => (await this.client.queries.getAllActions({})) as CatalogRow[]));
    if (this.ended) return;
    await this.startConversation();
    this.line('Type a message. Ctrl-C stops a running turn; Ctrl-C at the prompt, /quit or end of input leaves.');
    const ended = new Promise<null>((resolve) => (this.endChat = () => resolve(null)));
    try {
      while (!this.ended) {
        const text = await Promise.race([this.io.ask('you> '), ended]);
        if (text === null || text.trim() === '/quit') break;
        if (!text.trim()) continue;
        const id = this.conversationId;
        await this.turn(async () => answerOf(await this.client.conversations.send(id, { content: text })));
        if (this.killedConversation) await this.startConversation();
      }
    } finally {
      this.stream?.abort();
    }
  }

  /** Ctrl-C. */
  interrupt(): void {
    if (this.turnRunning && !this.killing) {
      this.killing = true;
      this.line('^C: killing the turn… (Ctrl-C again to leave)');
      void this.client.conversations
        .kill(this.conversationId, 'Ctrl-C in parley chat')
        .catch((err: unknown) => this.line(`could not kill the turn: ${(err as Error).message}`));
      return;
    }
    this.ended = true;
    this.stream?.abort();
    this.endChat?.();
  }

  get isEnded(): boolean {
    return this.ended;
  }

  private async pick(kind: 'agent' | 'action', list: () => Promise<CatalogRow[]> | null): Promise<string> {
    const rows = await Promise.resolve(list()).catch((err: unknown) => {
      if (err instanceof ParleyError && [403, 404].includes(err.status)) return null;
      throw err;
    });
    if (!rows || rows.length === 0) {
      const code = await this.io.ask(`${kind} code: `);
      if (code === null) this.ended = true;
      return code?.trim() ?? '';
    }
    this.line(`${kind === 'agent' ? 'Agents' : 'Actions'}:`);
    rows.forEach((row, i) => this.line(`  ${i + 1}) ${row.code}${row.description ? ` — ${row.description}` : ''}`));
    for (;;) {
      const answer = await this.io.ask(`${kind} [1-${rows.length} or a code]: `);
      if (answer === null) {
        this.ended = true;
        return '';
      }
      const chosen = choose(
        answer,
        rows.map((r) => r.code),
      );
      if (chosen) return chosen;
      this.line(`Choose a number from 1 to ${rows.length}, or type a code.`);
    }
  }

  private async startConversation(): Promise<void> {
    this.stream?.abort();
    this.killedConversation = false;
    const started = await this.client.conversations.start({ agentCode: this.agent, actionCode: this.action });
    this.conversationId = started.conversationId;
    this.line(`Conversation ${this.conversationId} (agent ${this.agent}, action ${this.action}).`);
    const stream = new AbortController();
    this.stream = stream;
    void this.follow(this.conversationId, stream.signal).catch((err: unknown) => {
      if (!stream.signal.aborted) this.line(`(the live stream stopped: ${(err as Error).message})`);
    });
  }

  /** The conversation's stream (events and live deltas) until `signal` aborts it or the conversation closes. */
  private async follow(conversationId: string, signal: AbortSignal): Promise<void> {
    for await (const frame of this.client.conversations.stream(conversationId, { signal })) this.onFrame(frame);
  }

  /** One turn, from the command that starts it through every question and approval to its end. */
  private async turn(command: () => Promise<TurnAnswer>): Promise<void> {
    this.turnRunning = true;
    this.killing = false;
    try {
      let next: (() => Promise<TurnAnswer>) | null = command;
      while (next && !this.ended) {
        const mark = this.settled;
        let answer = await next().catch((err: unknown) => {
          this.line(`error: ${(err as Error).message}`);
          return null;
        });
        if (!answer) return;
        if (answer.accepted) answer = await this.followOnStream(answer, mark);
        await this.settledAfter(mark);
        next = await this.outcome(answer);
      }
    } finally {
      this.turnRunning = false;
    }
  }

  /** What the answer calls for: nothing more (the turn ended), or the command that goes on. */
  private async outcome(answer: TurnAnswer): Promise<(() => Promise<TurnAnswer>) | null> {
    const id = this.conversationId;
    if (answer.status === 'WA' && answer.pendingQuestion) {
      const answers = await this.askQuestions(answer.pendingQuestion.questions);
      if (!answers) return null;
      return async () => answerOf(await this.client.conversations.answer(id, answers));
    }
    if (answer.status === 'WA' && answer.pendingApprovals?.length) {
      const [first] = answer.pendingApprovals;
      this.line(`The model wants to run ${first.name} ${first.arguments}`);
      const yes = await this.askYesNo('Allow it? [y/n] ');
      if (yes === null) return null;
      const decision = yes ? 'approve' : 'reject';
      return async () =>
        answerOf(
          await this.client.conversations[decision](
            id,
            first.toolCallId,
            yes ? {} : { reason: 'rejected in parley chat' },
          ),
        );
    }
    this.endLine();
    if (answer.status === 'CO' && answer.reply && !this.printedThisTurn) this.line(answer.reply);
    if (answer.status === 'FA')
      this.line(`The turn failed: ${answer.error?.code ?? 'FA'}: ${answer.error?.message ?? 'no reason given'}`);
    if (answer.status === 'KI') {
      this.line('The turn was killed; a new conversation starts.');
      this.killedConversation = true;
    }
    if (answer.status === 'PA' || answer.status === 'ST') this.line(`The conversation is ${answer.status}.`);
    const u = answer.usage;
    if (u) this.line(`[cost $${u.estimatedCost.toFixed(6)} · ${u.inputTokens} in / ${u.outputTokens} out tokens]`);
    this.printedThisTurn = false;
    return null;
  }

  private async askQuestions(questions: readonly Question[]): Promise<Record<string, string> | null> {
    const answers: Record<string, string> = {};
    for (const q of questions) {
      this.endLine();
      this.line(`? ${q.question}`);
      q.options?.forEach((option, i) => this.line(`  ${i + 1}) ${option}`));
      for (;;) {
        const hint = q.options?.length ? ` [1-${q.options.length} or your own answer]` : '';
        const text = await this.io.ask(`answer${hint}: `);
        if (text === null) return null;
        const value = q.options?.length ? (choose(text, q.options) ?? text.trim()) : text.trim();
        if (value) {
          answers[q.key] = value;
          break;
        }
        if (q.required === false) break;
        this.line('An answer is needed.');
      }
    }
    return answers;
  }

  private async askYesNo(prompt: string): Promise<boolean | null> {
    for (;;) {
      const text = await this.io.ask(prompt);
      if (text === null) return null;
      if (/^y(es)?$/i.test(text.trim())) return true;
      if (/^no?$/i.test(text.trim())) return false;
    }
  }

  /** A 202: the turn outlived the wait; its end is read from the stream. */
  private async followOnStream(accepted: TurnAnswer, mark: number): Promise<TurnAnswer> {
    const settled =
      this.settled > mark && this.lastSettle
        ? this.lastSettle
        : await new Promise<StreamFrame>((resolve) => {
            this.onSettle = resolve;
          });
    this.onSettle = null;
    // Said once the text is out, not in the middle of it.
    this.line('(the turn outlived the wait: followed on the stream)');
    const data = (settled.data as { data?: Record<string, unknown> }).data ?? {};
    const base = { ...accepted, reply: null, usage: this.turnUsage };
    switch (settled.event) {
      case 'ConversationCompleted':
        return { ...base, status: 'CO', reply: (data.reply as string | null) ?? null };
      case 'ConversationFailed':
        return { ...base, status: 'FA', error: { code: String(data.code), message: String(data.message) } };
      case 'QuestionAsked':
        return {
          ...base,
          status: 'WA',
          pendingQuestion: data as unknown as NonNullable<TurnAnswer['pendingQuestion']>,
        };
      case 'ToolCallApprovalRequested':
        return {
          ...base,
          status: 'WA',
          pendingApprovals: [
            { toolCallId: String(data.toolCallId), name: String(data.name), arguments: String(data.arguments) },
          ],
        };
      case 'ConversationKilled':
        return { ...base, status: 'KI' };
      default:
        return { ...base, status: 'PA' };
    }
  }

  /** Until the stream has shown a settling event past `mark` (bounded: the answer is printed anyway). */
  private async settledAfter(mark: number): Promise<void> {
    if (this.settled > mark) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.settleWaiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, CATCH_UP_MS);
      this.settleWaiters.add(done);
    });
  }

  private onFrame(frame: StreamFrame): void {
    if (frame.event === 'delta') {
      const d = frame.data as { turnNo: number; callNo: number; attempt: number; text?: string };
      if (d.text) this.showText(`${d.turnNo}:${d.callNo}:${d.attempt}`, 'live', d.text);
      return;
    }
    const data = ((frame.data as { data?: unknown }).data ?? {}) as Record<string, unknown>;
    switch (frame.event) {
      case 'TurnStarted':
        this.turnUsage = { inputTokens: 0, outputTokens: 0, estimatedCost: 0 };
        break;
      case 'ChunksReceived':
        if (data.text) this.showText(`${data.turnNo}:${data.callNo}:${data.attempt}`, 'stored', String(data.text));
        break;
      case 'ModelCallStarted':
        this.showText(`${data.turnNo}:${data.callNo}:${data.attempt}`, 'started');
        break;
      case 'ModelCallCompleted':
        this.turnUsage.inputTokens += Number(data.inputTokens) || 0;
        this.turnUsage.outputTokens += Number(data.outputTokens) || 0;
        this.turnUsage.estimatedCost += Number(data.cost) || 0;
        break;
      case 'ModelCallRetryScheduled':
        this.line(`(the model call failed; retrying in ${String(data.delayMs)} ms)`);
        break;
      case 'ToolCallStarted':
        this.line(`[tool] ${String(data.name)} ${String(data.arguments)}`);
        break;
      case 'ToolCallCompleted':
        this.line(`[result] ${clip(String(data.output))}`);
        break;
      case 'ToolCallFailed':
        this.line(`[tool failed] ${String(data.name)}: ${String(data.code)}: ${String(data.message)}`);
        break;
      case 'ToolCallRejected':
        this.line(`[rejected] ${String(data.name)}`);
        break;
      case 'AnswersSubmitted':
        this.line(`[answers] ${JSON.stringify(data.answers)}`);
        break;
    }
    if (SETTLING.has(frame.event)) {
      this.settled += 1;
      this.lastSettle = frame;
      for (const wake of [...this.settleWaiters]) wake();
      this.onSettle?.(frame);
    }
  }

  /**
   * Text of one model call attempt, from the live deltas or the stored chunks, whichever is ahead:
   * both are the same text, so only what is past the screen's end is written. Nothing shows before
   * the stream has shown the call's ModelCallStarted: the tool calls of the call before it are
   * stored with it (idempotent tools run in the same append), and their lines come first.
   */
  private showText(call: string, source: 'live' | 'stored' | 'started', text = ''): void {
    let seen = this.shown.get(call);
    if (!seen) {
      if (this.shown.size >= 64) this.shown.delete(this.shown.keys().next().value!);
      seen = { printed: 0, live: '', stored: '', started: false };
      this.shown.set(call, seen);
    }
    if (source === 'started') seen.started = true;
    else seen[source] += text;
    if (!seen.started) return;
    const full = seen.live.length >= seen.stored.length ? seen.live : seen.stored;
    if (full.length <= seen.printed) return;
    if (seen.printed === 0) this.endLine();
    if (seen.printed === 0) this.io.write('parley> ');
    this.write(full.slice(seen.printed));
    seen.printed = full.length;
    this.printedThisTurn = true;
  }

  private write(text: string): void {
    if (!text) return;
    this.io.write(text);
    this.atLineStart = text.endsWith('\n');
  }

  private endLine(): void {
    if (!this.atLineStart) this.write('\n');
  }

  private line(text: string): void {
    this.endLine();
    this.write(`${text}\n`);
  }
}

/** `2` picks the second choice, a code picks itself (any case); null: neither. */
export function choose(answer: string, choices: readonly string[]): string | null {
  const text = answer.trim();
  if (/^\d+$/.test(text)) return choices[Number(text) - 1] ?? null;
  return choices.find((c) => c.toLowerCase() === text.toLowerCase()) ?? null;
}

const clip = (text: string) => (text.length > RESULT_CHARS ? `${text.slice(0, RESULT_CHARS)}…` : text);
