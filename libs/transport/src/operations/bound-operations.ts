import type { FactoryProvider } from '@nestjs/common';
import { handlersOf, type Operation, type OperationContext } from '@parley/conversation';

/** An operation with its handler resolved: what a front door calls once it has checked the caller and the input. */
export interface BoundOperation {
  readonly op: Operation;
  call(input: unknown, ctx: OperationContext): Promise<unknown>;
}

export const COMMAND_OPERATIONS = Symbol('parley.command-operations');
export const QUERY_OPERATIONS = Symbol('parley.query-operations');

/**
 * `table` bound to its handlers, injected once for every door of the app (HTTP, NATS, and any
 * door derived later). A handler no module provides stops the boot, naming it.
 */
export function bindOperations(provide: symbol, table: readonly Operation[]): FactoryProvider<BoundOperation[]> {
  const handlers = handlersOf(table);
  return {
    provide,
    inject: handlers,
    useFactory: (...instances: unknown[]) =>
      table.map((op) => {
        const handler = instances[handlers.indexOf(op.handler)];
        return { op, call: (input, ctx) => op.run(handler as never, input as never, ctx) };
      }),
  };
}
