import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { McpClientError } from '../mcp-client.error';
import type { McpClientConfig } from '../mcp-client-config';

export interface OpenedTransport {
  transport: Transport;
  /**
   * True when any transport error means the connection is gone (an HTTP event stream that
   * dropped): the pool then opens a new session for the next call instead of waiting on it.
   */
  lostOnError: boolean;
  /** A cheap check before each request that the server is still there (stdio: the child lives). */
  alive(): boolean;
}

export interface TransportOptions {
  onServerLog(line: string): void;
}

/** The server URL of an HTTP transport; only http and https are accepted. */
export function serverUrl(config: McpClientConfig): URL {
  const url = URL.canParse(config.url ?? '') ? new URL(config.url!) : null;
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new McpClientError(
      'connect',
      config.name,
      `MCP client '${config.name}' needs an http(s) connection URL for transport ${config.transport} (got ${config.url ?? 'none'}).`,
    );
  }
  return url;
}
