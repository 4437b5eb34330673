import type {
  ConversationSnapshot,
  FinishReason,
  MemoryScope,
  ToolDefinition,
  ToolErrorCode,
  TurnFailureCode,
} from '@parley/core';
import type { ToolRepository } from './tool-repositories';

/**
 * The events of one conversation stream (`conversation-<uuid>`). Readonly data, past tense,
 * routed by `type`. Events that add an entry to the transcript carry its `sequence`.
 */

/** SY: a system message of the turn (the repair prompt of structured output, OutputValidated). */
export type MessageRole = 'SY' | 'US' | 'AS' | 'TO' | 'QU';

export interface ToolCallRef {
  /** Unique within the conversation: the model's own id unless that one was taken already. */
  id: string;
  /** The id the model gave the call, when `id` had to differ from it: sent back to the provider. */
  providerId?: string;
  name: string;
  /** The raw JSON text the model produced. */
  arguments: string;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  estimatedCost: number;
}

export interface Attachment {
  mediaType: string;
  url: string;
}

export interface Question {
  key: string;
  question: string;
  options?: string[];
  required?: boolean;
}

type Event<T extends string, D> = { readonly type: T; readonly data: Readonly<D> };

export type ConversationStarted = Event<
  'ConversationStarted',
  {
    conversationId: string;
    agentCode: string;
    actionCode: string;
    /** The subject that started it: the owner (seed 001). */
    owner: string;
    metadata: Record<string, unknown>;
    snapshot: ConversationSnapshot;
  }
>;
export type MessageRecorded = Event<
  'MessageRecorded',
  {
    sequence: number;
    role: 'US' | 'AS';
    content: string | null;
    turnNo: number;
    tokenCount: number;
    toolCalls?: ToolCallRef[];
    reasoning?: string;
    /** The document chunks the turn's context block held: on the reply that ends a turn with retrieval. */
    ragSources?: RagSource[];
  }
>;
export type AttachmentRecorded = Event<
  'AttachmentRecorded',
  { messageSequence: number; attachmentSequence: number } & Attachment
>;
export type TurnStarted = Event<'TurnStarted', { turnNo: number }>;
export type TurnResumed = Event<
  'TurnResumed',
  { turnNo: number; reason: 'answers' | 'approval' | 'resume' | 'recover' | 'remote_tool' }
>;
export type ModelCallStarted = Event<
  'ModelCallStarted',
  { turnNo: number; callNo: number; attempt: number; model: string; provider: string }
>;
export type ChunksReceived = Event<
  'ChunksReceived',
  { turnNo: number; callNo: number; attempt: number; text: string; reasoning: string; count: number }
>;
export type ModelCallCompleted = Event<
  'ModelCallCompleted',
  {
    turnNo: number;
    callNo: number;
    attempt: number;
    finishReason: FinishReason;
    responseModel: string | null;
    inputTokens: number;
    outputTokens: number;
    usageEstimated: boolean;
    cost: number;
    latencyMs: number;
  }
>;
export type ModelCallFailed = Event<
  'ModelCallFailed',
  {
    turnNo: number;
    callNo: number;
    attempt: number;
    kind: string;
    message: string;
    status?: number;
    retryable: boolean;
  }
>;
export type ModelCallRetryScheduled = Event<
  'ModelCallRetryScheduled',
  { turnNo: number; callNo: number; attempt: number; delayMs: number }
>;
export type ToolCallStarted = Event<
  'ToolCallStarted',
  { turnNo: number; toolCallId: string; name: string; arguments: string; kind: ToolDefinition['kind'] }
>;
export type ToolCallCompleted = Event<
  'ToolCallCompleted',
  {
    turnNo: number;
    sequence: number;
    toolCallId: string;
    name: string;
    output: string;
    truncated: boolean;
    durationMs: number;
    returnDirect?: boolean;
    skipResponse?: boolean;
  }
