import type { Pool } from 'pg';
import { canonicalJson } from '../canonical-json';
import { InvalidEvent, StreamDeleted, StreamNotFound } from '../errors';
import type { StreamMetadata } from '../event-store.port';
import { categoryOf } from '../prepare-events';
import type { FieldProblem } from '@parley/core';

interface StreamRow {
  status: number;
  version: bigint;
  last_hash: string | null;
  max_count: bigint | null;
  max_age_seconds: number | null;
  truncate_before: bigint | null;
  metadata: Record<string, unknown> | null;
}

/** Stream metadata, soft delete and tombstone on es_streams. */
export class StreamAdmin {
  constructor(private readonly pool: Pool) {}

  async head(streamId: string): Promise<{ version: bigint; lastHash: string | null } | null> {
    const row = await this.row(streamId);
    return row ? { version: BigInt(row.version), lastHash: row.last_hash } : null;
  }

  /** Replaces the stream's metadata, as EventStoreDB does; creates the stream row if needed. */
  async setMetadata(streamId: string, metadata: StreamMetadata): Promise<void> {
    const custom = checkMetadata(metadata);
    const { rows } = await this.pool.query(
      `insert into es_streams (stream_id, category, max_count, max_age, truncate_before, metadata)
       values ($1, $2, $3, make_interval(secs => $4), $5, $6::jsonb)
       on conflict (stream_id) do update set max_count = excluded.max_count, max_age = excluded.max_age,
         truncate_before = excluded.truncate_before, metadata = excluded.metadata
       where es_streams.status <> 2
       returning status`,
      [
        streamId,
        categoryOf(streamId),
        metadata.maxCount ?? null,
        metadata.maxAgeSeconds ?? null,
        metadata.truncateBefore ?? null,
        custom,
      ],
    );
    if (rows.length === 0) throw new StreamDeleted(streamId);
  }

  async getMetadata(streamId: string): Promise<StreamMetadata | null> {
    const row = await this.row(streamId);
    if (row?.status === 2) throw new StreamDeleted(streamId);
    if (!row) return null;
    const result: StreamMetadata = {};
    if (row.max_count !== null) result.maxCount = Number(row.max_count);
    if (row.max_age_seconds !== null) result.maxAgeSeconds = Number(row.max_age_seconds);
    if (row.truncate_before !== null) result.truncateBefore = BigInt(row.truncate_before);
    if (row.metadata !== null) result.custom = row.metadata;
    return Object.keys(result).length > 0 ? result : null;
  }

  /** Hides the stream's events; a later append recreates it with the revisions continuing. */
  async softDelete(streamId: string): Promise<void> {
    const { rowCount } = await this.pool.query(
      `update es_streams set status = 1, truncate_before = version + 1
       where stream_id = $1 and status = 0 and version >= 0`,
      [streamId],
    );
    if (rowCount) return;
    const row = await this.row(streamId);
    if (row?.status === 2) throw new StreamDeleted(streamId);
    if (!row || row.status === 0) throw new StreamNotFound(streamId);
  }

  /** Deletes the stream for ever: it can never be read or written again. */
  async tombstone(streamId: string): Promise<void> {
    await this.pool.query(
      `insert into es_streams (stream_id, category, status) values ($1, $2, 2)
       on conflict (stream_id) do update set status = 2`,
      [streamId, categoryOf(streamId)],
    );
  }

  private async row(streamId: string): Promise<StreamRow | undefined> {
    const { rows } = await this.pool.query<StreamRow>(
      `select status, version, es_hash_text(last_hash) as last_hash, max_count,
              extract(epoch from max_age)::float8 as max_age_seconds, truncate_before, metadata
       from es_streams where stream_id = $1`,
      [streamId],
    );
    return rows[0];
  }
}

function checkMetadata(metadata: StreamMetadata): string | null {
  const problems: FieldProblem[] = [];
  const { maxCount, maxAgeSeconds, truncateBefore } = metadata;
  if (maxCount !== undefined && (!Number.isInteger(maxCount) || maxCount < 1)) {
    problems.push({ path: 'maxCount', message: 'expected a whole number of at least 1' });
  }
  if (maxAgeSeconds !== undefined && (!Number.isFinite(maxAgeSeconds) || maxAgeSeconds <= 0)) {
    problems.push({ path: 'maxAgeSeconds', message: 'expected a positive number of seconds' });
  }
  if (truncateBefore !== undefined && (typeof truncateBefore !== 'bigint' || truncateBefore < 0n)) {
    problems.push({ path: 'truncateBefore', message: 'expected a revision (bigint) of at least 0' });
  }
  const custom = metadata.custom === undefined ? null : canonicalJson(metadata.custom, 'custom', problems);
  if (problems.length > 0) throw new InvalidEvent(problems);
  return custom;
}
