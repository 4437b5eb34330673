import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { CONFIG, type Config } from '@parley/config';
import { CatalogService } from '../apply/catalog.service';

/** The codes of what the environment keeps in the catalog: generate's agent and action, and their model. */
export const GENERATE_AGENT = 'GENERATE';
export const GENERATE_ACTION = 'GENERATE';
export const ENV_MODEL = 'ENV-DEFAULT';
export const ENV_PROVIDER = 'ENV';
/** The catalog MCP client `MCP_PROXY_URL` becomes; its tools reach the model as `mcp-proxy__<tool>`. */
export const MCP_PROXY_CLIENT = 'mcp-proxy';

/**
 * The bundle `LLM_RUNTIME_URL` and its companions stand for (seed 004 §11): a provider, a model
 * named DEFAULT_MODEL_NAME, a configuration with seed 004's limits (unless the variables set
 * them), and the GENERATE agent and action, with the MCP proxy's client when `MCP_PROXY_URL` is
 * set. Null without `LLM_RUNTIME_URL`. Pure: the same variables give the same bundle.
 */
export function environmentBundle(config: Config): Record<string, unknown[]> | null {
  const g = config.generate;
  if (!g.runtimeUrl) return null;
  const described = 'Kept from the environment (LLM_RUNTIME_URL)';
  // Without FC the turn sends tools as text (the adapter's text protocol), in JSON mode with JM.
  const capabilities = g.runtimeTools === 'api' ? ['FC', 'JM'] : config.llm.enableJsonMode ? ['JM'] : [];
  return {
    providers: [
      {
        code: ENV_PROVIDER,
        description: described,
        providerType: 'openai-compatible',
        baseUrl: g.runtimeUrl,
        apiKey: g.runtimeApiKey,
        instanceWide: true,
      },
    ],
    models: [
      {
        code: ENV_MODEL,
        description: `${described}: DEFAULT_MODEL_NAME`,
        llmModelName: g.modelName,
        llmProvider: ENV_PROVIDER,
        modelType: 'inference',
        capabilities,
        instanceWide: true,
      },
    ],
    configurations: [
      {
        code: 'GENR',
        description: 'Seed 004 limits for generate (MAX_TOOL_STEPS, MAX_PROMPT_TOKENS, MAX_COMPLETION_TOKENS)',
        tokenSizeMax: g.maxCompletionTokens,
        llmRetryCount: g.retryCount,
        maxToolRounds: g.maxToolSteps,
        maxPromptTokens: g.maxPromptTokens,
        maxCompletionTokens: g.maxCompletionTokens,
        maxTotalTokens: g.maxTotalTokens,
      },
    ],
    memoryStrategyTypes: [{ code: 'FULL', description: 'Full' }],
    memoryStrategies: [{ code: 'GENR', description: 'The whole request', llmMemoryStrategyType: 'FULL' }],
    applications: [{ code: 'GENERATE', description: 'Seed 004 generate calls' }],
    agentTypes: [{ code: 'AUTO', description: 'Autonomous' }],
    agents: [
      {
        code: GENERATE_AGENT,
        description: 'Runs POST /internal/llm/generate',
        llmApplication: 'GENERATE',
        llmAgentType: 'AUTO',
      },
    ],
    ...(g.mcpProxyUrl
      ? {
          mcpClients: [
            {
              name: MCP_PROXY_CLIENT,
              description: 'Kept from the environment (MCP_PROXY_URL)',
              mcpTransportType: 'SH',
              mcpConnectionUrl: g.mcpProxyUrl,
            },
          ],
        }
      : {}),
    actions: [
      {
        code: GENERATE_ACTION,
        description: 'A one-shot generate call (seed 004 §4)',
        llmModel: ENV_MODEL,
        llmConfiguration: 'GENR',
        llmMemoryStrategy: 'GENR',
        mcpClients: g.mcpProxyUrl ? [MCP_PROXY_CLIENT] : [],
        // A one-shot call has nobody to ask: generate answers or fails, it never waits.
        askUserQuestion: false,
      },
    ],
  };
}

/**
 * Applies the environment's bundle at start, through the catalog service: one transaction
 * under the catalog lock, so processes starting together write it once and the rest find
 * nothing to change; a changed variable changes its entity at the next start.
 */
@Injectable()
export class EnvironmentCatalog implements OnApplicationBootstrap {
  constructor(
    @Inject(CatalogService) private readonly catalog: CatalogService,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const bundle = environmentBundle(this.config);
    if (!bundle) return;
    const { changes } = await this.catalog.apply(bundle, { dryRun: false });
    new Logger('Catalog').log({ changes }, 'Kept the catalog entities LLM_RUNTIME_URL stands for');
  }
}
