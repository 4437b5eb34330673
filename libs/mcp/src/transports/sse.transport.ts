import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import type { McpClientConfig } from '../mcp-client-config';
import { serverUrl, type OpenedTransport } from './opened-transport';

/** The older HTTP+SSE transport: a GET event stream for answers, POSTs for requests. */
export function sseTransport(config: McpClientConfig): OpenedTransport {
  const headers = config.headers ?? {};
  const transport = new SSEClientTransport(serverUrl(config), { requestInit: { headers } });
  // Answers only arrive on the event stream: once it drops, requests on this session would
  // never be answered, so the session counts as lost.
  return { transport, lostOnError: true, alive: () => true };
}
