import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Usage per subject: the usage read model gets the subject that started each conversation as a
 * dimension, and counts turns and errors. The totals already stored have no subject and cannot
 * be split after the fact, so the usage tables are emptied and the `read-models` subscription is
 * sent back to the beginning: the projector counts usage again from the events. The other read
 * models see every event again, which changes nothing (each row keeps the revision of the last
 * event applied), as after ReadModelsCheckpoint1732200007000.
 */
export class UsagePerSubject1732200021000 implements MigrationInterface {
  name = 'UsagePerSubject1732200021000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`truncate rm_usage_conversations, rm_usage_daily`);
    await q.query(`alter table rm_usage_conversations add column subject text not null`);
    await q.query(
      `alter table rm_usage_daily
         add column subject text not null,
         add column turns bigint not null,
         add column errors bigint not null,
         drop constraint rm_usage_daily_pkey,
         add primary key (day, subject, agent_code, action_code, model_code)`,
    );
    await q.query(`create index rm_usage_daily_subject on rm_usage_daily (subject, day)`);
    // Latency percentiles read the completed model calls of a period.
    await q.query(`create index rm_model_calls_completed on rm_model_calls (completed_at) where status = 'completed'`);
    await q.query(
      `update es_checkpoints set position = null, last_tx = null, last_position = null, updated_at = now()
       where subscription_id = 'read-models'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`drop index rm_model_calls_completed`);
    await q.query(`truncate rm_usage_conversations, rm_usage_daily`);
    await q.query(`drop index rm_usage_daily_subject`);
    await q.query(
      `alter table rm_usage_daily
         drop constraint rm_usage_daily_pkey,
         drop column subject, drop column turns, drop column errors,
         add primary key (day, agent_code, action_code, model_code)`,
    );
    await q.query(`alter table rm_usage_conversations drop column subject`);
    await q.query(
      `update es_checkpoints set position = null, last_tx = null, last_position = null, updated_at = now()
       where subscription_id = 'read-models'`,
    );
  }
}
