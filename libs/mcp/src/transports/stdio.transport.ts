import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpClientError } from '../mcp-client.error';
import type { McpClientConfig } from '../mcp-client-config';
import type { OpenedTransport, TransportOptions } from './opened-transport';

/**
 * Spawns the server as a child process. Its stderr is piped to the log rather than inherited,
 * so a chatty server does not write over Parley's own structured output.
 */
export function stdioTransport(config: McpClientConfig, options: TransportOptions): OpenedTransport {
  if (!config.command) {
    throw new McpClientError('connect', config.name, `MCP client '${config.name}' uses stdio but names no command.`);
  }
  const transport = new StdioClientTransport({
    command: config.command,
    args: config.args ?? [],
    env: config.env,
    cwd: config.cwd,
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (chunk: Buffer) => options.onServerLog(chunk.toString('utf8').trimEnd()));
  // A malformed line on stdout is the server's problem, not a lost connection: only the child's
  // exit (onclose) ends this connection.
  return { transport, lostOnError: false, alive: () => isRunning(transport.pid) };
}

/**
 * The child's exit is reported a moment before its pipes close; a request written in between
 * would be lost, so a reaped child counts as gone before the transport says so.
 */
function isRunning(pid: number | null): boolean {
  if (pid === null) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
