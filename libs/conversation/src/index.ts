export type * from './api/replies';
export { turnReplyBody } from './api/replies';
export {
  defineOperation,
  handlersOf,
  type Operation,
  type OperationSpec,
  type OperationContext,
  type HttpRoute,
} from './api/operation';
export { commandReply, ragSource, turnReply } from './api/reply-schemas';
export { COMMANDS, COMMAND_HANDLERS } from './commands/command-table';
export {
  deleteMemoriesQuery,
  listMemoriesQuery,
  memoryOwnerOf,
  memoryRef,
  memorySubjectOf,
  memoryView,
  type ListMemoriesQuery,
  type MemoryRef,
} from './commands/memories/memories.handler';
export { sendMessageInput } from './commands/send-message/send-message.handler';
export { startConversationInput } from './commands/start-conversation/start-conversation.handler';
export { ConversationModule } from './conversation.module';
export { ConversationRepository, toEnvelope, type Appended } from './repository/conversation.repository';
export { ConversationSignals } from './repository/conversation-signals';
export { TurnScheduler } from './commands/turn-scheduler';
export { SNAPSHOT_SOURCE, type SnapshotSource } from './commands/snapshot-source';
export { TURN_QUEUE, TIMER_QUEUE, type TurnJob, type TimerJob } from './turn-jobs';
export { connection as parleyConnection, registerChatCommand } from './cli/chat/chat.command';
