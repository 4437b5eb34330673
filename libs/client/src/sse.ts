import type { StreamFrame } from './transport';

/** One SSE frame's fields; null for a comment (keep-alive) or a frame without data. */
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

/** The frames of an SSE byte stream, as they complete. */
export async function* sseFrames(body: AsyncIterable<Uint8Array>): AsyncGenerator<StreamFrame> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, '\n');
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const frame = parseFrame(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
      if (frame) yield frame;
    }
  }
}
