import { Inject, Injectable } from '@nestjs/common';
import { CONFIG, type Config } from '@parley/config';
import { registerSecret } from '@parley/observability';
import { DomainError } from '@parley/core';
import { ApiKeysService } from './api-keys/api-keys.service';
import { looksLikeApiKey, sameSecret } from './api-keys/api-key-secret';
import { JwtVerifier } from './jwt/jwt-verifier';
import { DEV_PRINCIPAL, type Principal, type Role } from './principal';

const BOOTSTRAP_ADMIN: Principal = Object.freeze({ subject: 'admin', roles: ['admin'] as Role[], keyId: 'bootstrap' });

/** Reads nats.js MsgHdrs (which answers '' for a missing key) or a plain record. */
export type NatsHeaders = { get(name: string): string } | Record<string, string | undefined> | undefined;

/**
 * Turns a credential into a Principal, the same way for HTTP and NATS: the bootstrap admin key
 * (PARLEY_ADMIN_API_KEY), an API key (`pk_…`), or a JWT when JWT_SECRET or JWT_JWKS_URL is set.
 */
@Injectable()
export class Authenticator {
  private readonly jwt: JwtVerifier | null;

  constructor(
    @Inject(CONFIG) private readonly config: Config,
    @Inject(ApiKeysService) private readonly apiKeys: ApiKeysService,
  ) {
    const jwt = config.security.jwt;
    // Every deployable that authenticates masks its credentials here; runDeployable does the same
    // for every deployable, this covers apps built without it (tests).
    registerSecret(config.security.adminApiKey);
    registerSecret(jwt.secret);
    this.jwt = JwtVerifier.isConfigured(jwt) ? new JwtVerifier(jwt) : null;
  }

  get enabled(): boolean {
    return this.config.security.authEnabled;
  }

  /** `authorization` is the header value: `Bearer <api key or JWT>`. */
  async authenticate(authorization: string | undefined): Promise<Principal> {
    if (!this.enabled) return DEV_PRINCIPAL;
    const token = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
    if (!token) throw new DomainError('UNAUTHENTICATED', 'Send a credential: Authorization: Bearer <API key or JWT>.');
    const admin = this.config.security.adminApiKey;
    if (admin && sameSecret(token, admin)) return BOOTSTRAP_ADMIN;
    if (looksLikeApiKey(token)) {
      const principal = await this.apiKeys.authenticate(token);
      if (!principal) throw new DomainError('UNAUTHENTICATED', 'The API key is unknown or revoked.');
      return principal;
    }
    if (this.jwt) return this.jwt.verify(token);
    throw new DomainError('UNAUTHENTICATED', 'The credential is not an API key and JWTs are not configured.');
  }

  /** NATS requests carry the same value as HTTP in the `authorization` message header. */
  authenticateNatsHeaders(headers: NatsHeaders): Promise<Principal> {
    return this.authenticate(headerValue(headers, 'authorization'));
  }
}

function headerValue(headers: NatsHeaders, name: string): string | undefined {
  if (!headers) return undefined;
  if (typeof headers.get === 'function') return (headers as { get(n: string): string }).get(name) || undefined;
  const record = headers as Record<string, string | undefined>;
  return record[name] ?? record[name.charAt(0).toUpperCase() + name.slice(1)];
}
