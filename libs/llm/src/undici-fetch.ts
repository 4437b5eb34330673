import { Agent, request, type Dispatcher } from 'undici';

/** Bodies sent as they are; anything else (a multipart upload, a stream) goes to the platform's fetch. */
const isPlainBody = (body: unknown): body is string | Uint8Array | null | undefined =>
  body === null || body === undefined || typeof body === 'string' || body instanceof Uint8Array;

/** Statuses whose responses have no body. */
const EMPTY = new Set([101, 204, 205, 304]);

type ResponseBody = Dispatcher.ResponseData['body'];

/**
 * The body's bytes for the Response. The SDK stops reading at `[DONE]`, usually before the body
 * has signalled its end: left that way, Node's stream iterator destroys the body with an
 * AbortError, and formats that error's stack, on every streamed call. Here the iterator only
 * lets go, and the rest (most often nothing but the end) is read out, up to undici's dump limit,
 * so that the connection goes back to the pool; an abort mid-stream still ends the body with
 * the abort's error.
 */
async function* bytesOf(body: ResponseBody): AsyncGenerator<Uint8Array> {
  try {
    for await (const chunk of body.iterator({ destroyOnReturn: false })) yield chunk as Uint8Array;
  } finally {
    body.dump().catch(() => undefined);
  }
}

/**
 * A `fetch` for the openai SDK on undici's request API and a keep-alive `Agent` of its own.
 * The SDK only needs a WHATWG `Response` back (status, headers, a body it streams); the
 * platform's fetch builds a full Request and runs the whole Fetch algorithm around the same
 * undici client, which costs a third of the SDK's CPU per streamed call (bench/README.md).
 * Aborting `init.signal` aborts the request, before the headers or mid-stream. Over TLS the
 * agent speaks HTTP/2 when the provider offers it, so concurrent calls share one connection.
 */
export function undiciFetch(dispatcher: Dispatcher = new Agent()): typeof fetch {
  return async (input, init = {}) => {
    if (input instanceof Request || !isPlainBody(init.body)) return fetch(input, init);
    const method = (init.method ?? 'GET').toUpperCase() as Dispatcher.HttpMethod;
    const res = await request(input instanceof URL ? input : String(input), {
      method,
      // The SDK passes a Headers already; anything else is normalised through one.
      headers: Object.fromEntries(init.headers instanceof Headers ? init.headers : new Headers(init.headers)),
      body: init.body ?? undefined,
      signal: init.signal ?? undefined,
      dispatcher,
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      if (Array.isArray(value)) for (const one of value) headers.append(name, one);
      else if (value !== undefined) headers.set(name, value);
    }
    const empty = EMPTY.has(res.statusCode) || method === 'HEAD';
    if (empty) {
      await res.body.dump();
      return new Response(null, { status: res.statusCode, headers });
    }
    // undici's Response takes any async iterable of bytes as its body, as its Request does; it
    // reads nothing from it until its own body is read.
    const bytes = bytesOf(res.body);
    const response = new Response(bytes as unknown as ReadableStream<Uint8Array>, { status: res.statusCode, headers });
    rawBodies.set(response, bytes);
    return response;
  };
}

/** The undici body behind each Response of `undiciFetch`, for `bodyBytes`. */
const rawBodies = new WeakMap<Response, AsyncIterable<Uint8Array>>();

/**
 * A response's body as bytes: for a Response of `undiciFetch`, straight from undici, without the
 * WHATWG stream wrapped around it (its reader and a promise per chunk); else its body stream.
 * Either is read once: the Response's own body is not to be read after.
 */
export function bodyBytes(response: Response): AsyncIterable<Uint8Array> | null {
  return rawBodies.get(response) ?? response.body;
}
