import { DomainError } from '@parley/core';
import type { McpErrorKind } from './mcp-client-config';

const CODE_BY_KIND = {
  connect: 'SERVICE_UNAVAILABLE',
  session_lost: 'SERVICE_UNAVAILABLE',
  protocol: 'SERVICE_UNAVAILABLE',
  timeout: 'TIMEOUT',
  aborted: 'SERVICE_UNAVAILABLE',
} as const;

/**
 * A protocol-level failure of an MCP server: unreachable, timed out, aborted, or answering with
 * a JSON-RPC error. A tool that ran and reported `isError` is not one of these: that is a result.
 */
export class McpClientError extends DomainError {
  constructor(
    readonly kind: McpErrorKind,
    readonly clientName: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(CODE_BY_KIND[kind], message, { mcpClient: clientName, reason: kind });
    this.name = 'McpClientError';
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}
