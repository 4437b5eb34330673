import { createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import type { SecretCipher } from '@parley/platform';
import { DomainError } from '@parley/core';
import type { Pool } from 'pg';
import type { AlongsideStatement } from '../event-store.port';
import { forgetOpened } from './content-cipher';

/** A conversation's data key, or that it was erased, or that it has none (stored before content sealing, or with it off). */
export type KeyState = { kind: 'key'; key: KeyObject } | { kind: 'erased'; erasedAt: string } | { kind: 'none' };

/** A conversation's new data key, to be stored alongside its first append (ConversationKeys.make). */
export interface MadeKey {
  key: KeyObject;
  insert: AlongsideStatement;
  /** Caches the key: its append committed, and the key with it. */
  keep(): void;
}

/** Whether an append's error is the refusal of MadeKey.insert: the conversation has a key row already. */
export function isKeyTaken(err: unknown): boolean {
  const { code, constraint } = (err ?? {}) as { code?: string; constraint?: string };
  return code === '23505' && constraint === 'conversation_keys_pkey';
}

export interface ConversationKeysOptions {
  /** Unwrapped keys (and erasures) kept in memory, least recently used dropped first. */
  cacheSize?: number;
  /** How long a cached key is trusted: an erasure by another process is seen within this time. */
  cacheTtlMs?: number;
}

interface KeyRow {
  conversation_id: string;
  key_id: string | null;
  wrapped_key: string | null;
  erased_at: Date | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const bindingOf = (conversationId: string) => `conversation_keys/${conversationId}`;

/**
 * The conversations' data keys in `conversation_keys`: created on a conversation's first
 * append, unwrapped with PARLEY_ENCRYPTION_KEY (or one of PARLEY_PREVIOUS_ENCRYPTION_KEYS) when
 * read, destroyed by an erasure. Unwrapped keys live in a bounded LRU cache.
 */
export class ConversationKeys {
  private readonly cache = new Map<string, { state: KeyState; at: number }>();
  private readonly cacheSize: number;
  private readonly cacheTtlMs: number;

  constructor(
    private readonly pool: Pool,
    private readonly cipher: SecretCipher,
    options: ConversationKeysOptions = {},
  ) {
    this.cacheSize = options.cacheSize ?? 10_000;
    this.cacheTtlMs = options.cacheTtlMs ?? 30_000;
  }

  /** Whether new keys can be made: PARLEY_ENCRYPTION_KEY is set. */
  get canCreate(): boolean {
    return this.cipher.canEncrypt;
  }

  /** The conversation's key state; with `create`, a conversation without a row gets a new key. */
  async stateOf(conversationId: string, create = false, owner: string | null = null): Promise<KeyState> {
    if (!UUID.test(conversationId)) return { kind: 'none' };
    const cached = this.cached(conversationId);
    // A conversation known to have no key gets one when it is to be created.
    if (cached && !(cached.kind === 'none' && create && this.canCreate)) return cached;
    if (create && this.canCreate) {
      const { row, key } = await this.created(conversationId, owner);
      return row ? this.remember(row, key) : this.rememberNone(conversationId);
    }
    const row = (await this.rows([conversationId]))[0];
    return row ? this.remember(row) : this.rememberNone(conversationId);
  }

  /**
   * A new data key for a conversation about to be started, made here and not stored yet: `insert`
   * stores it (a plain insert, failing with a unique violation of `conversation_keys_pkey` when
   * the conversation has a row already, see `isKeyTaken`), for the first append to run alongside
   * it, and `keep` caches it once that append has committed. Null when no key is to be made here:
   * no PARLEY_ENCRYPTION_KEY, or the conversation's key or erasure is known already.
   */
  make(conversationId: string, owner: string | null): MadeKey | null {
    if (!this.canCreate || !UUID.test(conversationId)) return null;
    const cached = this.cached(conversationId);
    if (cached && cached.kind !== 'none') return null;
    const { key, wrapped } = this.newKey(conversationId);
    const state = { kind: 'key' as const, key: createSecretKey(Buffer.from(key, 'base64')) };
    return {
      key: state.key,
      insert: {
        name: 'conversation_keys_insert',
        text: 'insert into conversation_keys (conversation_id, key_id, wrapped_key, owner) values ($1, $2, $3, $4)',
        values: [conversationId, wrapped.keyId, wrapped.ciphertext, owner],
      },
      keep: () => this.store(conversationId, state),
    };
  }

  /** The key states of many conversations, with one query for those not cached. */
  async statesOf(conversationIds: readonly string[]): Promise<Map<string, KeyState>> {
    const states = new Map<string, KeyState>();
    const missing: string[] = [];
    for (const id of new Set(conversationIds)) {
      const cached = this.cached(id);
      if (cached) states.set(id, cached);
      else missing.push(id);
    }
    if (missing.length > 0) {
      for (const row of await this.rows(missing)) states.set(row.conversation_id, this.remember(row));
      for (const id of missing) if (!states.has(id)) states.set(id, this.rememberNone(id));
    }
    return states;
  }

  /**
   * Destroys the conversation's key (a conversation without one gets a row that says it is
   * erased). Idempotent: an erased conversation keeps its first erasure.
   */
  async erase(conversationId: string, by: string): Promise<{ erasedAt: string; already: boolean }> {
    const { rows } = await this.pool.query<{ erased_at: Date; already: boolean }>(
      `with prior as (select erased_at from conversation_keys where conversation_id = $1)
       insert into conversation_keys (conversation_id, key_id, wrapped_key, erased_at, erased_by)
       values ($1, null, null, now(), $2)
       on conflict (conversation_id) do update
         set key_id = null, wrapped_key = null,
             erased_at = coalesce(conversation_keys.erased_at, now()),
             erased_by = coalesce(conversation_keys.erased_by, excluded.erased_by)
       returning erased_at, (select erased_at from prior) is not null as already`,
      [conversationId, by],
    );
    const erasedAt = rows[0].erased_at.toISOString();
    forgetOpened();
    const already = rows[0].already;
    this.cache.delete(conversationId);
    this.remember({ conversation_id: conversationId, key_id: null, wrapped_key: null, erased_at: rows[0].erased_at });
    return { erasedAt, already };
  }

  /** The conversations with a key row that `owner` started (erased ones included). */
  async conversationsOf(owner: string): Promise<string[]> {
    const { rows } = await this.pool.query<{ id: string }>(
      `select conversation_id::text as id from conversation_keys where owner = $1 order by created_at`,
      [owner],
    );
    return rows.map((r) => r.id);
  }

  /**
   * Re-wraps with the current PARLEY_ENCRYPTION_KEY every data key wrapped with another one, in
   * one transaction; returns how many. The content itself is sealed with the data keys and is
   * not touched.
   */
  async rotate(): Promise<number> {
    if (!this.cipher.currentKeyId) throw new Error('PARLEY_ENCRYPTION_KEY is not set: there is no key to rotate to.');
    const client = await this.pool.connect();
    try {
      await client.query('begin');
      const { rows } = await client.query<KeyRow>(
        `select conversation_id, key_id, wrapped_key, erased_at from conversation_keys
          where wrapped_key is not null and key_id <> $1 for update`,
        [this.cipher.currentKeyId],
      );
      for (const row of rows) {
        const binding = bindingOf(row.conversation_id);
        const plain = this.cipher.decrypt({ keyId: row.key_id!, ciphertext: row.wrapped_key! }, binding);
        const sealed = this.cipher.encrypt(plain, binding);
        await client.query(`update conversation_keys set key_id = $2, wrapped_key = $3 where conversation_id = $1`, [
          row.conversation_id,
          sealed.keyId,
          sealed.ciphertext,
        ]);
      }
      await client.query('commit');
      return rows.length;
    } catch (err) {
      await client.query('rollback').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  /**
   * Forgets what is cached of one conversation: a reader that found sealed content in a
   * conversation cached as keyless (another process gave it a key since) asks again.
   */
  forget(conversationId: string): void {
    this.cache.delete(conversationId);
  }

  /** Forgets every cached key (tests, and a process that wants erasures elsewhere seen at once). */
  clearCache(): void {
    this.cache.clear();
  }

  /**
   * The conversation's row, made with a new key if it has none, in one statement: the insert's
   * row, or else the row that was there. A row that another process committed while the insert
   * waited on it is not in the statement's snapshot; it is read again then.
   */
  private async created(
    conversationId: string,
    owner: string | null,
  ): Promise<{ row: KeyRow | undefined; key: string | undefined }> {
    const { key, wrapped } = this.newKey(conversationId);
    const { rows } = await this.pool.query<KeyRow>(
      `with made as (
         insert into conversation_keys (conversation_id, key_id, wrapped_key, owner) values ($1, $2, $3, $4)
         on conflict (conversation_id) do nothing
         returning conversation_id, key_id, wrapped_key, erased_at)
       select * from made
       union all
       select conversation_id, key_id, wrapped_key, erased_at from conversation_keys
        where conversation_id = $1 and not exists (select 1 from made)`,
      [conversationId, wrapped.keyId, wrapped.ciphertext, owner],
    );
    const row = rows[0] ?? (await this.rows([conversationId]))[0];
    // The row made here holds the key just made: no need to unwrap it again.
    return { row, key: row?.wrapped_key === wrapped.ciphertext ? key : undefined };
  }

  /** A new data key (base64) and its wrapping with PARLEY_ENCRYPTION_KEY, bound to the conversation. */
  private newKey(conversationId: string) {
    const key = randomBytes(32).toString('base64');
    return { key, wrapped: this.cipher.encrypt(key, bindingOf(conversationId)) };
  }

  private async rows(all: readonly string[]): Promise<KeyRow[]> {
    const ids = all.filter((id) => UUID.test(id));
    if (ids.length === 0) return [];
    const { rows } = await this.pool.query<KeyRow>(
      `select conversation_id, key_id, wrapped_key, erased_at from conversation_keys where conversation_id = any($1::uuid[])`,
      [ids],
    );
    return rows;
  }

  private cached(id: string): KeyState | null {
    const entry = this.cache.get(id);
    if (!entry) return null;
    this.cache.delete(id);
    if (Date.now() - entry.at > this.cacheTtlMs) return null;
    this.cache.set(id, entry);
    return entry.state;
  }

  /** The data key of a row, unwrapped; an error that names the conversation and the key when it does not open. */
  private unwrap(row: KeyRow): string {
    try {
      return this.cipher.decrypt({ keyId: row.key_id!, ciphertext: row.wrapped_key! }, bindingOf(row.conversation_id));
    } catch (err) {
      throw new DomainError(
        'INTERNAL',
        `The data key of conversation ${row.conversation_id} is wrapped with key ${row.key_id}, which is neither PARLEY_ENCRYPTION_KEY nor in PARLEY_PREVIOUS_ENCRYPTION_KEYS (or does not open it).`,
        { conversationId: row.conversation_id, keyId: row.key_id, cause: (err as Error).message },
      );
    }
  }

  private rememberNone(id: string): KeyState {
    const state: KeyState = { kind: 'none' };
    this.store(id, state);
    return state;
  }

  private store(id: string, state: KeyState): void {
    this.cache.set(id, { state, at: Date.now() });
    while (this.cache.size > this.cacheSize) this.cache.delete(this.cache.keys().next().value!);
  }

  /** `unwrapped`: the row's key, when this process made it (its base64). */
  private remember(row: KeyRow, unwrapped?: string): KeyState {
    const state: KeyState =
      row.wrapped_key === null
        ? { kind: 'erased', erasedAt: (row.erased_at ?? new Date()).toISOString() }
        : {
            kind: 'key',
            // A KeyObject: each seal and open uses it as is, without preparing a key from bytes.
            key: createSecretKey(Buffer.from(unwrapped ?? this.unwrap(row), 'base64')),
          };
    this.store(row.conversation_id, state);
    return state;
  }
}
