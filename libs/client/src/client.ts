import {
  OPERATIONS,
  type CommandInputs,
  type CommandName,
  type CommandReplies,
  type CommandReply,
  type QueryInputs,
  type QueryName,
  type QueryReplies,
  type TurnReply,
} from './operations.generated';
import type { CallOptions, ParleyTransport, StreamFrame, StreamOptions } from './transport';

/**
 * A turn-running command's answer: the TurnReply once the turn ended or paused (`done: true`), or
 * only the command's reply while it goes on (`done: false`: HTTP's 202; follow it with `stream`).
 */
export type TurnResult = (TurnReply & { done: true }) | (CommandReply & { done: false });

type Result<N extends CommandName> = CommandReplies[N] extends TurnReply ? TurnResult : CommandReplies[N];

export interface WaitOptions extends CallOptions {
  /** Wait for the turn's end (default true); false answers at once with `done: false`. */
  wait?: boolean;
  /** How long to wait before answering `done: false` (cut to the server's MAX_WAIT_MS). */
  timeoutMs?: number;
}

/** Every command of the table by name: `client.commands.pauseConversation({conversationId})`. */
export type Commands = { [N in CommandName]: (input: CommandInputs[N], options?: CallOptions) => Promise<Result<N>> };
/** Every query of the table by name: `client.queries.getUsage({groupBy: 'day'})`; null where nothing is found. */
export type Queries = { [N in QueryName]: (input: QueryInputs[N]) => Promise<QueryReplies[N] | null> };

const waitFields = ({ wait, timeoutMs }: WaitOptions) => ({
  ...(wait === undefined ? {} : { wait }),
  ...(timeoutMs === undefined ? {} : { timeoutMs }),
});

/**
 * Parley's typed client: the same surface over HTTP and NATS (the transport). Every call is an
 * operation of Parley's command and query tables, typed from their schemas; a refusal is thrown
 * as a ParleyError carrying Parley's code.
 */
export class ParleyClient {
  readonly commands: Commands;
  readonly queries: Queries;

  constructor(readonly transport: ParleyTransport) {
    const commands: Record<string, unknown> = {};
    const queries: Record<string, unknown> = {};
    for (const [name, op] of Object.entries(OPERATIONS)) {
      if (op.kind === 'command')
        commands[name] = (input: Record<string, unknown>, options?: CallOptions) =>
          this.command(name as CommandName, input as never, options);
      else queries[name] = (input: Record<string, unknown>) => this.query(name as QueryName, input as never);
    }
    this.commands = commands as Commands;
    this.queries = queries as Queries;
  }

  /** A command by name; a turn-running one answers a TurnResult. */
  async command<N extends CommandName>(name: N, input: CommandInputs[N], options?: CallOptions): Promise<Result<N>> {
    const { body, done } = await this.transport.call(name, input as Record<string, unknown>, options);
    return (OPERATIONS[name].startsTurn ? { ...(body as object), done } : body) as Result<N>;
  }

  /** A query by name; null where it finds nothing (HTTP's 404 for a single entity). */
  async query<N extends QueryName>(name: N, input: QueryInputs[N]): Promise<QueryReplies[N] | null> {
    return (await this.transport.call(name, input as Record<string, unknown>)).body as QueryReplies[N] | null;
  }

  /** The conversation commands and its stream, by conversation id. */
  readonly conversations = {
    start: (input: CommandInputs['startConversation'], options?: CallOptions): Promise<CommandReply> =>
      this.command('startConversation', input, options),
    /** Sends a message and runs a turn; waits for its end unless `wait: false`. */
    send: (
      conversationId: string,
      message: Omit<CommandInputs['sendMessage'], 'conversationId' | 'wait' | 'timeoutMs'>,
      options: WaitOptions = {},
    ): Promise<TurnResult> =>
      this.command('sendMessage', { conversationId, ...message, ...waitFields(options) }, options),
    /** Answers the pending question (`{<key>: <answer>}`) and continues the turn. */
    answer: (conversationId: string, answers: Record<string, string>, options: WaitOptions = {}): Promise<TurnResult> =>
      this.command('submitAnswers', { conversationId, answers, ...waitFields(options) }, options),
    approve: (
      conversationId: string,
      toolCallId: string,
      options: WaitOptions & { reason?: string } = {},
    ): Promise<TurnResult> =>
      this.command(
        'approveToolCall',
        { conversationId, toolCallId, ...(options.reason ? { reason: options.reason } : {}), ...waitFields(options) },
        options,
      ),
    reject: (
      conversationId: string,
      toolCallId: string,
      options: WaitOptions & { reason?: string } = {},
    ): Promise<TurnResult> =>
      this.command(
        'rejectToolCall',
        { conversationId, toolCallId, ...(options.reason ? { reason: options.reason } : {}), ...waitFields(options) },
        options,
      ),
    /** Kills the conversation, a running turn included (admins). */
    kill: (conversationId: string, reason?: string, options?: CallOptions): Promise<CommandReply> =>
      this.command('killConversation', { conversationId, ...(reason ? { reason } : {}) }, options),
    terminate: (conversationId: string, reason?: string, options?: CallOptions): Promise<CommandReply> =>
      this.command('terminateConversation', { conversationId, ...(reason ? { reason } : {}) }, options),
    /**
     * The conversation's events (from `after`, exclusive) and live text deltas, as an async
     * iterator; it ends once the conversation is terminated or killed, or `signal` aborts.
     * Resume with `{after: Number(lastFrame.id)}`: no gap, no repeat.
     */
    stream: (conversationId: string, options?: StreamOptions): AsyncIterable<StreamFrame> =>
      this.transport.stream(conversationId, options),
    get: (conversationId: string, minPosition?: string) =>
      this.query('findConversation', { conversationId, ...(minPosition ? { minPosition } : {}) }),
    messages: (conversationId: string, minPosition?: string) =>
      this.query('getConversationMessages', { conversationId, ...(minPosition ? { minPosition } : {}) }),
    events: (conversationId: string, fromRevision = 0, limit?: number) =>
      this.query('getEvents', { conversationId, fromRevision, ...(limit ? { limit } : {}) }),
  };

  close(): Promise<void> {
    return this.transport.close();
  }
}
