import type { MigrationInterface, QueryRunner } from 'typeorm';
import { BINARY_APPEND_FUNCTION } from './1732200024000-binary-hashes';

/**
 * es_append finds reused event ids in time that does not grow with the stream. Its check for
 * them (`event_id = any(p_ids)`) was planned once per connection as a generic plan, which could
 * take the unique (stream_id, event_id) index by its first column only and test every event of
 * the stream against the ids: on a new database, two-event appends to a stream of 10,000 events
 * ran at 384/s against 1,008 to a new one (`npm run bench:event-store`). Now each id is probed by
 * both columns, and the array query runs only when one of them is there (a retried append, or ids
 * used twice), so what the function returns and raises is unchanged.
 */
export class AppendIdProbe1732200026000 implements MigrationInterface {
  name = 'AppendIdProbe1732200026000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(probingAppendFunction());
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(BINARY_APPEND_FUNCTION);
  }
}

/** The ids looked up at once, by a plan that could ignore event_id: …-binary-hashes' check. */
const ARRAY_QUERY = `  select array_agg(e.event_id order by e.revision), min(e.revision), max(e.revision) into v_seen, v_first, v_last_rev
    from es_events e where e.stream_id = p_stream and e.event_id = any(p_ids);`;

/**
 * Each id looked up on its own, by both columns of the unique (stream_id, event_id) index; the
 * array query, whose result the rest of the function reads as before, only once one is there.
 */
const PROBED_QUERY = `  for i in 1 .. v_n loop
    if exists (select 1 from es_events e where e.stream_id = p_stream and e.event_id = p_ids[i]) then
${ARRAY_QUERY}
      exit;
    end if;
  end loop;`;

/** es_append of …-binary-hashes with its check of the event ids replaced: nothing else differs. */
function probingAppendFunction(): string {
  if (!BINARY_APPEND_FUNCTION.includes(ARRAY_QUERY))
    throw new Error('es_append of …-binary-hashes has no array check to replace');
  return BINARY_APPEND_FUNCTION.replace(ARRAY_QUERY, PROBED_QUERY);
}
