/** The output for the model and whether it was cut. */
export interface LimitedOutput {
  output: string;
  truncated: boolean;
}

/**
 * Cuts text to at most `maxBytes` of UTF-8 (never inside a character) and says so at the end,
 * with the full size, so the model knows it saw only a part. `totalBytes` is given when the
 * text is already a prefix of something larger (a response body read up to a cap).
 */
export function limitOutput(text: string | Buffer, maxBytes: number, totalBytes?: number): LimitedOutput {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  const total = Math.max(totalBytes ?? 0, bytes.length);
  if (total <= maxBytes) return { output: bytes.toString('utf8'), truncated: false };
  let end = Math.min(maxBytes, bytes.length);
  // Step back over continuation bytes (10xxxxxx) so the cut falls on a character boundary.
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--;
  return { output: `${bytes.subarray(0, end).toString('utf8')}\n…[truncated: ${total} bytes total]`, truncated: true };
}
