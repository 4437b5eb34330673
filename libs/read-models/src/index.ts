export { LIVE_DELTAS, type LiveDeltas } from './live/live-deltas.port';
export { LiveDeltasModule } from './live/live-deltas.module';
export { ReadModelsModule } from './read-models.module';
export { ProjectionsService } from './projections/projections.service';
export { PROJECTIONS } from './projections/projections';
export { rebuildProjections } from './projections/rebuild';
export { ConversationQueries } from './queries/conversation-queries';
export { UsageQueries } from './queries/usage-queries';
export { AuditQueries, eventView } from './queries/audit-queries';
export { openConversationIds } from './queries/open-conversations';
export {
  noInput,
  byCode,
  byName,
  byConversation,
  STATUSES,
  listConversationsQuery,
  countConversationsQuery,
  usageQuery,
  eventsQuery,
  stateQuery,
  verifyQuery,
  feedQuery,
  eventPosition,
} from './queries/query-schemas';
export { registerReadCommands } from './cli/read.commands';
