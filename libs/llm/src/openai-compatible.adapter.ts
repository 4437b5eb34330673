import { CallDeadline } from './call-deadline';
import { ChunkReader, type RawChunk } from './chunk-reader';
import { toLlmError } from './llm-error';
import type { LlmCallOptions, LlmPort, LlmRequest, LlmStreamEvent } from './llm.port';
import { OpenAiClientCache } from './openai-client-cache';
import { toChatParams } from './request-mapper';

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
    try {
      const client = this.clients.get(request.provider);
      const stream = await client.chat.completions.create(toChatParams(request), { signal: deadline.signal });
      phase = 'stream';
      const reader = new ChunkReader(request);
      for await (const chunk of stream) {
        deadline.pauseIdle();
        yield* reader.push(chunk as RawChunk);
        deadline.armIdle();
      }
      // The SDK ends the iteration quietly when its request is aborted: say why it ended.
      const cutShort = deadline.error();
      if (cutShort) throw cutShort;
      yield* reader.end();
    } catch (err) {
      throw deadline.error() ?? toLlmError(err, phase);
    } finally {
      deadline.dispose();
    }
  }
}
