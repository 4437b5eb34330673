import { Logger } from '@nestjs/common';
import { connect, ErrorCode, type ConnectionOptions, type NatsConnection } from 'nats';

/**
 * Connection errors that say a setting is wrong rather than that the server is away: retrying
 * cannot help, so they stop the start as a malformed setting does.
 */
const SETTING_ERRORS = new Set<string>([
  ErrorCode.AuthorizationViolation,
  ErrorCode.AuthenticationExpired,
  ErrorCode.AccountExpired,
  ErrorCode.BadAuthentication,
  ErrorCode.BadCreds,
  ErrorCode.InvalidOption,
  ErrorCode.Tls,
  ErrorCode.WssRequired,
]);

/** Node's refusals of the server's certificate (an unknown CA, a name that does not match, an expired one). */
const isCertificateError = (code: string): boolean =>
  code.startsWith('ERR_TLS_') || /CERT|UNABLE_TO_VERIFY|SELF_SIGNED/.test(code);

/** How long the link waits between attempts while NATS has never answered. */
export const NATS_RETRY_MS = 2_000;

/**
 * The process's NATS connection as it comes and goes. NATS off (no URL): never a connection.
 * A server that cannot be reached at start does not stop the start: the link tries again every
 * NATS_RETRY_MS, meanwhile `connection` is null, and what needs NATS starts once it answers
 * (`onConnected`) — as when NATS goes away while Parley runs, where the driver reconnects for
 * ever. A refused setting (credentials, TLS) still stops the start.
 */
export class NatsLink {
  private current: NatsConnection | null = null;
  private readonly waiting = new Set<(nats: NatsConnection) => void>();
  private closed = false;
  private retry: NodeJS.Timeout | null = null;
  private readonly logger = new Logger('NatsLink');

  private constructor(
    readonly url: string | null,
    private readonly options: ConnectionOptions,
  ) {}

  /** A link for NATS off. */
  static off(): NatsLink {
    return new NatsLink(null, {});
  }

  /**
   * Connects to `url`, or starts trying again in the background when it cannot be reached.
   * Rejects only for a refused setting, with a sentence naming NATS_URL and the address.
   */
  static async open(url: string, options: ConnectionOptions): Promise<NatsLink> {
    const link = new NatsLink(url, { ...options, servers: url, maxReconnectAttempts: -1 });
    await link.attempt(true);
    return link;
  }

  get enabled(): boolean {
    return this.url !== null;
  }

  /** The connection, once NATS has answered (it reconnects by itself after that); null before, and when off. */
  get connection(): NatsConnection | null {
    return this.current;
  }

  /**
   * Runs `fn` with the connection: now if there is one, else when NATS first answers (never when
   * off or closed). Returns what takes back a call that has not run yet.
   */
  onConnected(fn: (nats: NatsConnection) => void): () => void {
    if (this.current) fn(this.current);
    else if (this.enabled && !this.closed) this.waiting.add(fn);
    return () => this.waiting.delete(fn);
  }

  /** Stops trying, and drains the connection (what is buffered is delivered before it closes). */
  async close(): Promise<void> {
    this.closed = true;
    this.waiting.clear();
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    const nats = this.current;
    if (nats && !nats.isClosed()) await nats.drain().catch(() => nats.close());
  }

  private async attempt(first: boolean): Promise<void> {
    this.retry = null;
    let nats: NatsConnection;
    try {
      nats = await connect(this.options);
    } catch (err) {
      const failure = `NATS at ${this.url} (NATS_URL) could not be reached`;
      const reason = `${failure}: ${err instanceof Error ? err.message : String(err)}`;
      const code = (err as { code?: unknown }).code;
      const refused = typeof code === 'string' && (SETTING_ERRORS.has(code) || isCertificateError(code));
      if (refused && first) throw new Error(failure, { cause: err });
      if (refused) this.logger.error(reason);
      else if (first) this.logger.warn(`${reason}; starting without it and trying again every ${NATS_RETRY_MS} ms`);
      this.scheduleRetry();
      return;
    }
    if (this.closed) {
      await nats.close();
      return;
    }
    this.current = nats;
    if (!first) this.logger.log(`NATS at ${this.url} answered: connected`);
    const waiting = [...this.waiting];
    this.waiting.clear();
    for (const fn of waiting) {
      try {
        fn(nats);
      } catch (err) {
        this.logger.error(
          `starting what needs NATS failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
        );
      }
    }
  }

  private scheduleRetry(): void {
    if (this.closed) return;
    this.retry = setTimeout(() => void this.attempt(false), NATS_RETRY_MS);
    this.retry.unref();
  }
}
