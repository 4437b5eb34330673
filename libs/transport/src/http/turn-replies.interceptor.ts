import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import type { TurnReply } from '@parley/conversation';
import type { FastifyReply } from 'fastify';
import { map, type Observable } from 'rxjs';

/**
 * For commands that may wait for their turn: 200 with the outcome when the turn ended or
 * paused, 202 with where to follow it while it goes on (`wait`, docs/api.md).
 */
@Injectable()
export class TurnReplies implements NestInterceptor<TurnReply> {
  intercept(ctx: ExecutionContext, next: CallHandler<TurnReply>): Observable<unknown> {
    const res = ctx.switchToHttp().getResponse<FastifyReply>();
    return next.handle().pipe(
      map((reply) => {
        void res.status(reply.done ? 200 : 202);
        if (!reply.done)
          return { conversationId: reply.conversationId, status: reply.status, position: reply.position };
        const { done: _done, ...body } = reply;
        return body;
      }),
    );
  }
}
