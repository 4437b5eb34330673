import { ParleyError } from './errors';
import { OPERATIONS, type CommandName, type QueryName } from './operations.generated';
import { sseFrames } from './sse';
import {
  CLOSING_EVENTS,
  type CallOptions,
  type ParleyTransport,
  type StreamFrame,
  type StreamOptions,
} from './transport';

export interface HttpTransportOptions {
  /** Parley's base URL (`http://localhost:3000`). */
  url: string;
  /** An API key or a JWT: sent as `Authorization: Bearer …`. */
  apiKey: string;
  /** Another fetch (a proxy's, a test's); default: the global one. */
  fetch?: typeof fetch;
  /** How often a dropped stream reconnects before it fails (default 5), and how long it waits between (default 500 ms). */
  streamRetries?: number;
  streamRetryMs?: number;
}

type Name = CommandName | QueryName;

/** Parley's HTTP API (`/api/v1/...`, docs/api.md): each operation on the route its table names. */
export class HttpTransport implements ParleyTransport {
  readonly url: string;
  private readonly fetch: typeof fetch;

  constructor(private readonly options: HttpTransportOptions) {
    this.url = options.url.replace(/\/+$/, '');
    this.fetch = options.fetch ?? ((...args) => fetch(...args));
  }

  async call(
    name: Name,
    input: Record<string, unknown>,
    options: CallOptions = {},
  ): Promise<{ body: unknown; done: boolean }> {
    const op = OPERATIONS[name];
    if (!op?.http) throw new ParleyError('NOT_FOUND', `${String(name)} has no HTTP route: use the NATS transport`);
    const rest: Record<string, unknown> = { ...input };
    const path = op.http.path.replace(/\{(\w+)\}/g, (_, field: string) => {
      const value = rest[field];
      delete rest[field];
      return encodeURIComponent(String(value ?? ''));
    });
    const hasBody = op.http.method === 'post' || op.http.method === 'put';
    const query = hasBody ? '' : queryString(rest);
    const res = await this.request(op.http.method.toUpperCase(), path + query, hasBody ? rest : undefined, {
      ...(options.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : {}),
    });
    if (res.status === 404 && 'nullIsNotFound' in op.http && op.http.nullIsNotFound) {
      const body = await readJson(res);
      if ((body as { error?: { code?: string } })?.error?.code === 'NOT_FOUND') return { body: null, done: true };
      throw ParleyError.fromBody(body, res.status);
    }
    const body = await readJson(res);
    if (!res.ok) throw ParleyError.fromBody(body, res.status);
    return { body, done: !(op.startsTurn && res.status === 202) };
  }

  /** A GET of a route outside the tables (`/api/v1/catalog/agents`), with the same credential and errors. */
  async get<T>(path: string): Promise<T> {
    const res = await this.request('GET', path);
    const body = await readJson(res);
    if (!res.ok) throw ParleyError.fromBody(body, res.status);
    return body as T;
  }

  /**
   * `GET /api/v1/conversations/{id}/stream`: Server-Sent Events. A dropped connection is resumed
   * with `Last-Event-ID` (the last stored event's revision), so no event is missed or repeated;
   * the live deltas of the gap are not replayed (their text is in the stored ChunksReceived).
   */
  async *stream(conversationId: string, options: StreamOptions = {}): AsyncGenerator<StreamFrame> {
    const { signal } = options;
    const retries = this.options.streamRetries ?? 5;
    const retryMs = this.options.streamRetryMs ?? 500;
    let last = options.after;
    let failures = 0;
    while (!signal?.aborted) {
      const local = new AbortController();
      const stop = () => local.abort();
      signal?.addEventListener('abort', stop, { once: true });
      try {
        const res = await this.fetch(`${this.url}/api/v1/conversations/${encodeURIComponent(conversationId)}/stream`, {
          headers: {
            authorization: `Bearer ${this.options.apiKey}`,
            accept: 'text/event-stream',
            ...(last === undefined ? {} : { 'last-event-id': String(last) }),
          },
          signal: local.signal,
        });
        if (!res.ok || !res.body) {
          const error = ParleyError.fromBody(await readJson(res), res.status);
          if (res.status < 500) throw error;
          throw Object.assign(error, { retry: true });
        }
        for await (const frame of sseFrames(res.body as unknown as AsyncIterable<Uint8Array>)) {
          if (frame.event === 'error') throw ParleyError.fromBody(frame.data);
          if (frame.id !== undefined) last = Number(frame.id);
          failures = 0;
          yield frame;
          if (CLOSING_EVENTS.has(frame.event)) return;
        }
      } catch (err) {
        if (signal?.aborted) return;
        const retryable = !(err instanceof ParleyError) || (err as ParleyError & { retry?: boolean }).retry === true;
        if (!retryable || ++failures > retries) throw err;
      } finally {
        signal?.removeEventListener('abort', stop);
        local.abort();
      }
      // The server ended the stream (a restart, a proxy's timeout): resume after the last event.
      if (!signal?.aborted) await sleep(retryMs, signal);
    }
  }

  async close(): Promise<void> {}

  private async request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    try {
      return await this.fetch(this.url + path, {
        method,
        headers: {
          authorization: `Bearer ${this.options.apiKey}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      throw new ParleyError(
        'SERVICE_UNAVAILABLE',
        `Parley at ${this.url} could not be reached: ${(err as Error).message}`,
      );
    }
  }
}

function queryString(input: Record<string, unknown>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(input))
    if (value !== undefined && value !== null) params.set(name, String(value));
  const text = params.toString();
  return text ? `?${text}` : '';
}

async function readJson(res: Response): Promise<unknown> {
  const text = await res.text().catch(() => '');
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

export const httpTransport = (options: HttpTransportOptions): HttpTransport => new HttpTransport(options);
