import type { FinishReason, ToolErrorCode, ToolOutcome, TurnFailureCode } from '@parley/core';
import type { CommandMeta } from './conversation.commands';
import type {
  AdvisorApplied,
  ContextRetrieved,
  MemoriesRecalled,
  MemoryRemembered,
  OutputProblem,
  ToolCallRef,
} from './conversation.events';

/**
 * The system commands: what the turn worker and the timers tell the decider after the I/O it
 * asked for (a model call, a tool run, a timer firing). The decider turns each into events, so
 * the turn's rules (limits, the two-failures rule, completion, expiry, stuck) live in one place
 * and the worker only performs I/O.
 */
type System<T extends string, D> = { readonly type: T; readonly data: Readonly<D>; readonly meta: CommandMeta };

/** An attempt of a model call begins. */
export type StartModelAttempt = System<'StartModelAttempt', { callNo: number; attempt: number }>;

/** A batch of streamed deltas of an attempt. */
export type RecordChunks = System<
  'RecordChunks',
  { callNo: number; attempt: number; text: string; reasoning: string; count: number }
>;

export interface ModelAttemptError {
  kind: string;
  message: string;
  status?: number;
  retryable: boolean;
}

/** An attempt failed; `retryInMs` is set when another attempt follows after that wait. */
export type RecordModelAttemptFailed = System<
  'RecordModelAttemptFailed',
  { callNo: number; attempt: number; error: ModelAttemptError; retryInMs: number | null }
>;

/** What the model answered, as the LLM adapter assembled it from the stream. */
export interface ModelReply {
  text: string;
  reasoning: string;
  toolCalls: ToolCallRef[];
  finishReason: FinishReason;
  responseModel: string | null;
  usage: { inputTokens: number; outputTokens: number; estimated: boolean };
  latencyMs: number;
}

/**
 * The worker's check of a final reply against the action's output schema (ajv): the parsed
 * output, or the problems found (not JSON is one problem at the root).
 */
export type OutputCheck = { valid: true; output: unknown } | { valid: false; errors: OutputProblem[] };

export type RecordModelReply = System<
  'RecordModelReply',
  { callNo: number; attempt: number; reply: ModelReply; outputCheck?: OutputCheck }
>;

/** An advisor changed the model call (see AdvisorApplied); the turn stamps its number. */
export type RecordAdvisorApplied = System<'RecordAdvisorApplied', Omit<AdvisorApplied['data'], 'turnNo'>>;

/** Every attempt of the model call failed (or its time ran out). */
export type GiveUpModelCall = System<'GiveUpModelCall', { message: string }>;

/**
 * What the turn did cannot be stored however often it is tried (an event over the size limit):
 * the turn fails now rather than as a job retried with a new paid model call each time.
 */
export type AbandonTurn = System<
  'AbandonTurn',
  { code: TurnFailureCode; message: string; details?: Record<string, unknown> }
>;

/** The request of the next model call is built: its prompt must fit the turn's prompt budget. */
export type CheckPrompt = System<'CheckPrompt', { promptTokens: number }>;

/** The model summarised the older part of the memory (SummaryPlan). */
export type RecordMemorySummary = System<
  'RecordMemorySummary',
  {
    fromSequence: number;
    throughSequence: number;
    summary: string;
    responseModel: string | null;
    usage: { inputTokens: number; outputTokens: number; estimated: boolean };
    latencyMs: number;
  }
>;

/** The turn's collections were searched and the context block fitted to the prompt (RetrievalPlan). */
export type RecordContextRetrieved = System<'RecordContextRetrieved', Omit<ContextRetrieved['data'], 'turnNo'>>;

/** A tool call that may not run twice goes on record before it runs. */
export type StartToolCall = System<'StartToolCall', { toolCallId: string }>;

export type RecordToolOutcome = System<'RecordToolOutcome', { toolCallId: string; outcome: ToolOutcome }>;

/**
 * A `remember` or `recall` call ran against long-term memory: what was stored or found beside
 * the call's outcome (the text the model reads).
 */
export type RecordMemoryToolOutcome = System<
  'RecordMemoryToolOutcome',
  {
    toolCallId: string;
    outcome: ToolOutcome;
    remembered?: Omit<MemoryRemembered['data'], 'turnNo' | 'toolCallId'>;
    recalled?: Pick<MemoriesRecalled['data'], 'query' | 'hits' | 'embedding'>;
  }
>;

/** The turn's automatic recall before its first model call (RecallPlan). */
export type RecordAutoRecall = System<
  'RecordAutoRecall',
  Pick<MemoriesRecalled['data'], 'query' | 'hits' | 'error' | 'embedding'>
>;

/** A remote tool's invocation was published: the turn waits for its completion until `deadline` (ISO). */
export type RecordRemoteToolInvoked = System<
  'RecordRemoteToolInvoked',
  { toolCallId: string; correlationId: string; subject: string; deadline: string }
>;

/** What a remote tool answered (SkillCompletionEvent): its result (cut to the output limit) or its error. */
export type RemoteToolResult =
  { ok: true; output: string; truncated: boolean } | { ok: false; error: { code: ToolErrorCode; message: string } };

/** A remote tool's completion arrived on the reply subject. */
export type CompleteRemoteTool = System<'CompleteRemoteTool', { correlationId: string; result: RemoteToolResult }>;

/** A remote call's deadline timer fired. */
export type ExpireRemoteTool = System<'ExpireRemoteTool', { toolCallId: string }>;

/** A call's approval timer fired (tool_approval_timeout_ms). */
export type ExpireApproval = System<'ExpireApproval', { toolCallId: string }>;

/** The question's expiry timer fired. */
export type ExpireQuestion = System<'ExpireQuestion', { toolCallId: string }>;

/** The stuck watchdog looks at a running turn. */
export type MarkStuck = System<'MarkStuck', { turnNo: number; stuckAfterMs: number }>;

export type SystemCommand =
  | StartModelAttempt
  | RecordChunks
  | RecordModelAttemptFailed
  | RecordModelReply
  | RecordAdvisorApplied
  | GiveUpModelCall
  | AbandonTurn
  | CheckPrompt
  | RecordMemorySummary
  | RecordContextRetrieved
  | StartToolCall
  | RecordToolOutcome
  | RecordMemoryToolOutcome
  | RecordAutoRecall
  | RecordRemoteToolInvoked
  | CompleteRemoteTool
  | ExpireRemoteTool
  | ExpireQuestion
  | ExpireApproval
  | MarkStuck;

/** A system command as its sender writes it: the meta (time, actor) is stamped when it is decided. */
export type Unstamped<C> = C extends unknown ? Omit<C, 'meta'> : never;
