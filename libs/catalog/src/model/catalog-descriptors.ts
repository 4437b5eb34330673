import type { EntityDescriptor, LinkSpec } from './descriptor';
import { bool, date, int, json, list, num, oneOf, ref, str, text, type Field } from './fields';

/**
 * Every catalog entity of seed 000 (plus seed 001's provider/model fields and seed 002's tool
 * kinds), in dependency order: an entity only references entities listed before it, so
 * applying a bundle in this order never breaks a foreign key. Key lengths are the seed's.
 */
const DESCRIPTION = str(500);

function entity(
  kind: string,
  route: string,
  label: string,
  key: { field: string; max: number },
  fields: Record<string, Field>,
  extra: Partial<Pick<EntityDescriptor, 'links' | 'secrets'>> = {},
): EntityDescriptor {
  return { kind, route, label, table: `cat_${route.replace(/-/g, '_')}`, key, fields, links: [], ...extra };
}

const code = (max: number) => ({ field: 'code', max });
const type = (kind: string, route: string, label: string, extra: Record<string, Field> = {}) =>
  entity(kind, route, label, code(4), { description: DESCRIPTION, ...extra });

function link(
  field: string,
  table: string,
  parent: string,
  columns: Record<string, Field>,
  options: { shorthand?: boolean; scalar?: boolean } = {},
): LinkSpec {
  return { field, table, parent, columns, shorthand: options.shorthand ?? true, scalar: options.scalar ?? false };
}

const OWNED = {
  status: oneOf(['active', 'inactive'], 'active'),
  instanceWide: bool(false),
  owner: str(200),
};

const CAPABILITIES = ['FC', 'VI', 'SR', 'JM', 'EM', 'AU'] as const;
const PROVIDER_TYPES = ['openai', 'openai-compatible'] as const;

