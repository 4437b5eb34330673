/** The public API as the signed-in key sees it. The key lives in sessionStorage: gone with the tab. */
const KEY = 'parley.apiKey';

export const session = {
  key: (): string | null => sessionStorage.getItem(KEY),
  signIn: (key: string) => sessionStorage.setItem(KEY, key),
  signOut: () => sessionStorage.removeItem(KEY),
};

/** Parley's error body, `{error: {code, message, details?}}`, with the HTTP status. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

export interface Who {
  subject: string;
  roles: string[];
}

export const can = (who: Who, ...roles: string[]) => roles.some((r) => who.roles.includes(r));

type Query = Record<string, string | number | boolean | null | undefined>;

export function withQuery(path: string, query: Query = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

export interface CallOptions {
  method?: string;
  query?: Query;
  body?: unknown;
  /** Sent as it is (a YAML bundle), with this content type. */
  raw?: { text: string; type: string };
  key?: string;
  signal?: AbortSignal;
}

export async function api<T>(path: string, options: CallOptions = {}): Promise<T> {
  const headers: Record<string, string> = { authorization: `Bearer ${options.key ?? session.key() ?? ''}` };
  let body: string | undefined;
  if (options.raw) {
    headers['content-type'] = options.raw.type;
    body = options.raw.text;
  } else if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  const res = await fetch(withQuery(path, options.query), {
    method: options.method ?? 'GET',
    headers,
    body,
    signal: options.signal,
  });
  const text = await res.text();
  const parsed: unknown = text ? JSON.parse(text) : null;
  if (!res.ok) {
    const error = (parsed as { error?: { code: string; message: string; details?: unknown } } | null)?.error;
    throw new ApiError(res.status, error?.code ?? 'INTERNAL', error?.message ?? res.statusText, error?.details);
  }
  return parsed as T;
}

export interface SseMessage {
  id?: string;
  event: string;
  data: unknown;
}

/**
 * A Server-Sent Events stream read with fetch, so the key travels in the Authorization header
 * (EventSource cannot send one). Calls `onBatch` with every message of a network chunk at once.
 */
export async function readSse(path: string, onBatch: (messages: SseMessage[]) => void, signal: AbortSignal) {
  const res = await fetch(path, { headers: { authorization: `Bearer ${session.key() ?? ''}` }, signal });
  if (!res.ok || !res.body) {
    const body = (await res.json().catch(() => null)) as { error?: { code: string; message: string } } | null;
    throw new ApiError(res.status, body?.error?.code ?? 'INTERNAL', body?.error?.message ?? res.statusText);
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffer += value;
    const frames = buffer.split('\n\n');
    buffer = frames.pop() ?? '';
    const batch: SseMessage[] = [];
    for (const frame of frames) {
      const message: SseMessage = { event: 'message', data: null };
      const data: string[] = [];
      for (const line of frame.split('\n')) {
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const text = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'id') message.id = text;
        else if (field === 'event') message.event = text;
        else if (field === 'data') data.push(text);
      }
      if (data.length === 0) continue;
      message.data = JSON.parse(data.join('\n'));
      batch.push(message);
    }
    if (batch.length) onBatch(batch);
  }
}

/** Saves `text` as a file the browser downloads. */
export function download(name: string, type: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
