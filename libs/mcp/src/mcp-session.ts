import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

/** One initialized connection to a server; replaced as a whole when it is lost. */
export class McpSession {
  private closing: Promise<void> | null = null;

  constructor(
    readonly client: Client,
    private readonly alive: () => boolean,
  ) {}

  /** False once closed or once its server is known to be gone. */
  get usable(): boolean {
    return this.closing === null && this.alive();
  }

  /** Closing a stdio session ends the child (stdin closed, then SIGTERM, then SIGKILL). */
  close(): Promise<void> {
    this.closing ??= this.client.close().catch(() => undefined);
    return this.closing;
  }
}
