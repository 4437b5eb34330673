/**
 * The resolved configuration a conversation runs with, frozen into ConversationStarted so a
 * replay never consults today's catalog. Holds no secret: credentials are looked up by the
 * executors at call time from the tool or provider code.
 */

export type ToolKind = 'in_process' | 'http' | 'emitter' | 'remote' | 'mcp' | 'ask_user_question' | 'skill' | 'memory';

export type ApprovalPolicy = 'never' | 'always';

/** A function the model may call, as the model sees it plus how Parley runs it. */
export interface ToolDefinition {
  /** The name the model calls (unique within the conversation). */
  name: string;
  description: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
  kind: ToolKind;
  /**
   * Where it lives: the catalog tool code (in_process, http, emitter, remote), `<mcpClientName>/<toolName>`
   * (mcp), the skill code (skill).
   */
  ref: string;
  approval: ApprovalPolicy;
  idempotent: boolean;
  returnDirect: boolean;
  skipResponse: boolean;
  /**
   * JSON Schema the tool's output, read as JSON, must match (seed 000's llmSchemaOutput of a
   * tool); an output that does not is a failed call (INVALID_OUTPUT) the model is told of.
   */
  outputSchema?: Record<string, unknown>;
}

/** A skill disclosed progressively: only its description is in the prompt until the model asks for it. */
export interface DisclosableSkill {
  code: string;
  description: string;
  /** The skill's own prompt, handed to the model when it asks for the skill. */
  prompt?: string;
  tools: ToolDefinition[];
}

/**
 * The action's output schema (seed 000 llmSchemaOutput) as the final reply is validated against
 * it: `jsonSchema` is what the model was asked to produce (the response format's wrapped object
 * when there is one), `unwrap` the field of that wrapper holding the output (null: none).
 */
export interface OutputSchema {
  code: string;
  jsonSchema: Record<string, unknown>;
  unwrap: string | null;
}

export type ResponseFormat =
  { type: 'json_schema'; name: string; schema: Record<string, unknown>; strict: boolean } | { type: 'json_object' };

/** Only the options the action's configuration sets (seed 000: chat-options building). */
export interface ChatOptions {
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  frequencyPenalty?: number;
  presencePenalty?: number;
  responseFormat?: ResponseFormat;
  /** Sequences at which the model stops generating (OpenAI's `stop`: at most 4). */
  stop?: string[];
}

export interface MemoryStrategy {
  /**
   * FULL: every message; WINDOW: the last `windowSize` messages (never splitting a tool call from
   * its results); NONE: only the current turn; SUMMARY: once the remembered history passes
   * `summaryThresholdTokens`, the model summarises all but the last `keepRecent` messages, and
   * the prompt holds that summary and the messages after it.
   */
  kind: 'FULL' | 'WINDOW' | 'NONE' | 'SUMMARY';
  windowSize?: number;
  summaryThresholdTokens?: number;
  keepRecent?: number;
}

/** SUMMARY's defaults when the strategy does not set them. */
export const DEFAULT_SUMMARY_THRESHOLD_TOKENS = 4000;
export const DEFAULT_SUMMARY_KEEP_RECENT = 6;

export interface TurnLimits {
  maxToolRounds: number;
  maxPromptTokens: number | null;
  maxCompletionTokens: number | null;
  maxTotalTokens: number | null;
  turnTimeoutMs: number;
  maxToolOutputBytes: number;
  questionTimeoutMs: number;
  /**
   * How long a call that needs approval waits before it is rejected as timed out (seed 001's
   * tool_approval_timeout_ms). Absent in snapshots recorded before it existed: no expiry.
   */
  approvalTimeoutMs?: number;
  /** Tool calls run per model reply; the rest are refused as data. Absent in snapshots recorded before it existed. */
  maxToolCallsPerReply?: number;
  /**
   * A tool output over maxToolOutputBytes: cut and marked for the model (`truncate`, the default
   * and what absent means), or the end of the turn as LLM_LIMIT_EXCEEDED (`fail`: generate, seed
   * 004 §9.3 "too much text from a tool").
   */
  toolOutputOverflow?: 'truncate' | 'fail';
}

