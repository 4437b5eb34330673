import { Injectable, type FactoryProvider } from '@nestjs/common';
import type { BoundOperation } from '../operations/bound-operations';
import { natsMethods } from '../nats/operation-methods';
import type { RpcMethod, RpcMethods } from '../nats/rpc-method';

/**
 * The methods JSON-RPC answers in this process: every table whose transport module is here (the
 * commands, the queries, or both) adds the same methods its NATS door serves. Filled once, at
 * boot, before any request is taken.
 */
@Injectable()
export class JsonRpcMethods {
  private readonly methods: Record<string, RpcMethod> = {};

  add(methods: RpcMethods): void {
    for (const [name, method] of Object.entries(methods)) {
      if (Object.hasOwn(this.methods, name)) throw new Error(`Two tables define the method '${name}'.`);
      this.methods[name] = method;
    }
  }

  get all(): RpcMethods {
    return this.methods;
  }
}

/**
 * Adds the table `operations` (its BoundOperation[] token) to JSON-RPC when JsonRpcModule is in
 * the app; does nothing otherwise.
 */
export function jsonRpcTable(operations: symbol): FactoryProvider {
  return {
    provide: Symbol(`json-rpc:${operations.description ?? 'table'}`),
    inject: [{ token: JsonRpcMethods, optional: true }, operations],
    useFactory: (registry: JsonRpcMethods | undefined, bound: BoundOperation[]) => {
      registry?.add(natsMethods(bound));
      return registry ?? null;
    },
  };
}
