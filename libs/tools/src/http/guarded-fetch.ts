import { ToolFailure } from '../tool-outcome';
import type { HostAllowList } from './host-allow-list';

const MAX_REDIRECTS = 3;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** The only headers that follow a redirect to another origin: configured headers may carry secrets. */
const CROSS_ORIGIN_HEADERS = new Set(['accept', 'content-type']);

export interface OutboundRequest {
  method: string;
  headers: Record<string, string>;
  body?: string;
  /** The body holds credentials (a token request's secret): it never follows a redirect to another origin. */
  secretBody?: boolean;
}

/**
 * fetch that checks every hop against the allow-list: redirects are followed by hand (at most
 * three) so a listed host cannot bounce a call to an unlisted one, and neither credentials nor
 * configured headers (API keys, tenant ids) follow a redirect to another origin.
 */
export async function guardedFetch(
  url: string,
  request: OutboundRequest,
  allowList: HostAllowList,
  signal: AbortSignal,
): Promise<Response> {
  let current = new URL(url);
  let { method, body } = request;
  let headers = { ...request.headers };
  for (let hop = 0; ; hop++) {
    const refusal = allowList.refusal(current);
    if (refusal) throw new ToolFailure('NOT_ALLOWED', refusal);
    const response = await send(current, { method, headers, body, redirect: 'manual', signal });
    const location = response.headers.get('location');
    if (!REDIRECTS.has(response.status) || !location) return response;
    await response.body?.cancel();
    if (hop === MAX_REDIRECTS)
      throw new ToolFailure('TOOL_ERROR', `${current.host} redirected more than ${MAX_REDIRECTS} times.`);
    const next = new URL(location, current);
    // What browsers do: 303, and 301/302 after a POST, continue as a GET without the body.
    if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
      method = 'GET';
      body = undefined;
      delete headers['content-type'];
    }
    if (next.origin !== current.origin) {
      if (body !== undefined && request.secretBody)
        throw new ToolFailure(
          'NOT_ALLOWED',
          `${current.host} redirected a request carrying credentials to ${next.host}.`,
        );
      headers = Object.fromEntries(
        Object.entries(headers).filter(([name]) => CROSS_ORIGIN_HEADERS.has(name.toLowerCase())),
      );
    }
    current = next;
  }
}

async function send(url: URL, init: RequestInit & { signal: AbortSignal }): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (err) {
    if (init.signal.aborted) throw err;
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new ToolFailure(
      'UNAVAILABLE',
      `Could not reach ${url.host}: ${cause?.code ?? cause?.message ?? (err as Error).message}.`,
    );
  }
}

/** Reads a body up to `capBytes`, counting (and discarding) the rest, so a huge body costs no memory. */
export async function readCapped(response: Response, capBytes: number): Promise<{ bytes: Buffer; totalBytes: number }> {
  const chunks: Buffer[] = [];
  let kept = 0;
  let totalBytes = 0;
  if (response.body) {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      totalBytes += chunk.length;
      if (kept < capBytes) {
        const part = Buffer.from(chunk.subarray(0, capBytes - kept));
        chunks.push(part);
        kept += part.length;
      }
    }
  }
  return { bytes: Buffer.concat(chunks), totalBytes };
}