export const CATALOG_DESCRIPTORS: readonly EntityDescriptor[] = [
  type('agentTypes', 'agent-types', 'agent type'),
  type('actionTypes', 'action-types', 'action type', { llmConstraintPrompt: text() }),
  type('personaTypes', 'persona-types', 'persona type'),
  type('skillTypes', 'skill-types', 'skill type'),
  type('toolTypes', 'tool-types', 'tool type'),
  type('mcpClientTypes', 'mcp-client-types', 'MCP client type'),
  type('advisorTypes', 'advisor-types', 'advisor type'),
  type('vectorStoreTypes', 'vector-store-types', 'vector store type'),
  type('memoryStrategyTypes', 'memory-strategy-types', 'memory strategy type'),
  entity('applications', 'applications', 'application', code(8), {
    description: DESCRIPTION,
    llmSystemPrompt: text(),
  }),
  entity('domainSchemas', 'domain-schemas', 'domain schema', code(32), {
    description: DESCRIPTION,
    jsonSchema: json(true),
  }),
  entity('domainForms', 'domain-forms', 'domain form', code(32), {
    description: DESCRIPTION,
    domainSchema: ref('domainSchemas', 32, true),
  }),
  entity('domainGrids', 'domain-grids', 'domain grid', code(32), {
    description: DESCRIPTION,
    domainSchema: ref('domainSchemas', 32, true),
  }),
  entity('personas', 'personas', 'persona', code(8), {
    description: DESCRIPTION,
    llmPersonaType: ref('personaTypes', 4),
    llmPersonaPrompt: text(),
  }),
  entity(
    'tools',
    'tools',
    'tool',
    code(12),
    {
      description: DESCRIPTION,
      llmToolType: ref('toolTypes', 4),
      llmToolBeanName: str(128),
      llmSchemaInput: ref('domainSchemas', 32),
      llmSchemaOutput: ref('domainSchemas', 32),
      config: json(),
      returnDirect: bool(false),
      skipResponse: bool(false),
      idempotent: bool(false),
      approval: oneOf(['never', 'always'], 'never'),
    },
    { secrets: 'tool' },
  ),
  entity(
    'skills',
    'skills',
    'skill',
    code(8),
    { description: DESCRIPTION, llmSkillType: ref('skillTypes', 4), llmSkillPrompt: text() },
    { links: [link('tools', 'cat_skill_tools', 'skill', { tool: ref('tools', 12, true) }, { scalar: true })] },
  ),
  entity(
    'mcpClients',
    'mcp-clients',
    'MCP client',
    { field: 'name', max: 64 },
    {
      description: DESCRIPTION,
      mcpClientType: ref('mcpClientTypes', 4),
      mcpTransportType: { type: 'enum', values: ['ST', 'SH', 'SE'], default: null, required: true },
      mcpConnectionUrl: str(2000),
      command: str(500),
      args: list(2000),
      llmSchemaInput: ref('domainSchemas', 32),
      llmSchemaOutput: ref('domainSchemas', 32),
      /**
       * The server's tools that wait for approval, by their MCP name; `*`: every one of them.
       * Frozen into each new conversation's tool definitions (approval: always).
       */
      requireApproval: list(128, 200),
    },
    { secrets: 'mcpClient' },
  ),
  entity('advisors', 'advisors', 'advisor', code(8), {
    description: DESCRIPTION,
    llmAdvisorType: ref('advisorTypes', 4),
    llmAdvisorBeanName: str(128),
    llmAdvisorOrder: int(-1_000_000),
    config: json(),
  }),
  entity('memoryStrategies', 'memory-strategies', 'memory strategy', code(4), {
    description: DESCRIPTION,
    llmMemoryStrategyType: ref('memoryStrategyTypes', 4, true),
    llmMemoryWindowSize: int(1),
    /** SUMMARY: the remembered history's tokens past which the model summarises it (default 4000). */
    llmMemorySummaryThreshold: int(1),
    /** SUMMARY: the recent messages that stay verbatim beside the summary (default 6). */
    llmMemoryKeepRecent: int(0),
  }),
  entity('configurations', 'configurations', 'configuration', code(4), {
    description: DESCRIPTION,
    samplingSizeTopK: int(1),
    samplingSizeTopP: num(0, 1),
    temperature: num(0, 2),
    tokenSizeMax: int(1, true),
    frequencyPenalty: num(-2, 2),
    presencePenalty: num(-2, 2),
    /** Stop sequences sent with every model call of the configuration's actions (OpenAI takes at most 4). */
    stop: list(200, 4),
    llmRetryCount: int(0),
    llmRetryDelay: int(0),
    maxToolRounds: int(1),
    maxPromptTokens: int(1),
    maxCompletionTokens: int(1),
    maxTotalTokens: int(1),
    turnTimeoutMs: int(1000),
    maxToolOutputBytes: int(256),
    questionTimeoutMs: int(1000),
    toolApprovalTimeoutMs: int(1000),
  }),
  entity(
    'providers',
    'providers',
    'provider',
    code(4),
    {
      description: DESCRIPTION,
      providerType: { type: 'enum', values: PROVIDER_TYPES, default: null, required: true },
      baseUrl: str(2000),
      ...OWNED,
    },
    { secrets: 'provider' },
  ),
  entity(
    'models',
    'models',
    'model',
    code(12),
    {
      description: DESCRIPTION,
      llmModelName: str(200, true),
      llmProvider: ref('providers', 4, true),
      modelType: oneOf(['inference', 'embedding', 'rerank'], 'inference'),
      llmKnowledgeCutoffDate: date(),
      llmInputTokenPrice: num(0),
      llmOutputTokenPrice: num(0),
      /** Tokens the model takes in and gives out together: the prompt budget's fallback (context window less the reply). */
      llmContextWindow: int(1),
      ...OWNED,
    },
    {
      links: [
        link(
          'capabilities',
          'cat_model_capabilities',
          'model',
          { capability: { type: 'enum', values: CAPABILITIES, default: null, required: true } },
          { scalar: true },
        ),
      ],
    },
  ),
  entity('vectorStores', 'vector-stores', 'vector store', code(8), {
    description: DESCRIPTION,
    llmVectorStoreType: ref('vectorStoreTypes', 4),
    connectionUrl: str(2000),
    defaultCollectionName: str(128),
    /** The embedding model of the store's collections (one vector space), unless a collection names its own. */
    llmEmbeddingModel: ref('models', 12),
  }),
  entity('documentCollections', 'document-collections', 'document collection', code(8), {
    description: DESCRIPTION,
    llmVectorStore: ref('vectorStores', 8, true),
    collectionName: str(128, true),
    llmSimilarityThreshold: num(0, 1),
    llmResultCount: int(1),
    /** The model that embeds the collection's chunks and queries; else its vector store's. */
    llmEmbeddingModel: ref('models', 12),
  }),
  entity(
    'actions',
    'actions',
    'action',
    code(12),
    {
      description: DESCRIPTION,
      goalDescription: text(),
      llmActionType: ref('actionTypes', 4),
      /** Absent: the default model (DEFAULT_MODEL_NAME; docs/models.md). */
      llmModel: ref('models', 12),
      llmConfiguration: ref('configurations', 4),
      llmPersona: ref('personas', 8),
      llmMemoryStrategy: ref('memoryStrategies', 4),
      llmActionPrompt: text(),
      /** The AskUserQuestion tool is offered unless the action opts out (seed 000). */
      askUserQuestion: bool(true),
      /** Seed 001's auto_confirm: tools that need approval run without waiting for one. */
      autoConfirm: bool(false),
      longTermMemory: bool(false),
      autoRecall: bool(false),
    },
    { links: actionLinks() },
  ),
  entity('agents', 'agents', 'agent', code(8), {
    description: DESCRIPTION,
    llmApplication: ref('applications', 8, true),
    llmAgentType: ref('agentTypes', 4),
    llmAgentPrompt: text(),
    llmActionAchievesGoal: ref('actions', 12),
  }),
  // A spend cap (docs/budgets.md): on one subject, agent or action, per UTC day or month, in the
  // currency of the models' token prices. `target` is the subject, or the agent's or action's code.
  entity('budgets', 'budgets', 'budget', code(32), {
    description: DESCRIPTION,
    scope: { type: 'enum', values: ['subject', 'agent', 'action'], default: null, required: true },
    target: str(200, true),
    period: { type: 'enum', values: ['day', 'month'], default: null, required: true },
    cap: num(0, undefined, true),
  }),
];

