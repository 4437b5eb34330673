import { randomUUID, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { registerSecret } from '@parley/observability';
import { DomainError } from '@parley/platform';
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

const SUBJECT = /^[\w.@:-]{1,200}$/;

@Injectable()
export class ApiKeysService {
  constructor(@Inject(ApiKeyRepository) private readonly keys: ApiKeyRepository) {}

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
    return revoked;
  }

  list(): Promise<ApiKeyRecord[]> {
    return this.keys.list();
  }

  /** The principal of an active key, or null for an unknown or revoked one. */
  async authenticate(key: string): Promise<Principal | null> {
    const hash = digestApiKey(key);
    const found = await this.keys.findActiveByHash(hash);
    if (!found || !timingSafeEqual(Buffer.from(found.hash), Buffer.from(hash))) return null;
    void this.keys.touch(found.id).catch(() => undefined);
    // Only keys that authenticate are masked: a caller cannot grow the masker with junk.
    registerSecret(key);
    return { subject: found.subject, roles: found.roles, keyId: found.id };
  }
}
