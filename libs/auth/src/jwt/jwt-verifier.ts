import { DomainError } from '@parley/core';
import { isRole, type Principal } from '../principal';

export interface JwtOptions {
  /** HS256/384/512 shared secret. */
  secret: string | null;
  /** JWKS of the issuer, for asymmetric tokens (RS256, ES256, …). */
  jwksUrl: string | null;
  /** Required by the configuration whenever JWTs are on; every token must carry both. */
  issuer: string | null;
  audience: string | null;
  /** Longest lifetime (`exp` − `iat`, or `exp` − now) a token may have. */
  maxAgeSeconds: number;
  /** The claim that holds the roles, namespaced so that an issuer's own `roles` claim does not grant Parley's. */
  rolesClaim: string;
}

type Jose = typeof import('jose');
type KeyInput = Parameters<Jose['jwtVerify']>[1];

/** A JWT's subject is `jwt:<iss>#<sub>`: API-key subjects cannot hold `#`, so neither can stand for the other. */
export const jwtSubject = (issuer: string, sub: string): string => `jwt:${issuer}#${sub}`;

/**
 * Verifies bearer JWTs with `jose`. jose is ESM-only, so it is loaded on the first token, not
 * at import: processes (and tests) that never see a JWT never load it. Every token needs `iss`,
 * `aud`, `exp` and `sub`; the roles come from `rolesClaim` (an array; unknown roles are ignored).
 */
export class JwtVerifier {
  private jose: Promise<Jose> | null = null;
  private jwks: KeyInput | null = null;

  constructor(private readonly options: JwtOptions) {}

  static isConfigured(options: Pick<JwtOptions, 'secret' | 'jwksUrl'>): boolean {
    return Boolean(options.secret || options.jwksUrl);
  }

  async verify(token: string): Promise<Principal> {
    const { issuer, audience } = this.options;
    if (!issuer || !audience) throw unauthenticated('no JWT_ISSUER and JWT_AUDIENCE are configured');
    const jose = await (this.jose ??= import('jose'));
    const symmetric = this.algorithmOf(jose, token).startsWith('HS');
    const key = symmetric ? this.secretKey() : this.jwksKey(jose);
    try {
      const { payload } = await jose.jwtVerify(token, key, {
        issuer,
        audience,
        requiredClaims: ['iss', 'aud', 'exp', 'sub'],
        algorithms: symmetric ? ['HS256', 'HS384', 'HS512'] : undefined,
      });
      if (typeof payload.sub !== 'string' || payload.sub.length === 0) throw unauthenticated('it has no sub claim');
      const issuedAt = typeof payload.iat === 'number' ? payload.iat : Math.floor(Date.now() / 1000);
      if ((payload.exp as number) - issuedAt > this.options.maxAgeSeconds)
        throw unauthenticated(`it lives longer than ${this.options.maxAgeSeconds} s`);
      const claimed = payload[this.options.rolesClaim];
      const roles = Array.isArray(claimed) ? claimed.filter(isRole) : [];
      return { subject: jwtSubject(issuer, payload.sub), roles: [...new Set(roles)] };
    } catch (err) {
      if (err instanceof DomainError) throw err;
      throw unauthenticated((err as { code?: string }).code ?? 'its signature or claims do not verify');
    }
  }

  private algorithmOf(jose: Jose, token: string): string {
    try {
      return jose.decodeProtectedHeader(token).alg ?? '';
    } catch {
      throw unauthenticated('it is not a JWT');
    }
  }

  private secretKey(): KeyInput {
    if (!this.options.secret) throw unauthenticated('symmetric tokens are not accepted');
    return new TextEncoder().encode(this.options.secret);
  }

  private jwksKey(jose: Jose): KeyInput {
    if (!this.options.jwksUrl) throw unauthenticated('asymmetric tokens are not accepted');
    return (this.jwks ??= jose.createRemoteJWKSet(new URL(this.options.jwksUrl)) as unknown as KeyInput);
  }
}

function unauthenticated(reason: string): DomainError {
  return new DomainError('UNAUTHENTICATED', `The bearer token is not valid: ${reason}.`);
}
