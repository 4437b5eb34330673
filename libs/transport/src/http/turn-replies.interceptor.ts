import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import { turnReplyBody, type TurnReply } from '@parley/conversation';
import type { FastifyReply } from 'fastify';
import { map, type Observable } from 'rxjs';

/**
 * For commands that may wait for their turn: 200 with the outcome when the turn ended or
 * paused (a failed turn included: `FA` with its `error`), 202 with where to follow it while it
 * goes on (`wait`, docs/api.md). NATS answers the same bodies (turnReplyBody).
 */
@Injectable()
export class TurnReplies implements NestInterceptor<TurnReply> {
  intercept(ctx: ExecutionContext, next: CallHandler<TurnReply>): Observable<unknown> {
    const res = ctx.switchToHttp().getResponse<FastifyReply>();
    return next.handle().pipe(
      map((reply) => {
        const { accepted, body } = turnReplyBody(reply);
        void res.status(accepted ? 202 : 200);
        return body;
      }),
    );
  }
}
