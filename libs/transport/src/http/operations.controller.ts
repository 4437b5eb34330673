import {
  Controller,
  HttpCode,
  Inject,
  Req,
  RequestMapping,
  RequestMethod,
  UseInterceptors,
  type Type,
} from '@nestjs/common';
import { Roles, StartsTurn } from '@parley/auth';
import { DomainError } from '@parley/core';
import type { HttpRoute, Operation } from '@parley/conversation';
import { parseOrThrow } from '@parley/platform';
import type { BoundOperation } from '../operations/bound-operations';
import { httpContext, httpInput, lastPathValue, routePattern, type OperationRequest } from './http-input';
import { TurnReplies } from './turn-replies.interceptor';

const METHODS: Record<HttpRoute['method'], RequestMethod> = {
  get: RequestMethod.GET,
  post: RequestMethod.POST,
  put: RequestMethod.PUT,
  delete: RequestMethod.DELETE,
};

/**
 * A Nest controller with one route per operation of `table` that has one, decorated as a
 * hand-written route would be: so the global AuthGuard reads its roles and `@StartsTurn()`,
 * TurnReplies answers 202 while a waited-for turn goes on, and HttpErrorFilter maps its errors.
 * `operations` is the token of the table's BoundOperation[] (bindOperations).
 */
export function operationsController(name: string, operations: symbol, table: readonly Operation[]): Type {
  @Controller()
  class OperationsController {
    private readonly bound: Map<string, BoundOperation>;

    constructor(@Inject(operations) bound: BoundOperation[]) {
      this.bound = new Map(bound.map((b) => [b.op.name, b]));
    }

    /** Not a route (it has no path): the body every route shares. */
    async answer(op: Operation, route: HttpRoute, request: OperationRequest): Promise<unknown> {
      const input = parseOrThrow(op.input, httpInput(route, request)) as Record<string, unknown>;
      const result = await this.bound.get(op.name)!.call(input, httpContext(op, request));
      if (result === null && route.nullIsNotFound)
        throw DomainError.notFound(route.nullIsNotFound, lastPathValue(route, input));
      return result;
    }
  }
  const prototype = OperationsController.prototype as unknown as Record<string, unknown>;
  for (const op of table) {
    const route = op.http;
    if (!route) continue;
    prototype[op.name] = function (this: OperationsController, request: OperationRequest) {
      return this.answer(op, route, request);
    };
    const descriptor = Object.getOwnPropertyDescriptor(prototype, op.name)!;
    const decorators = [RequestMapping({ path: routePattern(route), method: METHODS[route.method] })];
    decorators.push(HttpCode(route.status));
    if (op.roles) decorators.push(Roles(...op.roles));
    if (op.startsTurn) decorators.push(StartsTurn(), UseInterceptors(TurnReplies));
    for (const decorate of decorators) decorate(prototype, op.name, descriptor);
    Req()(prototype, op.name, 0);
  }
  Object.defineProperty(OperationsController, 'name', { value: name });
  return OperationsController;
}
