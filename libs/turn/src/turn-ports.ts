import type { SpendBudgets } from '@parley/catalog';
import type { Config } from '@parley/config';
import type { ConversationRepository, ConversationSignals, TurnScheduler } from '@parley/conversation';
import type { Collections } from '@parley/knowledge';
import type { AdvisorRegistry, LlmClient, ProviderEndpoints } from '@parley/llm';
import type { MetricsService } from '@parley/observability';
import type { LiveDeltas } from '@parley/read-models';
import type { RemoteToolInvoker, ToolExecutor } from '@parley/tools';
import type { LongTermMemory } from './long-term-memory/long-term-memory';

/** Everything a turn touches, gathered by TurnRunner's constructor. */
export interface TurnDeps {
  config: Config;
  repository: ConversationRepository;
  signals: ConversationSignals;
  scheduler: TurnScheduler;
  llm: LlmClient;
  endpoints: ProviderEndpoints;
  tools: ToolExecutor;
  /** Publishes remote tool calls; the turn then waits for their completion. */
  remote: RemoteToolInvoker;
  live?: LiveDeltas;
  metrics?: MetricsService;
  /** The advisors the snapshot's bean names resolve to. */
  advisors?: AdvisorRegistry;
  /** Long-term memory's facts, for the remember and recall tools and the automatic recall. */
  memory?: LongTermMemory;
  /** The document collections a turn searches (retrieval); absent where KnowledgeModule is not loaded. */
  collections?: Collections;
  /** Spend budgets: each model call reserves its worst case and settles to its cost (docs/budgets.md). */
  budgets?: SpendBudgets;
}
