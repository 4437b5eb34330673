/**
 * The conversation domain: events, commands, state, the status machine, and the decider —
 * `decide` for client and system commands, `evolve`, and `nextTurnStep` for a running turn. Pure
 * and synchronous; it imports nothing but @parley/core, so deciding loads no infrastructure.
 */
export type * from './conversation.events';
export type * from './conversation.commands';
export type * from './event-envelope';
export type * from './turn.commands';
export { CONVERSATION_CATEGORY, streamIdOf, conversationIdOf } from './conversation.events';
export {
  type ConversationState,
  type ExistingConversation,
  type TranscriptEntry,
  type ConversationMemory,
  rememberedTranscript,
  initialState,
  availableTools,
  pendingApprovals,
} from './conversation.state';
export { type Status, type ResumableStatus, statusAfter, endsTurn, TURN_ENDING_EVENTS } from './conversation.status';
export { decide } from './conversation.decide';
export { evolve, fold, seenCommand } from './conversation.evolve';
export { conversationDecider } from './conversation.decider';
export { nextTurnStep, isRunningTurn, type TurnStep, type ModelCallPlan } from './turn.step';
export { nextSequence, costOf, replyOf, turnDeadline, promptBudget } from './turn.rules';
export { transcriptEntryOf } from './transcript';
export { CONVERSATION_EVENT_SCHEMAS, knowsType, upcast, type EventSchemas, type StoredEvent } from './upcast';
export { summaryPlan, estimateTokens, type SummaryPlan, type TokenCounter } from './memory';
export {
  memoryRequestOf,
  recallPlan,
  scopesOf,
  MAX_MEMORY_TEXT,
  DEFAULT_IMPORTANCE,
  DEFAULT_RECALL_LIMIT,
  MAX_RECALL_LIMIT,
  type MemoryScopes,
  type MemoryRequest,
  type RememberRequest,
  type RecallRequest,
  type RecallPlan,
} from './long-term-memory';
export { retrievalPlan, type RetrievalPlan } from './retrieval';
export { checkedCompletion, repairPrompt, MAX_OUTPUT_REPAIRS } from './structured-output';