>;
export type ToolCallFailed = Event<
  'ToolCallFailed',
  {
    turnNo: number;
    sequence: number;
    toolCallId: string;
    name: string;
    code: ToolErrorCode;
    message: string;
    durationMs: number;
    /** Never run: past the reply's tool-call cap. Not a failure of the tool, so not counted as one. */
    refused?: true;
  }
>;
export type ToolCallApprovalRequested = Event<
  'ToolCallApprovalRequested',
  {
    turnNo: number;
    toolCallId: string;
    name: string;
    arguments: string;
    /** When the call is rejected as timed out (tool_approval_timeout_ms); absent: it waits for ever. */
    expiresAt?: string;
  }
>;
/** `by: 'auto'`: approved without a human, by the conversation's auto_confirm (seed 001). */
export type ToolCallApproved = Event<'ToolCallApproved', { toolCallId: string; by?: 'auto' }>;
export type ToolCallRejected = Event<
  'ToolCallRejected',
  {
    turnNo: number;
    sequence: number;
    toolCallId: string;
    name: string;
    reason: string | null;
    /** `APPROVAL_TIMEOUT`: nobody approved or rejected it within tool_approval_timeout_ms. */
    code?: 'APPROVAL_TIMEOUT';
  }
>;
export type QuestionAsked = Event<
  'QuestionAsked',
  { turnNo: number; sequence: number; toolCallId: string; questions: Question[]; expiresAt: string }
>;
/**
 * A remote tool's invocation (SkillInvocationEvent) was published on `subject`: the turn waits
 * (WA) for its completion on the reply subject, matched by `correlationId`, until `deadline`.
 */
export type RemoteToolInvoked = Event<
  'RemoteToolInvoked',
  { turnNo: number; toolCallId: string; name: string; correlationId: string; subject: string; deadline: string }
>;
export type AnswersSubmitted = Event<
  'AnswersSubmitted',
  { turnNo: number; sequence: number; toolCallId: string; answers: Record<string, string> }
>;
export type ConversationCompleted = Event<
  'ConversationCompleted',
  {
    turnNo: number;
    finishReason: FinishReason;
    reply: string | null;
    responseModel: string | null;
    /** The reply parsed and valid against the action's output schema (OutputValidated); absent: none. */
    output?: unknown;
  }
>;
/** A problem ajv found in a reply: where (a JSON pointer, '' for the root) and what. */
export interface OutputProblem {
  path: string;
  message: string;
}
/**
 * The turn worker checked the final reply (message `sequence`) against the action's output
 * schema: valid with its parsed `output`, or not with `errors`. Recorded so a replay never
 * validates again. A repair round adds `repair`: the system message (transcript entry
 * `repair.sequence`) that tells the model the errors, so the turn calls it again.
 */
export type OutputValidated = Event<
  'OutputValidated',
  {
    turnNo: number;
    sequence: number;
    valid: boolean;
    output?: unknown;
    errors?: OutputProblem[];
    repair?: { sequence: number; prompt: string };
  }
>;
export type ConversationFailed = Event<
  'ConversationFailed',
  /** `details`: what the code needs said beside the message (BUDGET_EXCEEDED: the budget, cap, spent, reserved). */
  { turnNo: number; code: TurnFailureCode; message: string; details?: Record<string, unknown> }
>;
export type ConversationStuck = Event<'ConversationStuck', { turnNo: number; idleMs: number }>;
export type ConversationTerminated = Event<'ConversationTerminated', { reason: string | null }>;
export type ConversationKilled = Event<'ConversationKilled', { reason: string | null }>;
export type ConversationPaused = Event<'ConversationPaused', { reason: string | null }>;
export type ConversationResumed = Event<'ConversationResumed', Record<string, never>>;
/**
 * The conversation was erased (crypto-shredding): its data key was destroyed, so the content of
 * every event and read model reads as `[erased]` from now on; structure, timing, tokens and cost
 * stay. `by` is the caller; no command is taken after it (CONVERSATION_ERASED).
 */
