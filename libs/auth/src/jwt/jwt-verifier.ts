import { DomainError } from '@parley/core';
import { isRole, type Principal } from '../principal';

export interface JwtOptions {
  /** HS256/384/512 shared secret. */
  secret: string | null;
  /** JWKS of the issuer, for asymmetric tokens (RS256, ES256, …). */
  jwksUrl: string | null;
  issuer: string | null;
  audience: string | null;
}

type Jose = typeof import('jose');
type KeyInput = Parameters<Jose['jwtVerify']>[1];

/**
 * Verifies bearer JWTs with `jose`. jose is ESM-only, so it is loaded on the first token, not
 * at import: processes (and tests) that never see a JWT never load it. Claims: `sub` is the
 * subject, `roles` (an array) the roles; unknown roles are ignored.
 */
export class JwtVerifier {
  private jose: Promise<Jose> | null = null;
  private jwks: KeyInput | null = null;

  constructor(private readonly options: JwtOptions) {}

  static isConfigured(options: JwtOptions): boolean {
    return Boolean(options.secret || options.jwksUrl);
  }

  async verify(token: string): Promise<Principal> {
    const jose = await (this.jose ??= import('jose'));
    const symmetric = this.algorithmOf(jose, token).startsWith('HS');
    const key = symmetric ? this.secretKey() : this.jwksKey(jose);
    try {
      const { payload } = await jose.jwtVerify(token, key, {
        issuer: this.options.issuer ?? undefined,
        audience: this.options.audience ?? undefined,
        algorithms: symmetric ? ['HS256', 'HS384', 'HS512'] : undefined,
      });
      if (typeof payload.sub !== 'string' || payload.sub.length === 0) throw unauthenticated('it has no sub claim');
      const roles = Array.isArray(payload.roles) ? payload.roles.filter(isRole) : [];
      return { subject: payload.sub, roles: [...new Set(roles)] };
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
