import { randomUUID, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { registerSecret } from '@parley/observability';
import { DomainError } from '@parley/core';
import { LRUCache } from 'lru-cache';
import { isRole, ROLES, type Principal, type Role } from '../principal';
import { ApiKeyRepository, type ApiKeyRecord } from './api-key.repository';
import { digestApiKey, generateApiKey } from './api-key-secret';

export interface NewApiKey {
  subject: string;
  roles: Role[];
  name?: string;
}

/** The created key: `key` is the only time the secret is ever shown. */
export interface CreatedApiKey extends ApiKeyRecord {
  key: string;
}

// No `#`: a JWT's subject is `jwt:<iss>#<sub>`, so a key can never stand for a JWT's caller.
const SUBJECT = /^[\w.@:-]{1,200}$/;

/** `last_used_at` is written at most this often per key and instance. */
const TOUCH_EVERY_MS = 60_000;
/** Unknown keys remembered per instance: a flood of made-up keys costs one lookup each per trust time. */
const MISSES_KEPT = 10_000;

/**
 * API keys: created and revoked by admins, checked on every request. A key that authenticated
 * is trusted for `trustMs` (API_KEY_CACHE_MS) without asking the database again, so a client's
 * requests do not each cost a round trip; a key revoked through another instance stops working
 * there within that time, and at once on the instance that revoked it. A key that matched no
 * active key is remembered as unknown for as long, so the same made-up key is looked up once;
 * a new key is never among them (it was never sent before it existed).
 */
@Injectable()
export class ApiKeysService {
  /** Digest of a key that authenticated -> its principal. Only good keys get in. */
  private readonly trusted: LRUCache<string, Principal> | null;
  /** Digest of a key that matched no active key -> true. */
  private readonly unknown: LRUCache<string, true> | null;
  private readonly touched = new LRUCache<string, true>({ max: 10_000, ttl: TOUCH_EVERY_MS });

  constructor(
    @Inject(ApiKeyRepository) private readonly keys: ApiKeyRepository,
    trustMs = 0,
  ) {
    this.trusted = trustMs > 0 ? new LRUCache<string, Principal>({ max: 10_000, ttl: trustMs }) : null;
    this.unknown = trustMs > 0 ? new LRUCache<string, true>({ max: MISSES_KEPT, ttl: trustMs }) : null;
  }

  async create(input: NewApiKey): Promise<CreatedApiKey> {
    const problems = [];
    if (!SUBJECT.test(input.subject))
      problems.push({ path: 'subject', message: 'expected 1-200 letters, digits or . _ @ : -' });
    if (input.roles.length === 0 || !input.roles.every(isRole))
      problems.push({ path: 'roles', message: `expected one or more of ${ROLES.join(', ')}` });
    if (problems.length > 0) throw DomainError.validation(problems);
    const key = generateApiKey();
    registerSecret(key);
    const record = await this.keys.insert({
      id: randomUUID(),
      subject: input.subject,
      roles: [...new Set(input.roles)],
      name: input.name?.trim() || input.subject,
      hash: digestApiKey(key),
    });
    return { ...record, key };
  }

  async revoke(id: string): Promise<ApiKeyRecord> {
    const revoked = /^[0-9a-f-]{36}$/i.test(id) ? await this.keys.revoke(id) : null;
    if (!revoked) throw DomainError.notFound('API key', id);
    for (const [digest, principal] of this.trusted?.entries() ?? [])
      if (principal.keyId === id) this.trusted?.delete(digest);
    return revoked;
  }

  /** Whether any key is not revoked: a database that holds one has a way in. */
  hasActiveKey(): Promise<boolean> {
    return this.keys.hasActive();
  }

  list(): Promise<ApiKeyRecord[]> {
    return this.keys.list();
  }

  /** The principal of an active key, or null for an unknown or revoked one. */
  async authenticate(key: string): Promise<Principal | null> {
    const hash = digestApiKey(key);
    const trusted = this.trusted?.get(hash);
    if (trusted) return trusted;
    if (this.unknown?.has(hash)) return null;
    const found = await this.keys.findActiveByHash(hash);
    if (!found || !timingSafeEqual(Buffer.from(found.hash), Buffer.from(hash))) {
      this.unknown?.set(hash, true);
      return null;
    }
    if (!this.touched.has(found.id)) {
      this.touched.set(found.id, true);
      void this.keys.touch(found.id).catch(() => undefined);
    }
    // Only keys that authenticate are masked: a caller cannot grow the masker with junk.
    registerSecret(key);
    const principal: Principal = { subject: found.subject, roles: found.roles, keyId: found.id };
    this.trusted?.set(hash, principal);
    return principal;
  }
}
