import type { MigrationInterface, QueryRunner } from 'typeorm';

/** An action may name no model: it then runs on the default one (DEFAULT_MODEL_NAME). */
export class ActionDefaultModel1732200017000 implements MigrationInterface {
  name = 'ActionDefaultModel1732200017000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('alter table cat_actions alter column llm_model drop not null');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('alter table cat_actions alter column llm_model set not null');
  }
}
