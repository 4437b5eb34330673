import {
  Body,
  type CallHandler,
  createParamDecorator,
  type ExecutionContext,
  Injectable,
  type NestInterceptor,
  type PipeTransform,
} from '@nestjs/common';
import type { Principal } from '@parley/auth';
import type { CommandContext, TurnReply } from '@parley/conversation';
import { parseOrThrow } from '@parley/platform';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { map, type Observable } from 'rxjs';

/**
 * The command's context: the authenticated caller and the request's `Idempotency-Key`
 * (API.md), as the shared command handlers take them.
 */
export const Command = createParamDecorator((_data: unknown, ctx: ExecutionContext): CommandContext => {
  const request = ctx.switchToHttp().getRequest<FastifyRequest & { principal: Principal }>();
  const key = request.headers['idempotency-key'];
  return { caller: request.principal, ...(typeof key === 'string' && key ? { idempotencyKey: key } : {}) };
});

type Schema<T> = Parameters<typeof parseOrThrow<T>>[0];

class SchemaPipe<T> implements PipeTransform<unknown, T> {
  constructor(private readonly schema: Schema<T>) {}

  transform(value: unknown): T {
    return parseOrThrow(this.schema, value ?? {});
  }
}

/** The body checked against `schema` (400 VALIDATION_FAILED naming each problem); no body is `{}`. */
export const ValidBody = <T>(schema: Schema<T>): ParameterDecorator => Body(new SchemaPipe(schema));

/**
 * For commands that may wait for their turn: 200 with the outcome when the turn ended or
 * paused, 202 with where to follow it while it goes on (API.md, `wait`).
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
