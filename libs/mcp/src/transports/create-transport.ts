import type { McpClientConfig } from '../mcp-client-config';
import type { OpenedTransport, TransportOptions } from './opened-transport';
import { sseTransport } from './sse.transport';
import { stdioTransport } from './stdio.transport';
import { streamableHttpTransport } from './streamable-http.transport';

/** Picks the transport by the McpClient's mcpTransportType (ST, SH, SE). */
export function createTransport(config: McpClientConfig, options: TransportOptions): OpenedTransport {
  switch (config.transport) {
    case 'ST':
      return stdioTransport(config, options);
    case 'SH':
      return streamableHttpTransport(config);
    case 'SE':
      return sseTransport(config);
    default: {
      const unknown: never = config.transport;
      throw new Error(`Unknown MCP transport type ${String(unknown)}`);
    }
  }
}
