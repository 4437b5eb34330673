/**
 * Parley's shared vocabulary: the values every library speaks (snapshot and tool definitions,
 * chat options, codes, domain errors). A leaf: it imports nothing, so the domain and the
 * adapters can share it without loading each other or any infrastructure.
 */
export { DomainError, ERROR_STATUS, errorBody, type ErrorBody, type FieldProblem } from './domain-error';
export type {
  ToolKind,
  ToolDefinition,
  DisclosableSkill,
  ResponseFormat,
  OutputSchema,
  ChatOptions,
  MemoryStrategy,
  TurnLimits,
  ConversationSnapshot,
  AdvisorBinding,
  LongTermMemorySettings,
  MemoryScope,
  RetrievalCollection,
} from './snapshot';
export {
  DEFAULT_COMPLETION_RESERVE,
  DEFAULT_SUMMARY_KEEP_RECENT,
  DEFAULT_SUMMARY_THRESHOLD_TOKENS,
  MEMORY_SCOPES,
} from './snapshot';
export type * from './codes';
export { assertNever, stripUndefined, roundCost } from './values';
export { toolErrorText, toolErrorOf } from './tool-result-text';
export { unstorableText, storableText, withStorableText, unstorableTextProblems } from './text';
