import { Inject, Injectable } from '@nestjs/common';
import { CONFIG, type Config } from '@parley/config';
import type { ToolDefinition } from '@parley/core';
import type { KindExecutor, RawOutput } from '../kind-executor';
import type { HttpToolConfig } from '../tool-config';
import { TOOL_CONFIG_SOURCE, type ToolConfigSource } from '../tool-config.source';
import { ToolFailure, type ToolCallContext } from '../tool-outcome';
import { toolMatchingEvent, toolValues } from '../tool-values';
import { configOfKind } from '../config-of-kind';
import { guardedFetch, readCapped, type OutboundRequest } from './guarded-fetch';
import { HostAllowList } from './host-allow-list';
import { OAuthTokenCache } from './oauth-token-cache';

/** HTTP tools (seed 002): the configured URL and method, with basic or bearer auth and headers. */
@Injectable()
export class HttpToolExecutor implements KindExecutor {
  private readonly allowList: HostAllowList;
  private readonly tokens: OAuthTokenCache;

  constructor(
    @Inject(CONFIG) config: Config,
    @Inject(TOOL_CONFIG_SOURCE) private readonly configs: ToolConfigSource,
  ) {
    this.allowList = new HostAllowList(config.tools.httpAllowedHosts);
    this.tokens = new OAuthTokenCache(this.allowList);
  }

  async run(
    def: ToolDefinition,
    args: Record<string, unknown>,
    ctx: ToolCallContext,
    signal: AbortSignal,
  ): Promise<RawOutput> {
    const config = await configOfKind(this.configs, def, 'http');
    let response = await this.send(config, def, args, ctx, signal);
    if (response.status === 401 && config.request?.auth === 'bearer') {
      // A token revoked before its expiry: fetch a fresh one and try once more.
      await response.body?.cancel();
      this.tokens.invalidate(config.request.bearer);
      response = await this.send(config, def, args, ctx, signal);
    }
    const { bytes, totalBytes } = await readCapped(response, ctx.maxOutputBytes);
    if (!response.ok) {
      const body = bytes.toString('utf8');
      const more = totalBytes > bytes.length ? ` …[truncated: ${totalBytes} bytes total]` : '';
      throw new ToolFailure(
        'TOOL_ERROR',
        `HTTP ${response.status} from ${new URL(response.url || config.url).host}: ${body}${more}`,
      );
    }
    const complete = totalBytes === bytes.length;
    if (complete && /json/i.test(response.headers.get('content-type') ?? '')) return { text: prettyJson(bytes) };
    return { text: bytes, totalBytes };
  }

  private async send(
    config: HttpToolConfig,
    def: ToolDefinition,
    args: Record<string, unknown>,
    ctx: ToolCallContext,
    signal: AbortSignal,
  ): Promise<Response> {
    const values = toolValues(args, config.schema);
    const headers: Record<string, string> = { accept: 'application/json, text/plain;q=0.9, */*;q=0.5' };
    for (const [name, value] of Object.entries(config.headers)) headers[name.toLowerCase()] = value;
    let url = config.url;
    const request: OutboundRequest = { method: 'POST', headers };
    if (!config.request) {
      // Seed 002's default: an unauthenticated POST of the tool-matching details.
      request.body = JSON.stringify(toolMatchingEvent(def.name, config.schema, values, ctx));
      headers['content-type'] = 'application/json';
    } else {
      request.method = config.method;
      if (config.method === 'GET') url = withQuery(config.url, values);
      else {
        request.body = JSON.stringify(values);
        headers['content-type'] = 'application/json';
      }
      if (config.request.auth === 'basic') {
        const { username, password } = config.request.basic;
        headers.authorization = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
      } else if (config.request.auth === 'bearer') {
        headers.authorization = `Bearer ${await this.tokens.accessToken(config.request.bearer, signal)}`;
      }
    }
    return guardedFetch(url, request, this.allowList, signal);
  }
}

function withQuery(base: string, values: Record<string, unknown>): string {
  const url = new URL(base);
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined || value === null) continue;
    url.searchParams.set(name, typeof value === 'object' ? JSON.stringify(value) : String(value));
  }
  return url.toString();
}

function prettyJson(bytes: Buffer): string {
  const text = bytes.toString('utf8');
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