export type ConversationErased = Event<'ConversationErased', { at: string; by: string }>;
export type SkillDisclosed = Event<'SkillDisclosed', { turnNo: number; skillCode: string; tools: ToolDefinition[] }>;
export type ToolRepositoryAdded = Event<'ToolRepositoryAdded', ToolRepository>;
/** The repository's options and tools, replaced as a whole. */
export type ToolRepositoryChanged = Event<'ToolRepositoryChanged', ToolRepository>;
/** `triggered`: a tool of a triggerOnce repository completed; `triggeredBy` is that tool call's id. */
export type ToolRepositoryRemoved = Event<
  'ToolRepositoryRemoved',
  { repositoryId: string; reason: 'removed' | 'triggered'; triggeredBy?: string }
>;

/**
 * An advisor changed a model call: `phase` before (the request, or a reply given in place of the
 * model, which was then not called) or after (the reply). Recorded so that a replay needs no
 * advisor: the reply is in the MessageRecorded that follows; this says how it came about.
 * `messages`: the request's messages hash (sha-256 of their canonical JSON) before and after,
 * with the indexes of the messages that changed; `replaced`: a reply given without a model call
 * (`refusal`, `cache_hit`); `note`: what the advisor reports (e.g. a cache key, redaction counts).
 */
export type AdvisorApplied = Event<
  'AdvisorApplied',
  {
    turnNo: number;
    callNo: number;
    advisor: string;
    bean: string;
    phase: 'before' | 'after';
    messages?: { before: string; after: string; changed: number[] };
    optionsChanged?: boolean;
    replyChanged?: boolean;
    replaced?: boolean;
    note?: Record<string, unknown>;
  }
>;
/**
 * The conversation's memory was cleared: the model's prompt starts after `throughSequence`. The
 * transcript (and the messages read model) keeps every message; `by` is the caller.
 */
export type MemoryCleared = Event<'MemoryCleared', { throughSequence: number; reason: string | null; by: string }>;
/**
 * The model summarised the transcript from `fromSequence` through `throughSequence` (a previous
 * summary folded in): from then on the prompt holds this summary and the messages after it. The
 * summarisation call's usage and cost count toward the conversation's.
 */
export type MemorySummarized = Event<
  'MemorySummarized',
  {
    turnNo: number;
    fromSequence: number;
    throughSequence: number;
    summary: string;
    model: string;
    responseModel: string | null;
    inputTokens: number;
    outputTokens: number;
    usageEstimated: boolean;
    cost: number;
    latencyMs: number;
  }
>;

/**
 * An embedding call a conversation made (a fact remembered, a recall's query): the embedding
 * model's catalog code, the tokens the provider reported, and their cost at the model's input
 * price. Counted in the usage read model beside the chat calls.
 */
export interface EmbeddingUsage {
  model: string;
  tokens: number;
  cost: number;
}

/**
 * The model's `remember` call stored a fact in long-term memory (or refreshed the same fact of
 * the same scope: `updated`, with the new importance and expiry). `expiresAt` null: never.
 * `embedding`: the call that embedded the fact (absent from events recorded before it was kept).
 */
export type MemoryRemembered = Event<
  'MemoryRemembered',
  {
    turnNo: number;
    toolCallId: string;
    memoryId: string;
    scope: MemoryScope;
    scopeId: string;
    text: string;
    importance: number;
    expiresAt: string | null;
    updated: boolean;
    embedding?: EmbeddingUsage;
  }
>;

/** One fact recall found, with how it ranked (see docs/knowledge.md, Long-term memory). */
export interface RecalledMemory {
  memoryId: string;
  scope: MemoryScope;
  text: string;
  importance: number;
  similarity: number;
  score: number;
}

