import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Embedding usage: rm_usage_daily counts the tokens and cost of a conversation's embedding calls
 * (retrieval's searches, long-term memory's remember and recall) in embedding_tokens and
 * embedding_cost, under the embedding model's code, and adds the cost to estimated_cost.
 * Retrieval's events carried their embedding tokens and cost already, so the usage tables are
 * emptied and the `read-models` subscription sent back to the beginning: the projector counts
 * usage again from the events, those included (as UsagePerSubject1732200021000 did; the other
 * read models see every event again, which changes nothing).
 */
export class EmbeddingUsage1732200025300 implements MigrationInterface {
  name = 'EmbeddingUsage1732200025300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`truncate rm_usage_conversations, rm_usage_daily`);
    await q.query(
      `alter table rm_usage_daily
         add column embedding_tokens bigint not null default 0,
         add column embedding_cost numeric not null default 0`,
    );
    await rewind(q);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`truncate rm_usage_conversations, rm_usage_daily`);
    await q.query(`alter table rm_usage_daily drop column embedding_tokens, drop column embedding_cost`);
    await rewind(q);
  }
}

const rewind = (q: QueryRunner) =>
  q.query(
    `update es_checkpoints set position = null, last_tx = null, last_position = null, updated_at = now()
     where subscription_id = 'read-models'`,
  );
