import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A SUMMARY memory strategy's threshold (tokens) and how many recent messages stay verbatim. */
export class MemorySummary1732200010000 implements MigrationInterface {
  name = 'MemorySummary1732200010000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `alter table cat_memory_strategies add column llm_memory_summary_threshold integer,
       add column llm_memory_keep_recent integer`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `alter table cat_memory_strategies drop column llm_memory_summary_threshold, drop column llm_memory_keep_recent`,
    );
  }
}