/**
 * Long-term memory was searched: by the model's `recall` call (`toolCallId`) or before the
 * turn's first model call (`auto`). The hits are what the model was given, so a replay needs no
 * search; `error` says why an automatic recall found nothing (it never fails the turn).
 * `embedding`: the call that embedded the query, when it was made (absent from events recorded
 * before it was kept, and when the recall failed before it).
 */
export type MemoriesRecalled = Event<
  'MemoriesRecalled',
  {
    turnNo: number;
    toolCallId?: string;
    auto: boolean;
    query: string;
    hits: RecalledMemory[];
    error?: string;
    embedding?: EmbeddingUsage;
  }
>;

/** A document chunk an answer drew on (seed 001 `rag_sources`). */
export interface RagSource {
  collection: string;
  documentId: string;
  chunkId: string;
  title: string | null;
  score: number;
}

/** A chunk retrieval put into the turn's context block, as the model saw it. */
export interface RetrievedChunk extends RagSource {
  chunkIndex: number | null;
  text: string;
  tokens: number;
}

/** One collection's search: the embedding call that made the query vector and the search after it. */
export interface CollectionSearched {
  collection: string;
  /** The catalog code of the embedding model; null when the search failed before it was known. */
  model: string | null;
  tokens: number;
  cost: number;
  /** The embedding call's own latency. */
  latencyMs: number;
  /** The vector store's search alone. */
  searchMs: number;
  hits: number;
  /** Why this collection gave nothing: the embedding call or the search failed after its retries. */
  error?: string;
}

/**
 * Before the turn's first model call, the turn's user message was searched for in the action's
 * collections: what was found (`chunks`: kept, best first, with their text), what the prompt
 * budget left out (`dropped`), and the labelled context block exactly as the prompt carries it
 * (`context`, null when nothing was kept). Every later model call of the turn builds its prompt
 * from this event, so a replay or an audit sees what the model saw without searching again.
 * `budget`: the prompt budget (null: none), the prompt's tokens without the block (counted only
 * when there is a budget), the block's.
 */
export type ContextRetrieved = Event<
  'ContextRetrieved',
  {
    turnNo: number;
    query: string;
    searches: CollectionSearched[];
    chunks: RetrievedChunk[];
    /** Sections of the block: the kept chunks with adjacent ones of a document merged. */
    blocks: number;
    dropped: { collection: string; chunkId: string; documentId: string; score: number | null; reason: 'budget' }[];
    context: string | null;
    budget: { promptTokens: number | null; withoutContext: number | null; context: number };
  }
>;

export type ConversationEvent =
  | ConversationStarted
  | MessageRecorded
  | AttachmentRecorded
  | TurnStarted
  | TurnResumed
  | ModelCallStarted
  | ChunksReceived
  | ModelCallCompleted
  | ModelCallFailed
  | ModelCallRetryScheduled
  | ToolCallStarted
  | ToolCallCompleted
  | ToolCallFailed
  | ToolCallApprovalRequested
  | ToolCallApproved
  | ToolCallRejected
  | QuestionAsked
  | RemoteToolInvoked
  | AnswersSubmitted
  | ConversationCompleted
  | OutputValidated
  | ConversationFailed
  | ConversationStuck
  | ConversationTerminated
  | ConversationKilled
  | ConversationPaused
  | ConversationResumed
  | ConversationErased
  | SkillDisclosed
  | ToolRepositoryAdded
  | ToolRepositoryChanged
  | ToolRepositoryRemoved
  | AdvisorApplied
  | MemoryCleared
  | MemorySummarized
  | MemoryRemembered
  | MemoriesRecalled
  | ContextRetrieved;

export type ConversationEventType = ConversationEvent['type'];

export const CONVERSATION_CATEGORY = 'conversation';
export const streamIdOf = (conversationId: string): string => `${CONVERSATION_CATEGORY}-${conversationId}`;
export const conversationIdOf = (streamId: string): string => streamId.slice(CONVERSATION_CATEGORY.length + 1);
