import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { McpClientError } from './mcp-client.error';
import type { McpErrorKind } from './mcp-client-config';

/**
 * Sorts an SDK failure of one request. A JSON-RPC error is the server's answer (protocol), a
 * closed connection mid-call may have run the tool (session_lost is not claimed then), and any
 * other transport failure means the request never reached a live session: an HTTP 404/400 for
 * an unknown session id, a refused connection, a transport that is already closed.
 */
export function classifyCallError(err: unknown, signal: AbortSignal | undefined): McpErrorKind | 'closed_mid_call' {
  if (signal?.aborted) return 'aborted';
  if (err instanceof McpClientError) return err.kind;
  if (err instanceof McpError) {
    if (err.code === ErrorCode.RequestTimeout) return 'timeout';
    if (err.code === ErrorCode.ConnectionClosed) return 'closed_mid_call';
    return 'protocol';
  }
  return 'session_lost';
}

export function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ? `${err.message} (${cause.code})` : err.message;
}
