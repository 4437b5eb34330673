import { Body, createParamDecorator, type ExecutionContext, type PipeTransform } from '@nestjs/common';
import type { DeferredRateLimit, Principal } from '@parley/auth';
import type { CommandContext } from '@parley/conversation';
import { parseOrThrow } from '@parley/platform';
import type { FastifyRequest } from 'fastify';

/**
 * The command's context: the authenticated caller, the request's `Idempotency-Key` (API.md) and,
 * on a `@StartsTurn()` route, the rate limit's verdict, as the shared command handlers take them.
 */
export const Command = createParamDecorator((_data: unknown, ctx: ExecutionContext): CommandContext => {
  const request = ctx.switchToHttp().getRequest<FastifyRequest & { principal: Principal } & DeferredRateLimit>();
  const key = request.headers['idempotency-key'];
  return {
    caller: request.principal,
    ...(typeof key === 'string' && key ? { idempotencyKey: key } : {}),
    ...(request.rateLimit ? { rateLimit: request.rateLimit } : {}),
  };
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
