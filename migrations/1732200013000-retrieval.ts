import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Retrieval in turns: a model's context window (the prompt budget's fallback), and the sources
 * (the document chunks drawn on) of an assistant message in the messages read model.
 */
export class Retrieval1732200013000 implements MigrationInterface {
  name = 'Retrieval1732200013000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`alter table cat_models add column llm_context_window integer check (llm_context_window >= 1)`);
    await q.query(`alter table rm_messages add column rag_sources jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`alter table rm_messages drop column rag_sources`);
    await q.query(`alter table cat_models drop column llm_context_window`);
  }
}
