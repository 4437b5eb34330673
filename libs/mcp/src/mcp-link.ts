import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { ExponentialBackoff, handleAll, retry } from 'cockatiel';
import { classifyCallError, describeError } from './classify-error';
import { McpClientError } from './mcp-client.error';
import type { McpClientConfigSource, McpErrorKind, McpMetrics } from './mcp-client-config';
import { McpSession } from './mcp-session';
import { createTransport } from './transports/create-transport';

/** The initialize handshake; a cold `npx` start of a stdio server can take this long. */
const CONNECT_TIMEOUT_MS = 20_000;
const connectPolicy = retry(handleAll, {
  maxAttempts: 5,
  backoff: new ExponentialBackoff({ initialDelay: 200, maxDelay: 2_000 }),
});

const FAILURE_TEXT: Record<McpErrorKind, string> = {
  connect: 'could not be reached',
  session_lost: 'lost its connection during the call',
  timeout: 'did not answer in time',
  aborted: 'call was aborted',
  protocol: 'answered with an error',
};

/** A retried request gets what is left of the caller's time, not a fresh allowance. */
const requestOptions = (signal: AbortSignal | undefined, deadline: number) => ({
  signal,
  timeout: Math.max(1, deadline - Date.now()),
});

/**
 * Runs one SDK request with a signal of its own that follows the caller's. The SDK adds an abort
 * listener to a request's signal and never removes it: on the caller's signal (a tool call's, a
 * composite of the turn's and a timeout) that listener kept the signal alive for good (Node keeps
 * a composite signal with listeners), one per MCP call. The request's own signal goes with it.
 */
async function withRequestSignal<T>(
  signal: AbortSignal | undefined,
  run: (signal: AbortSignal | undefined) => Promise<T>,
): Promise<T> {
  if (!signal) return run(undefined);
  const own = new AbortController();
  const forward = () => own.abort(signal.reason);
  if (signal.aborted) forward();
  else signal.addEventListener('abort', forward, { once: true });
  try {
    return await run(own.signal);
  } finally {
    signal.removeEventListener('abort', forward);
  }
}

export interface LinkDeps {
  source: McpClientConfigSource;
  metrics: McpMetrics | null;
  log(level: 'debug' | 'warn', message: string): void;
}

export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs: number;
}

/**
 * Everything the pool keeps for one McpClient: the live session (opened lazily, shared by every
 * conversation, opened once even when first calls race) and the server's cached tool list.
 */
export class McpLink {
  private live: McpSession | null = null;
  private opening: Promise<McpSession> | null = null;
  private tools: Tool[] | null = null;
  private readonly shutdown = new AbortController();

  constructor(
    readonly name: string,
    private readonly deps: LinkDeps,
  ) {}

  async listTools(options: CallOptions): Promise<Tool[]> {
    if (this.tools) return this.tools;
    return this.withSession(options, async (session, deadline) => {
      const tools: Tool[] = [];
      let cursor: string | undefined;
      do {
        const page = await withRequestSignal(options.signal, (signal) =>
          session.client.listTools(cursor ? { cursor } : {}, requestOptions(signal, deadline)),
        );
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor);
      if (this.live === session) this.tools = tools;
      return tools;
    });
  }

  callTool(toolName: string, args: Record<string, unknown>, options: CallOptions): Promise<CallToolResult> {
    return this.withSession(options, async (session, deadline) => {
      const params = { name: toolName, arguments: args };
      const result = await withRequestSignal(options.signal, (signal) =>
        session.client.callTool(params, undefined, requestOptions(signal, deadline)),
      );
      return result as CallToolResult;
    });
  }

  async close(): Promise<void> {
    this.shutdown.abort();
    const session = this.live ?? (await this.opening?.catch(() => null));
    this.live = null;
    await session?.close();
  }

  /** Runs a request; a session found dead before the request reached it is re-initialized once. */
  private async withSession<T>(
    options: CallOptions,
    request: (session: McpSession, deadline: number) => Promise<T>,
  ): Promise<T> {
    const deadline = Date.now() + options.timeoutMs;
    for (let attempt = 1; ; attempt++) {
      const session = await this.session(options.signal);
      try {
        return await session.use(() => request(session, deadline));
      } catch (err) {
        const kind = classifyCallError(err, options.signal);
        if (kind === 'session_lost' || kind === 'closed_mid_call') this.lost(session);
        if (kind === 'session_lost' && attempt === 1 && Date.now() < deadline) {
          this.deps.metrics?.error(this.name, 'session_lost');
          this.deps.log('debug', `MCP client '${this.name}': session lost (${describeError(err)}), re-initializing`);
          continue;
        }
        throw this.failure(kind === 'closed_mid_call' ? 'session_lost' : kind, err);
      }
    }
  }

  private async session(signal: AbortSignal | undefined): Promise<McpSession> {
    if (this.live && this.live.usable) return this.live;
    if (this.live) this.lost(this.live);
    this.opening ??= this.open().finally(() => (this.opening = null));
    if (!signal) return this.opening;
    signal.throwIfAborted();
    // The opening is shared: one caller giving up must not cancel it for the others.
    return new Promise<McpSession>((resolve, reject) => {
      const onAbort = () => reject(this.failure('aborted', signal.reason));
      signal.addEventListener('abort', onAbort, { once: true });
      this.opening!.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  private async open(): Promise<McpSession> {
    const config = await this.deps.source.configFor(this.name);
    try {
      const session = await connectPolicy.execute(() => this.connect(config), this.shutdown.signal);
      this.live = session;
      this.tools = null;
      return session;
    } catch (err) {
      if (err instanceof McpClientError) throw err;
      throw this.failure('connect', err);
    }
  }

  private async connect(config: Awaited<ReturnType<McpClientConfigSource['configFor']>>): Promise<McpSession> {
    this.shutdown.signal.throwIfAborted();
    const { transport, lostOnError, alive } = createTransport(config, {
      onServerLog: (line) => this.deps.log('debug', `MCP server '${this.name}': ${line}`),
    });
    const client = new Client(
      { name: 'parley', version: '1.0.0' },
      {
        capabilities: {},
        listChanged: {
          tools: {
            debounceMs: 50,
            onChanged: (err, tools) => {
              if (!err && tools && this.live === session) this.tools = tools;
            },
          },
        },
      },
    );
    const session = new McpSession(client, alive);
    client.onclose = () => this.lost(session);
    if (lostOnError) client.onerror = () => this.lost(session);
    try {
      await client.connect(transport, { timeout: CONNECT_TIMEOUT_MS, signal: this.shutdown.signal });
    } catch (err) {
      await session.close();
      this.deps.log('debug', `MCP client '${this.name}': connect failed: ${describeError(err)}`);
      throw err;
    }
    return session;
  }

  private lost(session: McpSession): void {
    if (this.live === session) {
      this.live = null;
      this.tools = null;
    }
    // Deferred: an event stream reports its drop before arming its own reconnect timer, and
    // closing it after that timer exists is what clears it.
    queueMicrotask(() => session.retire());
  }

  private failure(kind: McpErrorKind, err: unknown): McpClientError {
    this.deps.metrics?.error(this.name, kind);
    return new McpClientError(
      kind,
      this.name,
      `MCP server '${this.name}' ${FAILURE_TEXT[kind]}: ${describeError(err)}`,
      {
        cause: err,
      },
    );
  }
}
