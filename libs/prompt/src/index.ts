export {
  assemblePrompt,
  PART_SEPARATOR,
  type PromptInput,
  type PromptMcpClient,
  type PromptSkill,
} from './assemble-prompt';
export { schemaBlock, type PromptSchema, type SchemaCardinality, type SchemaDirection } from './schema-prompt';
export { buildChatOptions, responseName, type ChatOptionsInput, type ConfigurationValues } from './chat-options';
export {
  countTokens,
  countMessageTokens,
  countPromptTokens,
  countToolCallTokens,
  encodingNameFor,
  type CountableMessage,
} from './token-count';
