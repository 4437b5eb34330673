import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { McpClientConfig } from '../mcp-client-config';
import { serverUrl, type OpenedTransport } from './opened-transport';

export function streamableHttpTransport(config: McpClientConfig): OpenedTransport {
  const transport = new StreamableHTTPClientTransport(serverUrl(config), {
    requestInit: { headers: config.headers ?? {} },
    // The pool reconnects a whole session with its own backoff; a half-reconnected event stream
    // on a server that restarted would only keep a dead session id alive.
    reconnectionOptions: {
      maxRetries: 0,
      initialReconnectionDelay: 1000,
      maxReconnectionDelay: 1000,
      reconnectionDelayGrowFactor: 1,
    },
  });
  return { transport, lostOnError: true, alive: () => true };
}
