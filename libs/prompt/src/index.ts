export { assemblePrompt, type PromptSkill } from './assemble-prompt';
export type { PromptSchema } from './schema-prompt';
export { buildChatOptions, outputSchemaOf } from './chat-options';
export { countTokens, countPromptTokens, countToolCallTokens, encodingNameFor, tokenCounter } from './token-count';
export {
  CONTEXT_HEADER,
  fitContext,
  mergeAdjacent,
  renderContext,
  sourceLabel,
  type ContextBlock,
  type ContextChunk,
  type DroppedChunk,
  type FitOptions,
  type FittedContext,
} from './context-budget';