/** An advisor an action runs around each model call (seed 000's LlmActionAdvisor). */
export interface AdvisorBinding {
  /** The catalog advisor's code. */
  code: string;
  /** The registered advisor it runs (llmAdvisorBeanName). */
  bean: string;
  /** llmAdvisorOrder: the link's, else the advisor's default; the list is sorted by it, descending. */
  order: number;
  /** The advisor's catalog config (e.g. safeGuard's sensitiveWords). */
  config: Record<string, unknown>;
}

export interface ConversationSnapshot {
  applicationCode: string;
  agentCode: string;
  actionCode: string;
  model: {
    code: string;
    /** The vendor's model id sent to the API (llmModelName). */
    name: string;
    providerCode: string;
    /** Seed 000 capability codes: FC VI SR JM EM AU. */
    capabilities: string[];
    inputTokenPrice: number;
    outputTokenPrice: number;
    /** Tokens the model takes in and gives out together (llmContextWindow); absent: not known. */
    contextWindow?: number;
  };
  options: ChatOptions;
  systemPrompt: string;
  tools: ToolDefinition[];
  disclosableSkills: DisclosableSkill[];
  /** Names of the catalog MCP clients whose tools the MCP pool lists at run time (the resolver always sets it). */
  mcpClients?: string[];
  /**
   * Per MCP client, the tools (their MCP names, `*` for all) that wait for approval: the ones the
   * client lists at start are frozen into `tools` with approval `always`. Absent: none.
   */
  mcpApprovals?: Record<string, string[]>;
  /**
   * Per MCP client, the JSON Schema of its llmSchemaOutput: every tool the client lists at start is
   * frozen into `tools` with it as its `outputSchema`, so each result is checked as a catalog
   * tool's is. Absent: none.
   */
  mcpOutputSchemas?: Record<string, Record<string, unknown>>;
  memory: MemoryStrategy;
  /** The document collections the turn searches before its first model call. Absent when the action links none. */
  collections?: RetrievalCollection[];
  /** The advisors around each model call, highest order first. Absent when the action links none. */
  advisors?: AdvisorBinding[];
  limits: TurnLimits;
  retry: { count: number; delayMs: number };
  /** Long-term memory (the action's longTermMemory / autoRecall). Absent when the action uses none. */
  longTermMemory?: LongTermMemorySettings;
  /** The action's output schema: the turn's final reply must match it. Absent: free text. */
  outputSchema?: OutputSchema;
  /**
   * Seed 001's auto_confirm: tools that need approval run without waiting for one (each call is
   * recorded as approved by 'auto'). Set by the action's autoConfirm or the start's autoConfirm;
   * absent: false, calls wait for a human.
   */
  autoConfirm?: true;
}

/** The four scopes of long-term memory, in the order recall prefers them. */
export const MEMORY_SCOPES = ['session', 'user', 'agent', 'organisation'] as const;
export type MemoryScope = (typeof MEMORY_SCOPES)[number];

/**
 * What a conversation's long-term memory runs with: whether the model gets the `remember` and
 * `recall` tools, whether each turn recalls before its first model call, and the embedding model
 * (an `embedding` model of the catalog) its facts are embedded with.
 */
export interface LongTermMemorySettings {
  tools: boolean;
  autoRecall: boolean;
  embedding: { code: string; name: string; providerCode: string; inputTokenPrice: number };
}

/** A document collection an action links (`documents`), as retrieval in a turn searches it. */
export interface RetrievalCollection {
  /** The catalog DocumentCollection code. */
  code: string;
  /** Chunks asked of the search: the collection's llmResultCount, else 4. */
  topK: number;
  /** Lowest cosine similarity a chunk may have (llmSimilarityThreshold); null: none. */
  threshold: number | null;
}

/** Tokens kept for the reply when the prompt budget comes from the context window and no max tokens is set. */
export const DEFAULT_COMPLETION_RESERVE = 1024;
