import type { MigrationInterface, QueryRunner } from 'typeorm';

/** An advisor's catalog config (e.g. safeGuard's sensitiveWords), as a tool's config is kept. */
export class AdvisorConfig1732200009300 implements MigrationInterface {
  name = 'AdvisorConfig1732200009300';

  async up(q: QueryRunner): Promise<void> {
    await q.query('alter table cat_advisors add column config json');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('alter table cat_advisors drop column config');
  }
}
