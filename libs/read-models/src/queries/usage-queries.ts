import { ownerFilter, type Principal } from '@parley/auth';
import { DomainError } from '@parley/core';
import type { Pool } from 'pg';
import type { ProjectionPositions } from './projection-positions';
import type { UsageQuery } from './query-schemas';

type Dimension = 'day' | 'subject' | 'agent' | 'action' | 'model';

/** Each dimension's column in rm_usage_daily and in rm_usage_conversations (aliased `u`, with rm_model_calls `m`). */
const DAILY: Record<Dimension, string> = {
  day: 'day',
  subject: 'subject',
  agent: 'agent_code',
  action: 'action_code',
  model: 'model_code',
};
const CALLS: Record<Dimension, string> = {
  day: `(m.completed_at at time zone 'UTC')::date`,
  subject: 'u.subject',
  agent: 'u.agent_code',
  action: 'u.action_code',
  model: 'u.model_code',
};

/** One group of usage, as getUsage answers it. */
export interface UsageRow {
  conversations: number;
  turns: number;
  errors: number;
  modelCalls: number;
  inputTokens: number;
  outputTokens: number;
  /** Chat and embedding calls together. */
  estimatedCost: number;
  /** Tokens of the conversations' embedding calls (retrieval, remember, recall). */
  embeddingTokens: number;
  /** The embedding calls' part of estimatedCost. */
  embeddingCost: number;
  /** Of the turns' completed model calls; null when the group has none. */
  latencyP50Ms: number | null;
  latencyP95Ms: number | null;
}

/**
 * Usage and estimated cost grouped by day, subject, agent, action or model. Admins and auditors
 * see every subject's; a client only its own (the subject that started the conversation), and
 * naming another subject is FORBIDDEN.
 */
export class UsageQueries {
  constructor(
    private readonly pool: Pool,
    private readonly positions: ProjectionPositions,
  ) {}

  async getUsage(principal: Principal, q: UsageQuery): Promise<(UsageRow & Record<string, unknown>)[]> {
    // The same rule as conversation lists: null for admins and auditors, else the caller's subject.
    const own = ownerFilter(principal);
    if (own !== null && q.subject !== undefined && q.subject !== own)
      throw new DomainError('FORBIDDEN', 'A client sees only its own usage.', { subject: q.subject });
    const subject = own ?? q.subject;
    await this.positions.waitFor(q.minPosition);
    const filters = { subject, agent: q.agent, action: q.action, model: q.model };
    const where = (columns: Record<Dimension, string>) =>
      [
        `($1::date is null or ${columns.day} >= $1::date)`,
        `($2::date is null or ${columns.day} <= $2::date)`,
        ...(['subject', 'agent', 'action', 'model'] as const).map(
          (d, i) => `($${i + 3}::text is null or ${columns[d]} = $${i + 3})`,
        ),
      ].join(' and ');
    const params = [q.from, q.to, filters.subject, filters.agent, filters.action, filters.model].map((v) => v ?? null);
    const group = q.groupBy as Dimension;
    const [totals, latencies] = await Promise.all([
      this.pool.query<Record<string, unknown>>(
        `select ${DAILY[group]}::text as key, sum(conversations)::float8 as conversations, sum(turns)::float8 as turns,
                sum(errors)::float8 as errors, sum(model_calls)::float8 as model_calls,
                sum(input_tokens)::float8 as input_tokens, sum(output_tokens)::float8 as output_tokens,
                sum(estimated_cost)::text as estimated_cost, sum(embedding_tokens)::float8 as embedding_tokens,
                sum(embedding_cost)::text as embedding_cost
         from rm_usage_daily
         where ${where(DAILY)}
         group by 1 order by 1`,
        params,
      ),
      this.pool.query<{ key: string; p50: number | null; p95: number | null }>(
        `select ${CALLS[group]}::text as key,
                percentile_cont(0.5) within group (order by m.latency_ms) as p50,
                percentile_cont(0.95) within group (order by m.latency_ms) as p95
         from rm_model_calls m join rm_usage_conversations u using (conversation_id)
         where m.status = 'completed' and m.latency_ms is not null and ${where(CALLS)}
         group by 1`,
        params,
      ),
    ]);
    const latency = new Map(latencies.rows.map((r) => [r.key, r]));
    return totals.rows.map((r) => ({
      [q.groupBy]: r.key as string,
      conversations: r.conversations as number,
      turns: r.turns as number,
      errors: r.errors as number,
      modelCalls: r.model_calls as number,
      inputTokens: r.input_tokens as number,
      outputTokens: r.output_tokens as number,
      estimatedCost: Number(r.estimated_cost),
      embeddingTokens: r.embedding_tokens as number,
      embeddingCost: Number(r.embedding_cost),
      latencyP50Ms: latency.get(r.key as string)?.p50 ?? null,
      latencyP95Ms: latency.get(r.key as string)?.p95 ?? null,
    }));
  }
}
