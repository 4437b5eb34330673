import { Inject, Injectable } from '@nestjs/common';
import { PG_POOL } from '@parley/platform';
import type { Pool } from 'pg';
import type { Role } from '../principal';

/** An API key as listed: everything but the key itself, which is never stored. */
export interface ApiKeyRecord {
  id: string;
  subject: string;
  roles: Role[];
  name: string;
  createdAt: Date;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

interface Row {
  id: string;
  subject: string;
  roles: Role[];
  name: string;
  hash: string;
  created_at: Date;
  revoked_at: Date | null;
  last_used_at: Date | null;
}

const toRecord = (r: Row): ApiKeyRecord => ({
  id: r.id,
  subject: r.subject,
  roles: r.roles,
  name: r.name,
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
  lastUsedAt: r.last_used_at,
});

/** auth_api_keys over the shared pg pool. */
@Injectable()
export class ApiKeyRepository {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  async insert(key: { id: string; subject: string; roles: Role[]; name: string; hash: string }): Promise<ApiKeyRecord> {
    const { rows } = await this.pool.query<Row>(
      `insert into auth_api_keys (id, subject, roles, name, hash) values ($1, $2, $3, $4, $5) returning *`,
      [key.id, key.subject, key.roles, key.name, key.hash],
    );
    return toRecord(rows[0]);
  }

  async findActiveByHash(hash: string): Promise<(ApiKeyRecord & { hash: string }) | null> {
    const { rows } = await this.pool.query<Row>(`select * from auth_api_keys where hash = $1 and revoked_at is null`, [
      hash,
    ]);
    return rows[0] ? { ...toRecord(rows[0]), hash: rows[0].hash } : null;
  }

  /** Returns the revoked key, or null when there is no such key; revoking twice keeps the first time. */
  async revoke(id: string): Promise<ApiKeyRecord | null> {
    const { rows } = await this.pool.query<Row>(
      `update auth_api_keys set revoked_at = coalesce(revoked_at, now()) where id = $1 returning *`,
      [id],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async hasActive(): Promise<boolean> {
    const { rows } = await this.pool.query(`select 1 from auth_api_keys where revoked_at is null limit 1`);
    return rows.length > 0;
  }

  async list(): Promise<ApiKeyRecord[]> {
    const { rows } = await this.pool.query<Row>(`select * from auth_api_keys order by created_at, id`);
    return rows.map(toRecord);
  }

  /** At most one write a minute per key, so authentication does not turn every read into a write. */
  async touch(id: string): Promise<void> {
    await this.pool.query(
      `update auth_api_keys set last_used_at = now()
        where id = $1 and (last_used_at is null or last_used_at < now() - interval '1 minute')`,
      [id],
    );
  }
}
