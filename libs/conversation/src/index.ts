export type * from './domain/conversation.events';
export type * from './domain/conversation.commands';
export type * from './domain/event-envelope';
export { CONVERSATION_CATEGORY, streamIdOf, conversationIdOf } from './domain/conversation.events';
export {
  type ConversationState,
  type ConversationData,
  type ExistingConversation,
  type TranscriptEntry,
  type TurnProgress,
  type TurnToolCall,
  type ToolCallStatus,
  type PendingQuestion,
  initialState,
  availableTools,
  pendingApprovals,
} from './domain/conversation.state';
export {
  type Status,
  type ResumableStatus,
  type Lifecycle,
  statusAfter,
  endsTurn,
  TURN_ENDING_EVENTS,
} from './domain/conversation.status';
export { decide } from './domain/conversation.decide';
export { nextSequence } from './domain/turn.rules';
export type * from './domain/turn.commands';
export { nextTurnStep, type TurnStep, type ModelCallPlan } from './domain/turn.step';
export { evolve, fold } from './domain/conversation.evolve';
export { conversationDecider } from './domain/conversation.decider';
export { transcriptEntryOf } from './domain/transcript';
export { repositoryOf, type ToolRepository, type ToolRepositoryOptions } from './domain/tool-repositories';
export type * from './api/replies';
export {
  defineOperation,
  handlersOf,
  type Operation,
  type OperationSpec,
  type OperationContext,
  type HttpRoute,
} from './api/operation';
export { commandReply, turnReply } from './api/reply-schemas';
export { COMMANDS, COMMAND_HANDLERS } from './commands/command-table';
export { sendMessageInput } from './commands/send-message/send-message.handler';
export { startConversationInput } from './commands/start-conversation/start-conversation.handler';
export { ConversationModule } from './conversation.module';
export {
  ConversationRepository,
  toEnvelope,
  type LoadedConversation,
  type Appended,
} from './repository/conversation.repository';
export { ConversationSignals } from './repository/conversation-signals';
export { TurnScheduler } from './commands/turn-scheduler';
export { SNAPSHOT_SOURCE, type SnapshotSource } from './commands/snapshot-source';
export { turnReplyOf, commandReplyOf } from './commands/turn-reply';
export { TURN_QUEUE, TIMER_QUEUE, turnJobId, type TurnJob, type TimerJob } from './turn-jobs';
