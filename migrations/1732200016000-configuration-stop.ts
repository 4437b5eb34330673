import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A configuration's stop sequences, sent with each model call of its actions. */
export class ConfigurationStop1732200016000 implements MigrationInterface {
  name = 'ConfigurationStop1732200016000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`alter table cat_configurations add column stop json not null default '[]'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('alter table cat_configurations drop column stop');
  }
}
