import { requireRoles, type Principal } from '@parley/auth';
import type { Pool } from 'pg';
import type { ProjectionPositions } from './projection-positions';
import type { UsageQuery } from './query-schemas';

const GROUP_COLUMN = { day: 'day::text', agent: 'agent_code', action: 'action_code', model: 'model_code' } as const;

/**
 * Usage and estimated cost grouped by day, agent, action or model. Service-wide totals, so for
 * admins and auditors only.
 */
export class UsageQueries {
  constructor(
    private readonly pool: Pool,
    private readonly positions: ProjectionPositions,
  ) {}

  async getUsage(principal: Principal, q: UsageQuery) {
    requireRoles(principal, ['admin', 'auditor']);
    await this.positions.waitFor(q.minPosition);
    const column = GROUP_COLUMN[q.groupBy];
    const { rows } = await this.pool.query<Record<string, unknown>>(
      `select ${column} as key, sum(conversations)::float8 as conversations, sum(model_calls)::float8 as model_calls,
              sum(input_tokens)::float8 as input_tokens, sum(output_tokens)::float8 as output_tokens,
              sum(estimated_cost)::text as estimated_cost
       from rm_usage_daily
       where ($1::date is null or day >= $1::date) and ($2::date is null or day <= $2::date)
       group by ${column} order by 1`,
      [q.from ?? null, q.to ?? null],
    );
    return rows.map((r) => ({
      [q.groupBy]: r.key as string,
      conversations: r.conversations as number,
      modelCalls: r.model_calls as number,
      inputTokens: r.input_tokens as number,
      outputTokens: r.output_tokens as number,
      estimatedCost: Number(r.estimated_cost),
    }));
  }
}
