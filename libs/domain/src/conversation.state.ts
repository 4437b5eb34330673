import type { ConversationSnapshot, FinishReason, ToolDefinition, TurnFailureCode } from '@parley/core';
import type {
  Attachment,
  MessageRole,
  Question,
  RagSource,
  RecalledMemory,
  ToolCallRef,
  Usage,
} from './conversation.events';
import type { ResumableStatus, Status } from './conversation.status';
import type { ToolRepository } from './tool-repositories';

/** One entry of the transcript the model sees (and the messages read model shows). */
export interface TranscriptEntry {
  sequence: number;
  role: MessageRole;
  content: string | null;
  turnNo: number;
  toolCalls?: ToolCallRef[];
  toolCallId?: string;
  attachments?: Attachment[];
  /** The document chunks an assistant's answer drew on (ContextRetrieved). */
  ragSources?: RagSource[];
  /** An assistant's answer parsed and valid against the action's output schema (OutputValidated). */
  output?: unknown;
}

/** Where a tool call of the current turn stands. */
export type ToolCallStatus =
  | 'requested'
  | 'awaiting_approval'
  | 'approved'
  | 'started'
  | 'completed'
  | 'failed'
  | 'rejected'
  | 'asked'
  | 'answered'
  | 'invoked';

/** A remote tool's invocation the turn waits for (RemoteToolInvoked). */
export interface RemoteCall {
  correlationId: string;
  subject: string;
  deadline: string;
  invokedAt: string;
}

export interface TurnToolCall extends ToolCallRef {
  status: ToolCallStatus;
  /** Set once the call was published to a remote tool. */
  remote?: RemoteCall;
  /** While it awaits approval: when it is rejected as timed out (tool_approval_timeout_ms). */
  approvalExpiresAt?: string;
}

export interface PendingQuestion {
  toolCallId: string;
  sequence: number;
  questions: Question[];
  expiresAt: string;
}

/** What the current (or last) turn has done so far: the worker resumes from here. */
export interface TurnProgress {
  no: number;
  /**
   * How many times the turn was started or resumed (TurnStarted, then each TurnResumed). Each
   * run has a job of its own; a job of an earlier run is stale.
   */
  runs: number;
  /** Model calls that completed in this turn (the tool-round counter is derived from it). */
  modelCalls: number;
  /** A model call started but not completed (a crashed worker makes it again). */
  openModelCall: { callNo: number; attempt: number } | null;
  toolCalls: TurnToolCall[];
  consecutiveToolFailures: number;
  /** The tool of this turn whose output was cut at maxToolOutputBytes, if one was (absent: none). */
  overflowedTool?: string;
  usage: { inputTokens: number; outputTokens: number };
  startedAt: string;
  lastReply: string | null;
  lastFinishReason: FinishReason | null;
  responseModel: string | null;
  /** A tool with skipResponse/returnDirect ended the round: the turn ends without another model call. */
  endedByTool: { reply: string | null } | null;
  /** The turn's automatic recall (MemoriesRecalled, auto): the facts its model calls are given. Absent: not made. */
  recalled?: RecalledMemory[];
  /** What retrieval put into this turn's prompt (ContextRetrieved); absent until it ran, or when the action has no collections. */
  context?: TurnContextBlock;
  /** Replies of this turn that did not match the output schema (OutputValidated, invalid); absent: none. */
  outputRepairs?: number;
}

/** The turn's context block: its text as sent (null: nothing kept) and the chunks it holds. */
export interface TurnContextBlock {
  text: string | null;
  sources: RagSource[];
}

/** What the model remembers of the transcript (absent: everything, as before memory could be cleared). */
export interface ConversationMemory {
  /** The prompt leaves out every entry up to this sequence (MemoryCleared); 0: none left out. */
  clearedThrough: number;
  /** The latest summary (MemorySummarized): it stands for the entries through `throughSequence`. */
  summary: { text: string; fromSequence: number; throughSequence: number } | null;
}

export interface ConversationData {
  id: string;
  owner: string;
  /** The end user long-term memory's user scope is kept under: `metadata.userId` when a string. */
  userId?: string;
  agentCode: string;
  actionCode: string;
  snapshot: ConversationSnapshot;
  transcript: TranscriptEntry[];
  /** Tools disclosed during the conversation (progressive disclosure), on top of the snapshot's. */
  disclosedTools: ToolDefinition[];
  /** Conversation-level tool repositories (seed 002), in the order they were added. */
  toolRepositories: ToolRepository[];
  turn: TurnProgress | null;
  /** Cleared and summarised memory; absent in states folded before it existed. */
  memory?: ConversationMemory;
  /** Set while the model's AskUserQuestion waits for answers. */
  pendingQuestion: PendingQuestion | null;
  usage: Usage;
  finishReason: FinishReason | null;
  responseModel: string | null;
  error: { code: TurnFailureCode; message: string; details?: Record<string, unknown> } | null;
  /** Idempotency: command id -> hash of the command body it came with. */
  commands: Record<string, string>;
  createdAt: string;
  updatedAt: string;
}

type With<S extends Status, X = object> = { status: S } & ConversationData & X;

/** The conversation as a discriminated union on its status; `none` is a stream that does not exist. */
export type ConversationState =
  | { status: 'none' }
  | With<'NS'>
  | With<'RU'>
  | With<'CO'>
  | With<'FA'>
  | With<'WA'>
  | With<'PA', { pausedFrom: ResumableStatus }>
  | With<'ST'>
  | With<'TE'>
  | With<'KI'>;

export type ExistingConversation = Exclude<ConversationState, { status: 'none' }>;

export const initialState = (): ConversationState => ({ status: 'none' });

/**
 * Every tool the model may call now: the snapshot's, the disclosed ones and the repositories'.
 * An exclusive repository narrows the offer to the exclusive repositories' tools, plus
 * AskUserQuestion so the model can still ask for what those tools need.
 */
export function availableTools(c: ConversationData): ToolDefinition[] {
  const exclusive = c.toolRepositories.filter((r) => r.options.exclusive);
  if (exclusive.length > 0) {
    const ask = c.snapshot.tools.filter((t) => t.kind === 'ask_user_question');
    return [...exclusive.flatMap((r) => r.tools), ...ask];
  }
  return [...c.snapshot.tools, ...c.disclosedTools, ...c.toolRepositories.flatMap((r) => r.tools)];
}

export const pendingApprovals = (c: ConversationData): TurnToolCall[] =>
  c.turn?.toolCalls.filter((t) => t.status === 'awaiting_approval') ?? [];

export const NO_MEMORY_CUT: ConversationMemory = { clearedThrough: 0, summary: null };

/**
 * The transcript as the model remembers it before the memory strategy applies: nothing up to a
 * clear, and nothing a summary stands for (the summary itself is returned beside it).
 */
export function rememberedTranscript(c: ConversationData): {
  summary: ConversationMemory['summary'];
  entries: TranscriptEntry[];
} {
  const memory = c.memory ?? NO_MEMORY_CUT;
  const summary = memory.summary && memory.summary.throughSequence > memory.clearedThrough ? memory.summary : null;
  const from = Math.max(memory.clearedThrough, summary?.throughSequence ?? 0);
  return { summary, entries: c.transcript.filter((m) => m.sequence > from) };
}
