import type { TurnReply } from '../../api/replies';

/** A turn-running command's answer over HTTP: the TurnReply without `done`; 202 carries less. */
export type TurnAnswer = Omit<TurnReply, 'done'> & { accepted?: boolean };

/** One event of the conversation's SSE stream (`event:` and the parsed `data:`). */
export interface StreamFrame {
  event: string;
  id?: string;
  data: unknown;
}

export class ParleyHttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Parley's HTTP API as `parley chat` uses it: JSON in and out, one bearer key. */
export class ParleyClient {
  constructor(
    readonly baseUrl: string,
    private readonly key: string,
  ) {}

  async get<T>(path: string): Promise<T> {
    return (await this.request('GET', path)).body as T;
  }

  async post<T>(path: string, body: unknown): Promise<{ status: number; body: T }> {
    return (await this.request('POST', path, body)) as { status: number; body: T };
  }

  /** A turn-running command (wait for the turn's end); a 202 comes back with `accepted`. */
  async turn(path: string, body: unknown): Promise<TurnAnswer> {
    const { status, body: answer } = await this.post<TurnAnswer>(path, body);
    return status === 202 ? { ...answer, accepted: true } : answer;
  }

  /**
   * Follows `GET /api/v1/conversations/{id}/stream` until `signal` aborts it or the server ends
   * it, calling `onFrame` for each event and delta.
   */
  async stream(conversationId: string, onFrame: (frame: StreamFrame) => void, signal: AbortSignal): Promise<void> {
    const res = await fetch(`${this.baseUrl}/api/v1/conversations/${conversationId}/stream`, {
      headers: { authorization: `Bearer ${this.key}`, accept: 'text/event-stream' },
      signal,
    });
    if (!res.ok || !res.body) throw await errorOf(res);
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const frame = parseFrame(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
          if (frame) onFrame(frame);
        }
      }
    } catch (err) {
      if (!signal.aborted) throw err;
    }
  }

  private async request(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
    const res = await fetch(this.baseUrl + path, {
      method,
      headers: {
        authorization: `Bearer ${this.key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw await errorOf(res);
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  }
}

async function errorOf(res: Response): Promise<ParleyHttpError> {
  const text = await res.text().catch(() => '');
  try {
    const { error } = JSON.parse(text) as { error: { code: string; message: string } };
    return new ParleyHttpError(res.status, error.code, `${error.code}: ${error.message}`);
  } catch {
    return new ParleyHttpError(res.status, 'HTTP', `HTTP ${res.status} ${text.slice(0, 200)}`);
  }
}

/** One SSE frame's fields; null for a comment (keep-alive) or an empty frame. */
export function parseFrame(text: string): StreamFrame | null {
  let event = 'message';
  let id: string | undefined;
  const data: string[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') event = value;
    else if (field === 'id') id = value;
    else if (field === 'data') data.push(value);
  }
  if (data.length === 0) return null;
  const raw = data.join('\n');
  let parsed: unknown = raw;
  try {
    parsed = JSON.parse(raw);
  } catch {
    // not JSON: kept as text
  }
  return { event, ...(id === undefined ? {} : { id }), data: parsed };
}
