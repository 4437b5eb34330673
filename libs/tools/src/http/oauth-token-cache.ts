import { createHash } from 'node:crypto';
import { ToolFailure } from '../tool-outcome';
import type { bearerAuthSchema } from '../tool-config';
import type { z } from 'zod';
import { guardedFetch, readCapped } from './guarded-fetch';
import type { HostAllowList } from './host-allow-list';

export type BearerConfig = z.output<typeof bearerAuthSchema>['bearer'];

interface CachedToken {
  accessToken: string;
  expiresAt: number;
  refreshToken: string | null;
}

/** Used when a token endpoint omits expires_in. */
const DEFAULT_LIFETIME_MS = 300_000;

/**
 * OAuth2 access tokens for bearer-authenticated HTTP tools (seed 002: client_credentials or
 * password grants), cached per grant (token URL, client, user, audience and a hash of the
 * secrets: tools that differ only in audience or secret never share a token) until shortly
 * before they expire, then refreshed with the refresh token when one was issued, else fetched again.
 */
export class OAuthTokenCache {
  private readonly tokens = new Map<string, CachedToken>();
  private readonly pending = new Map<string, Promise<CachedToken>>();

  constructor(
    private readonly allowList: HostAllowList,
    private readonly now: () => number = Date.now,
  ) {}

  async accessToken(bearer: BearerConfig, signal: AbortSignal): Promise<string> {
    const key = keyOf(bearer);
    const cached = this.tokens.get(key);
    if (cached && this.now() < cached.expiresAt) return cached.accessToken;
    let pending = this.pending.get(key);
    if (!pending) {
      pending = this.obtain(bearer, cached ?? null, signal).finally(() => this.pending.delete(key));
      this.pending.set(key, pending);
    }
    return (await pending).accessToken;
  }

  /** Drops the cached token after the tool endpoint rejected it (HTTP 401). */
  invalidate(bearer: BearerConfig): void {
    this.tokens.delete(keyOf(bearer));
  }

  private async obtain(bearer: BearerConfig, expired: CachedToken | null, signal: AbortSignal): Promise<CachedToken> {
    let token: CachedToken | null = null;
    if (expired?.refreshToken) {
      const form = { grant_type: 'refresh_token', refresh_token: expired.refreshToken, ...clientFields(bearer) };
      // A refused refresh is not fatal: the grant itself can still produce a new token.
      token = await this.request(bearer.refreshUrl ?? bearer.tokenUrl, form, signal).catch((err: unknown) => {
        if (signal.aborted) throw err;
        return null;
      });
    }
    token ??= await this.request(bearer.tokenUrl, grantFields(bearer), signal);
    this.tokens.set(keyOf(bearer), token);
    return token;
  }

  private async request(url: string, form: Record<string, string>, signal: AbortSignal): Promise<CachedToken> {
    const response = await guardedFetch(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: new URLSearchParams(form).toString(),
        secretBody: true,
      },
      this.allowList,
      signal,
    );
    const text = (await readCapped(response, 65_536)).bytes.toString('utf8');
    const host = new URL(url).host;
    if (!response.ok)
      throw new ToolFailure('UNAVAILABLE', `The token endpoint ${host} answered HTTP ${response.status}.`);
    let body: { access_token?: unknown; expires_in?: unknown; refresh_token?: unknown };
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      body = {};
    }
    if (typeof body.access_token !== 'string') {
      throw new ToolFailure('UNAVAILABLE', `The token endpoint ${host} returned no access_token.`);
    }
    const lifetimeMs = typeof body.expires_in === 'number' ? body.expires_in * 1000 : DEFAULT_LIFETIME_MS;
    // Renew a little early (a tenth of the lifetime, at most 30 s) so a token does not expire in flight.
    const margin = Math.min(30_000, lifetimeMs / 10);
    return {
      accessToken: body.access_token,
      expiresAt: this.now() + lifetimeMs - margin,
      refreshToken: typeof body.refresh_token === 'string' ? body.refresh_token : null,
    };
  }
}

function keyOf(bearer: BearerConfig): string {
  // The secrets are hashed so the key (kept in memory for the token's life) does not hold them.
  const secrets = createHash('sha256')
    .update(JSON.stringify([bearer.clientSecret ?? null, bearer.clientType === 'password' ? bearer.password : null]))
    .digest('base64url');
  return JSON.stringify([
    bearer.tokenUrl,
    bearer.clientType,
    bearer.clientId ?? null,
    bearer.clientType === 'password' ? bearer.username : null,
    bearer.audience ?? null,
    secrets,
  ]);
}

function clientFields(bearer: BearerConfig): Record<string, string> {
  const fields: Record<string, string> = {};
  if (bearer.clientId) fields.client_id = bearer.clientId;
  if (bearer.clientSecret) fields.client_secret = bearer.clientSecret;
  return fields;
}

function grantFields(bearer: BearerConfig): Record<string, string> {
  const fields: Record<string, string> = { grant_type: bearer.clientType, ...clientFields(bearer) };
  if (bearer.clientType === 'password') {
    fields.username = bearer.username;
    fields.password = bearer.password;
  }
  if (bearer.audience) fields.audience = bearer.audience;
  return fields;
}
