import type { RecordedEvent } from '../event-store.port';
import { pgPosition } from '../position';

/** An es_events row as the adapter's statements select it (int8 columns arrive as bigint). */
export interface EventRow {
  global_position: bigint;
  tx: string;
  stream_id: string;
  category: string;
  revision: bigint;
  event_id: string;
  event_type: string;
  schema_version: number;
  data: unknown;
  metadata: Record<string, unknown>;
  created_at: Date;
  prev_hash: string;
  hash: string;
}

export function toRecordedEvent(row: EventRow): RecordedEvent {
  return {
    streamId: row.stream_id,
    category: row.category,
    revision: BigInt(row.revision),
    position: pgPosition(row.tx, row.global_position),
    eventId: row.event_id,
    type: row.event_type,
    schemaVersion: row.schema_version,
    data: row.data,
    metadata: row.metadata,
    createdAt: row.created_at,
    prevHash: row.prev_hash,
    hash: row.hash,
  };
}
