import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

/**
 * Requests still running when a session is found lost get this long to settle by themselves:
 * one whose POST was refused then fails as "never delivered" and is retried on a new session,
 * instead of being cut off as "connection closed" with an unknown outcome.
 */
const RETIRE_GRACE_MS = 1_000;

/** One initialized connection to a server; replaced as a whole when it is lost. */
export class McpSession {
  private closing: Promise<void> | null = null;
  private retired = false;
  private inflight = 0;

  constructor(
    readonly client: Client,
    private readonly alive: () => boolean,
  ) {}

  /** False once retired or closed, or once its server is known to be gone. */
  get usable(): boolean {
    return !this.retired && this.closing === null && this.alive();
  }

  async use<T>(request: (client: Client) => Promise<T>): Promise<T> {
    this.inflight++;
    try {
      return await request(this.client);
    } finally {
      this.inflight--;
      if (this.retired && this.inflight === 0) void this.close();
    }
  }

  /** Takes no new requests; closes once the running ones settle, or after a grace period. */
  retire(): void {
    if (this.retired) return;
    this.retired = true;
    if (this.inflight === 0) void this.close();
    else setTimeout(() => void this.close(), RETIRE_GRACE_MS).unref();
  }

  /** Closing a stdio session ends the child (stdin closed, then SIGTERM, then SIGKILL). */
  close(): Promise<void> {
    this.closing ??= this.client.close().catch(() => undefined);
    return this.closing;
  }
}
