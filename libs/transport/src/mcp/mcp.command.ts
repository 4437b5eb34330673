import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { parleyConnection } from '@parley/conversation';
import type { Command } from 'commander';

/**
 * `parley mcp`: Parley as an MCP server on stdio, for MCP clients that spawn their servers. It
 * relays every message between stdio and a running Parley's `/mcp` (streamable HTTP) with the
 * caller's key, so the tools, resources, questions, progress and cancellation are those of the
 * HTTP server, checked there as every request is.
 */
export function registerMcpCommand(program: Command): void {
  program
    .command('mcp')
    .description('speak MCP on stdin/stdout, relayed to a running Parley (its /mcp, with a key)')
    .option('--url <url>', 'the Parley to talk to (default: http://localhost:<PORT>)')
    .option('--key <key>', 'an API key (default: the development key in <PARLEY_DATA_DIR>/admin.key)')
    .option('--key-file <file>', 'read the API key from this file')
    .action(async (flags: { url?: string; key?: string; keyFile?: string }) => {
      const { url, key } = await parleyConnection(flags);
      const stdio = new StdioServerTransport();
      process.stdin.once('end', () => void stdio.close());
      await relayStdio(new URL(`${url}/mcp`), key, stdio);
    });
}

type Id = string | number;

/**
 * Relays MCP messages between `stdio` (the client) and Parley's streamable HTTP endpoint; ends
 * when either side closes. A request Parley cannot be reached for is answered with an error.
 */
export async function relayStdio(url: URL, key: string, stdio: StdioServerTransport): Promise<void> {
  const http = new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${key}` } } });
  const initializing = new Set<Id>();
  let closed: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (closed = resolve));
  stdio.onmessage = (message: JSONRPCMessage) => {
    const id = 'id' in message ? (message.id as Id) : undefined;
    if ('method' in message && message.method === 'initialize' && id !== undefined) initializing.add(id);
    http.send(message).catch((err: unknown) => {
      if (id === undefined || !('method' in message)) return;
      void stdio.send({
        jsonrpc: '2.0',
        id,
        error: { code: -32603, message: `Parley at ${url.origin} did not take the request: ${(err as Error).message}` },
      });
    });
  };
  http.onmessage = (message: JSONRPCMessage) => {
    if ('result' in message && initializing.delete(message.id as Id)) {
      const version = (message.result as { protocolVersion?: string }).protocolVersion;
      if (version) http.setProtocolVersion(version);
    }
    void stdio.send(message);
  };
  http.onerror = (err) => process.stderr.write(`parley mcp: ${err.message}\n`);
  stdio.onclose = () => {
    void http
      .terminateSession()
      .catch(() => undefined)
      .finally(() => void http.close().finally(closed));
  };
  await http.start();
  await stdio.start();
  await done;
}
