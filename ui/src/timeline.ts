/**
 * A conversation's timeline built from its stored events (and the live text deltas between
 * them): one item per message, model call, tool call, question, failure or status change, in the
 * order they first appear. Items are updated in place as later events complete them.
 */
export interface StoredEvent {
  revision: number;
  position: string;
  type: string;
  data: Record<string, unknown>;
  createdAt: string;
}

export interface Delta {
  turnNo: number;
  callNo: number;
  attempt: number;
  text?: string;
  reasoning?: string;
}

export interface Attempt {
  attempt: number;
  model?: string;
  provider?: string;
  outcome: 'running' | 'ok' | 'failed';
  inputTokens?: number;
  outputTokens?: number;
  cost?: number;
  latencyMs?: number;
  finishReason?: string;
  failure?: string;
  retryAfterMs?: number;
}

export interface Question {
  key: string;
  question: string;
  options?: string[];
  /** Absent means required. */
  required?: boolean;
}

export type Item =
  | {
      kind: 'message';
      id: string;
      role: 'US' | 'AS';
      content: string | null;
      reasoning?: string;
      /** The tools an assistant's message asked for. */
      calls: string[];
      at: string;
    }
  | { kind: 'live'; id: string; text: string; reasoning: string }
  | { kind: 'model'; id: string; turnNo: number; callNo: number; attempts: Attempt[] }
  | {
      kind: 'tool';
      id: string;
      name: string;
      args: string;
      outcome: 'running' | 'ok' | 'failed' | 'awaiting approval' | 'approved' | 'rejected';
      result?: string;
      durationMs?: number;
      code?: string;
      /** How its approval went, for a call that needed one. */
      approval?: 'approved' | 'approved automatically' | 'rejected';
    }
  | { kind: 'question'; id: string; toolCallId: string; questions: Question[]; answers?: Record<string, string> }
  | { kind: 'failure'; id: string; code: string; message: string }
  | { kind: 'marker'; id: string; text: string; at: string };

export class Timeline {
  readonly items: Item[] = [];
  private readonly byId = new Map<string, Item>();
  /** Text streamed so far per model call attempt: the longer of the deltas and the stored chunks. */
  private readonly live = new Map<
    string,
    { deltas: string; chunks: string; deltaReasoning: string; chunkReasoning: string }
  >();
  lastRevision = -1;
  lastPosition: string | null = null;
  /** Killed or terminated: its stream has ended for good. */
  closed = false;
  /** Bumped on every change, so a view knows to render again. */
  version = 0;

  /** Tool calls waiting for approval and the question waiting for answers, derived from the events. */
  pendingApprovals(): Extract<Item, { kind: 'tool' }>[] {
    return this.items.filter(
      (i): i is Extract<Item, { kind: 'tool' }> => i.kind === 'tool' && i.outcome === 'awaiting approval',
    );
  }

  pendingQuestion(): Extract<Item, { kind: 'question' }> | null {
    const last = this.items.findLast((i) => i.kind === 'question');
    return last && last.kind === 'question' && !last.answers ? last : null;
  }

  delta(d: Delta) {
    const key = `${d.turnNo}.${d.callNo}.${d.attempt}`;
    const live = this.liveOf(key);
    live.deltas += d.text ?? '';
    live.deltaReasoning += d.reasoning ?? '';
    this.showLive(key);
  }

