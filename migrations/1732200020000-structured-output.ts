import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Structured output: the parsed reply of an action with an output schema, kept with the
 * assistant message it came from and as the conversation's last output.
 */
export class StructuredOutput1732200020000 implements MigrationInterface {
  name = 'StructuredOutput1732200020000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`alter table rm_messages add column output jsonb`);
    await q.query(`alter table rm_conversations add column output jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`alter table rm_conversations drop column output`);
    await q.query(`alter table rm_messages drop column output`);
  }
}
