import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The projections as they were checkpointed one by one, as `read-model:<name>`. */
const OLD_SUBSCRIPTIONS = [
  'conversations',
  'messages',
  'attachments',
  'tool-calls',
  'model-calls',
  'pending',
  'usage',
].map((name) => `read-model:${name}`);

/**
 * Every projection now runs on one subscription, `read-models`, with one checkpoint. It starts
 * from the lowest of the old checkpoints: the read models further ahead see some events again,
 * which changes nothing (each row keeps the revision of the last event applied). When one of
 * the old checkpoints is missing or empty it starts from the beginning, for the same reason.
 * Stop the projectors of the previous version before migrating: they still follow the old rows.
 */
export class ReadModelsCheckpoint1732200007000 implements MigrationInterface {
  name = 'ReadModelsCheckpoint1732200007000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`insert into es_checkpoints (subscription_id) values ('read-models') on conflict do nothing`);
    // Positions are '<kind>:<a>:<b>' and order by (a, b) as numbers, as comparePositions does.
    await q.query(
      `update es_checkpoints c
       set position = lowest.position, last_tx = lowest.last_tx, last_position = lowest.last_position, updated_at = now()
       from (select position, last_tx, last_position from es_checkpoints
             where subscription_id = any($1) and position is not null
             order by split_part(position, ':', 2)::numeric, split_part(position, ':', 3)::numeric
             limit 1) lowest
       where c.subscription_id = 'read-models'
         and (select count(position) from es_checkpoints where subscription_id = any($1)) = cardinality($1::text[])`,
      [OLD_SUBSCRIPTIONS],
    );
    await q.query(`delete from es_checkpoints where subscription_id like 'read-model:%'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`delete from es_checkpoints where subscription_id = 'read-models'`);
  }
}