  apply(e: StoredEvent) {
    if (e.revision <= this.lastRevision) return;
    this.lastRevision = e.revision;
    this.lastPosition = e.position;
    this.version++;
    const d = e.data;
    const s = (k: string) => d[k] as string;
    const n = (k: string) => d[k] as number;
    const callKey = `${n('turnNo')}.${n('callNo')}`;
    switch (e.type) {
      case 'MessageRecorded':
        this.dropLive();
        this.add({
          kind: 'message',
          id: `m${n('sequence')}`,
          role: s('role') as 'US' | 'AS',
          content: (d.content as string | null) ?? null,
          reasoning: (d.reasoning as string | undefined) || undefined,
          calls: ((d.toolCalls as { name: string }[] | undefined) ?? []).map((c) => c.name),
          at: e.createdAt,
        });
        return;
      case 'ChunksReceived': {
        const key = `${callKey}.${n('attempt')}`;
        const live = this.liveOf(key);
        live.chunks += s('text') ?? '';
        live.chunkReasoning += s('reasoning') ?? '';
        this.showLive(key);
        return;
      }
      case 'ModelCallStarted':
        this.model(callKey, n('turnNo'), n('callNo')).attempts.push({
          attempt: n('attempt'),
          model: s('model'),
          provider: s('provider'),
          outcome: 'running',
        });
        return;
      case 'ModelCallCompleted':
        Object.assign(this.attempt(callKey, e), {
          outcome: 'ok',
          inputTokens: n('inputTokens'),
          outputTokens: n('outputTokens'),
          cost: n('cost'),
          latencyMs: n('latencyMs'),
          finishReason: s('finishReason'),
        });
        return;
      case 'ModelCallFailed':
        Object.assign(this.attempt(callKey, e), { outcome: 'failed', failure: `${s('kind')}: ${s('message')}` });
        return;
      case 'ModelCallRetryScheduled':
        this.attempt(callKey, e).retryAfterMs = n('delayMs');
        return;
      case 'ToolCallStarted':
      case 'ToolCallApprovalRequested': {
        const tool = this.tool(s('toolCallId'), s('name'), s('arguments'));
        tool.outcome = e.type === 'ToolCallStarted' ? 'running' : 'awaiting approval';
        return;
      }
      case 'ToolCallApproved':
        Object.assign(this.tool(s('toolCallId')), {
          outcome: 'approved',
          approval: d.by === 'auto' ? 'approved automatically' : 'approved',
        });
        return;
      case 'ToolCallRejected':
        Object.assign(this.tool(s('toolCallId'), s('name')), {
          outcome: 'rejected',
          approval: 'rejected',
          result: (d.reason as string | null) ?? undefined,
          code: d.code as string | undefined,
        });
        return;
      case 'ToolCallCompleted':
        Object.assign(this.tool(s('toolCallId'), s('name')), {
          outcome: 'ok',
          result: s('output'),
          durationMs: n('durationMs'),
        });
        return;
      case 'ToolCallFailed':
        Object.assign(this.tool(s('toolCallId'), s('name')), {
          outcome: 'failed',
          result: s('message'),
          code: s('code'),
          durationMs: n('durationMs'),
        });
        return;
      case 'QuestionAsked':
        this.add({
          kind: 'question',
          id: `q${s('toolCallId')}`,
          toolCallId: s('toolCallId'),
          questions: d.questions as Question[],
        });
        return;
      case 'AnswersSubmitted': {
        const q = this.byId.get(`q${s('toolCallId')}`);
        if (q?.kind === 'question') q.answers = d.answers as Record<string, string>;
        return;
      }
      case 'ConversationFailed':
        this.dropLive();
        this.add({ kind: 'failure', id: `f${e.revision}`, code: s('code'), message: s('message') ?? '' });
        return;
      case 'TurnStarted':
        this.marker(e, `Turn ${n('turnNo')}`);
        return;
      case 'ConversationStarted':
        this.marker(e, `Started: ${s('agentCode')} / ${s('actionCode')} by ${s('owner')}`);
        return;
      case 'ConversationCompleted':
        this.dropLive();
        this.marker(e, `Turn ${n('turnNo')} completed (${s('finishReason')})`);
        return;
      case 'ConversationPaused':
      case 'ConversationKilled':
      case 'ConversationTerminated':
        this.closed ||= e.type !== 'ConversationPaused';
        this.marker(e, `${e.type.replace('Conversation', '')}${d.reason ? `: ${s('reason')}` : ''}`);
        return;
      case 'ConversationResumed':
      case 'ConversationStuck':
      case 'TurnResumed':
      case 'MemoryCleared':
        this.marker(e, e.type.replace(/([a-z])([A-Z])/g, '$1 $2'));
        return;
      default:
        return;
    }
  }

  private add(item: Item) {
    this.byId.set(item.id, item);
    this.items.push(item);
  }

  private marker(e: StoredEvent, text: string) {
    this.add({ kind: 'marker', id: `e${e.revision}`, text, at: e.createdAt });
  }

  private model(key: string, turnNo: number, callNo: number) {
    let item = this.byId.get(`c${key}`);
    if (!item) this.add((item = { kind: 'model', id: `c${key}`, turnNo, callNo, attempts: [] }));
    return item as Extract<Item, { kind: 'model' }>;
  }

  private attempt(key: string, e: StoredEvent): Attempt {
    const model = this.model(key, e.data.turnNo as number, e.data.callNo as number);
    const n = e.data.attempt as number;
    let attempt = model.attempts.find((a) => a.attempt === n);
    if (!attempt) model.attempts.push((attempt = { attempt: n, outcome: 'running' }));
    return attempt;
  }

  private tool(id: string, name = '', args = ''): Extract<Item, { kind: 'tool' }> {
    let item = this.byId.get(`t${id}`);
    if (!item) this.add((item = { kind: 'tool', id: `t${id}`, name, args, outcome: 'running' }));
    const tool = item as Extract<Item, { kind: 'tool' }>;
    if (!tool.args && args) tool.args = args;
    return tool;
  }

  private liveOf(key: string) {
    let live = this.live.get(key);
    if (!live) this.live.set(key, (live = { deltas: '', chunks: '', deltaReasoning: '', chunkReasoning: '' }));
    return live;
  }

  /** One streaming item, at the end, with the text of the attempt being streamed. */
  private showLive(key: string) {
    const live = this.liveOf(key);
    const longer = (a: string, b: string) => (a.length > b.length ? a : b);
    const text = longer(live.deltas, live.chunks);
    const reasoning = longer(live.deltaReasoning, live.chunkReasoning);
    const shown = this.items.find((i) => i.kind === 'live');
    if (shown) Object.assign(shown, { text, reasoning });
    else this.add({ kind: 'live', id: `live${this.version}`, text, reasoning });
    this.version++;
  }

  private dropLive() {
    this.live.clear();
    const index = this.items.findIndex((i) => i.kind === 'live');
    if (index >= 0) this.byId.delete(this.items.splice(index, 1)[0].id);
    this.version++;
  }
}