function actionLinks(): LinkSpec[] {
  return [
    link(
      'schemas',
      'cat_action_schemas',
      'action',
      {
        domainSchema: ref('domainSchemas', 32, true),
        llmInputOutput: { type: 'enum', values: ['I', 'O', 'M'], default: null, required: true },
        llmCardinality: oneOf(['I', 'L'], 'I'),
        domainForm: ref('domainForms', 32),
        domainGrid: ref('domainGrids', 32),
      },
      { shorthand: false },
    ),
    link('skills', 'cat_action_skills', 'action', {
      skill: ref('skills', 8, true),
      disclosure: oneOf(['always', 'on_request'], 'always'),
    }),
    link('tools', 'cat_action_tools', 'action', { tool: ref('tools', 12, true) }, { scalar: true }),
    link('mcpClients', 'cat_action_mcps', 'action', { mcpClient: ref('mcpClients', 64, true) }, { scalar: true }),
    link('advisors', 'cat_action_advisors', 'action', {
      advisor: ref('advisors', 8, true),
      llmAdvisorOrder: int(-1_000_000),
    }),
    link(
      'documents',
      'cat_action_documents',
      'action',
      { documentCollection: ref('documentCollections', 8, true) },
      { scalar: true },
    ),
  ];
}

const byKind = new Map(CATALOG_DESCRIPTORS.map((d) => [d.kind, d]));
const byRoute = new Map(CATALOG_DESCRIPTORS.map((d) => [d.route, d]));

export const descriptorOf = (kind: string): EntityDescriptor | undefined => byKind.get(kind);
export const descriptorForRoute = (route: string): EntityDescriptor | undefined => byRoute.get(route);
