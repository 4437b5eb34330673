import { Controller, Get, Headers, Inject, Param, Query, Res, type BeforeApplicationShutdown } from '@nestjs/common';
import { CurrentPrincipal, type Principal } from '@parley/auth';
import { CONFIG, type Config } from '@parley/config';
import { EVENT_STORE, type EventStore } from '@parley/event-store';
import { parseOrThrow } from '@parley/platform';
import { DomainError, errorBody } from '@parley/core';
import { AuditQueries, LIVE_DELTAS, type LiveDeltas } from '@parley/read-models';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { streamConversation } from './conversation-stream';

const HEARTBEAT_MS = 15_000;

export const streamQuery = z.strictObject({
  conversationId: z.uuid(),
  /** The revision after which to start; the Last-Event-ID header wins when both are sent. */
  lastEventId: z.coerce.number().int().min(-1).optional(),
});

/** GET /api/v1/conversations/{id}/stream: Server-Sent Events, resumable with Last-Event-ID. */
@Controller('api/v1')
export class StreamController implements BeforeApplicationShutdown {
  private readonly open = new Set<AbortController>();

  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(LIVE_DELTAS) private readonly live: LiveDeltas,
    @Inject(AuditQueries) private readonly audit: AuditQueries,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  @Get('conversations/:conversationId/stream')
  async stream(
    @CurrentPrincipal() principal: Principal,
    @Param() params: Record<string, string>,
    @Query() query: Record<string, string>,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const input = parseOrThrow(streamQuery, {
      ...query,
      ...params,
      ...(lastEventId === undefined ? {} : { lastEventId }),
    });
    await this.audit.assertReadable(principal, input.conversationId);
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
    try {
      await streamConversation(
        input.conversationId,
        input.lastEventId ?? -1,
        { write: (c) => raw.write(c) },
        stop.signal,
        {
          store: this.store,
          live: this.live,
          pollMs: this.config.eventStore.pollMs,
          heartbeatMs: HEARTBEAT_MS,
        },
      );
    } catch (err) {
      // The response is already streaming: the error travels as an SSE event in the API's shape.
      const body =
        err instanceof DomainError ? errorBody(err) : { error: { code: 'INTERNAL', message: 'The stream failed.' } };
      raw.write(`event: error\ndata: ${JSON.stringify(body)}\n\n`);
    } finally {
      this.open.delete(stop);
      raw.end();
    }
  }

  // Open streams never end by themselves; end them so the HTTP server can close.
  beforeApplicationShutdown(): void {
    for (const stop of this.open) stop.abort();
  }
}
