import { Body, createParamDecorator, type ExecutionContext, type PipeTransform } from '@nestjs/common';
import type { Principal } from '@parley/auth';
import type { CommandContext } from '@parley/conversation';
import { parseOrThrow } from '@parley/platform';
import type { FastifyRequest } from 'fastify';

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
