import type { Config } from '@parley/config';
import type { ConversationRepository, ConversationSignals, TurnScheduler } from '@parley/conversation';
import type { LlmClient, ProviderEndpoints } from '@parley/llm';
import type { MetricsService } from '@parley/observability';
import type { LiveDeltas } from '@parley/read-models';
import type { ToolExecutor } from '@parley/tools';

/** Everything a turn touches, gathered by TurnRunner's constructor. */
export interface TurnDeps {
  config: Config;
  repository: ConversationRepository;
  signals: ConversationSignals;
  scheduler: TurnScheduler;
  llm: LlmClient;
  endpoints: ProviderEndpoints;
  tools: ToolExecutor;
  live?: LiveDeltas;
  metrics?: MetricsService;
}

/** How a turn ends (status change events the runner appends). */
export type TurnEnd =
  | { kind: 'completed' }
  | { kind: 'waiting' }
  | {
      kind: 'failed';
      code: 'LLM_RUNTIME_ERROR' | 'LLM_LIMIT_EXCEEDED' | 'TOOL_ERRORS' | 'QUESTION_TIMEOUT';
      message: string;
    };

/** The end of a turn that ran past its time budget. */
export const overTime = (turnTimeoutMs: number): TurnEnd => ({
  kind: 'failed',
  code: 'LLM_LIMIT_EXCEEDED',
  message: `The turn ran past its time budget of ${turnTimeoutMs} ms.`,
});
