import { Controller, Get, Headers, Inject, Param, Query, Res, type BeforeApplicationShutdown } from '@nestjs/common';
import { Authenticator, CurrentPrincipal, type Principal } from '@parley/auth';
import { CONFIG, type Config } from '@parley/config';
import { EVENT_STORE, type EventStore } from '@parley/event-store';
import { parseOrThrow } from '@parley/platform';
import { DomainError, errorBody } from '@parley/core';
import { AuditQueries, LIVE_DELTAS, type LiveDeltas } from '@parley/read-models';
import type { FastifyReply } from 'fastify';
import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import { streamConversation, type StreamSink } from './conversation-stream';
import { StreamHub } from './stream-hub';

const HEARTBEAT_MS = 15_000;

export const streamQuery = z.strictObject({
  conversationId: z.uuid(),
  /** The revision after which to start; the Last-Event-ID header wins when both are sent. */
  lastEventId: z.coerce.number().int().min(-1).optional(),
});

const errorFrame = (body: unknown) => `event: error\ndata: ${JSON.stringify(body)}\n\n`;

/**
 * The response as a sink that never holds more than `maxBufferedBytes` for a client that does
 * not read: past it the connection is dropped and `drop` stops the stream.
 */
function boundedSink(raw: ServerResponse, maxBufferedBytes: number, drop: () => void): StreamSink {
  return {
    write: (chunk) => {
      if (raw.destroyed) return true;
      const ok = raw.write(chunk);
      if (raw.writableLength > maxBufferedBytes) {
        raw.destroy();
        drop();
      }
      return ok;
    },
    drained: (signal) =>
      new Promise((resolve) => {
        const done = () => {
          raw.off('drain', done).off('close', done);
          signal.removeEventListener('abort', done);
          resolve();
        };
        raw.once('drain', done).once('close', done);
        signal.addEventListener('abort', done, { once: true });
      }),
  };
}

/** GET /api/v1/conversations/{id}/stream: Server-Sent Events, resumable with Last-Event-ID. */
@Controller('api/v1')
export class StreamController implements BeforeApplicationShutdown {
  private readonly open = new Set<AbortController>();

  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(LIVE_DELTAS) private readonly live: LiveDeltas,
    @Inject(AuditQueries) private readonly audit: AuditQueries,
    @Inject(Authenticator) private readonly authenticator: Authenticator,
    @Inject(StreamHub) private readonly hub: StreamHub,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  @Get('conversations/:conversationId/stream')
  async stream(
    @CurrentPrincipal() principal: Principal,
    @Param() params: Record<string, string>,
    @Query() query: Record<string, string>,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Headers('authorization') authorization: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const input = parseOrThrow(streamQuery, {
      ...query,
      ...params,
      ...(lastEventId === undefined ? {} : { lastEventId }),
    });
    await this.audit.assertReadable(principal, input.conversationId);
    const seat = this.hub.open(principal.subject, input.conversationId);
    const stop = new AbortController();
    this.open.add(stop);
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    raw.on('close', () => stop.abort());
    const sink = boundedSink(raw, this.config.sse.maxBufferedBytes, () => stop.abort());
    const recheck = setInterval(() => void this.recheck(authorization, sink, stop), this.config.sse.credentialCheckMs);
    try {
      await streamConversation(input.conversationId, input.lastEventId ?? -1, sink, stop.signal, {
        store: this.store,
        live: this.live,
        seat,
        heartbeatMs: HEARTBEAT_MS,
      });
    } catch (err) {
      // The response is already streaming: the error travels as an SSE event in the API's shape.
      const body =
        err instanceof DomainError ? errorBody(err) : { error: { code: 'INTERNAL', message: 'The stream failed.' } };
      sink.write(errorFrame(body));
    } finally {
      clearInterval(recheck);
      seat.release();
      this.open.delete(stop);
      raw.end();
    }
  }

  /** A credential that no longer authenticates (a revoked key, an expired JWT) ends its streams. */
  private async recheck(authorization: string | undefined, sink: StreamSink, stop: AbortController): Promise<void> {
    try {
      await this.authenticator.authenticate(authorization);
    } catch (err) {
      if (!(err instanceof DomainError) || err.code !== 'UNAUTHENTICATED' || stop.signal.aborted) return;
      sink.write(errorFrame(errorBody(err)));
      stop.abort();
    }
  }

  // Open streams never end by themselves; end them so the HTTP server can close.
  beforeApplicationShutdown(): void {
    for (const stop of this.open) stop.abort();
    this.hub.close();
  }
}
