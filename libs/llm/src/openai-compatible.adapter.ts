import { CallDeadline } from './call-deadline';
import { ChunkReader, type RawChunk } from './chunk-reader';
import { toLlmError } from './llm-error';
import type { LlmCallOptions, LlmPort, LlmRequest, LlmStreamEvent } from './llm.port';
import { OpenAiClientCache } from './openai-client-cache';
import { toChatParams } from './request-mapper';
import { sseChunks } from './sse-chunks';
import { bodyBytes } from './undici-fetch';

/**
 * LlmPort over any OpenAI-compatible chat-completions endpoint, through the openai SDK.
 * One call is one attempt: retries and the breaker belong to LlmClient. Every failure
 * leaves as an LlmError.
 */
export class OpenAiCompatibleAdapter implements LlmPort {
  constructor(private readonly clients = new OpenAiClientCache()) {}

  async *stream(request: LlmRequest, options: LlmCallOptions = {}): AsyncIterable<LlmStreamEvent> {
    const deadline = new CallDeadline(options);
    let phase: 'request' | 'stream' = 'request';
    let read = false;
    try {
      const client = this.clients.get(request.provider);
      // The SDK builds and sends the request and turns an error status into its APIError; the
      // events are read here (sseChunks), at a fraction of the SDK's cost per chunk.
      const response = await client.chat.completions
        .create(toChatParams(request), { signal: deadline.signal })
        .asResponse();
      phase = 'stream';
      const body = bodyBytes(response);
      if (!body) throw new Error('The model answered with no body.');
      const reader = new ChunkReader(request);
      for await (const chunk of sseChunks(body, response.headers)) {
        deadline.pauseIdle();
        yield* reader.push(chunk as RawChunk);
        deadline.armIdle();
      }
      // An abort that came with the last bytes still ends the call as cut short.
      const cutShort = deadline.error();
      if (cutShort) throw cutShort;
      read = true;
      yield* reader.end();
    } catch (err) {
      throw deadline.error() ?? toLlmError(err, phase);
    } finally {
      // A caller that stops reading early (or a failure) leaves no request open behind it.
      if (!read) deadline.abandon();
      deadline.dispose();
    }
  }
}
