import type { Config } from '@parley/config';
import { COMMANDS } from '@parley/conversation';
import { DomainError, ERROR_STATUS, type ErrorBody } from '@parley/core';
import type { NatsLink } from '@parley/platform';
import { headers } from 'nats';
import { QUERIES } from '../operations/query-table';

/** Every method of both tables, and the NATS door that serves it: `cmd` or `qry`. */
const KINDS: ReadonlyMap<string, 'cmd' | 'qry'> = new Map([
  ...COMMANDS.map((op) => [op.name, 'cmd'] as const),
  ...QUERIES.map((op) => [op.name, 'qry'] as const),
]);

// Beyond the longest wait a command may hold its request: the reply is on its way or lost.
const FORWARD_GRACE_MS = 5_000;

/** Sends a call to the plain NATS door of the table that has it, with the caller's credential. */
export type Forward = (name: string, params: unknown, authorization: string | undefined) => Promise<unknown>;

/**
 * Where a process serves one table only (the command API, the query API), the methods of the
 * other are forwarded to `<prefix>.cmd.<name>` or `<prefix>.qry.<name>` as a plain NATS request
 * with the caller's own `authorization`: that door checks the caller, its roles, its rate limit and
 * the params, as for any NATS request. Undefined for a name neither table has.
 */
export function forwarderOf(config: Config, nats: NatsLink): (name: string) => Forward | undefined {
  return (name) => {
    const kind = KINDS.get(name);
    if (!kind) return undefined;
    return async (method, params, authorization) => {
      const connection = nats.connection;
      if (!connection)
        throw new DomainError(
          'SERVICE_UNAVAILABLE',
          `'${method}' is served by the ${kind === 'cmd' ? 'command' : 'query'} API, reached over NATS, which is not connected.`,
          { dependency: 'nats' },
        );
      const h = headers();
      if (authorization) h.set('authorization', authorization);
      let reply: { result?: unknown } & Partial<ErrorBody>;
      try {
        const msg = await connection.request(`${config.prefix}.${kind}.${method}`, JSON.stringify(params), {
          headers: h,
          timeout: config.limits.maxWaitMs + FORWARD_GRACE_MS,
        });
        reply = msg.json();
      } catch (err) {
        throw new DomainError(
          'SERVICE_UNAVAILABLE',
          `The ${kind === 'cmd' ? 'command' : 'query'} API did not answer '${method}' over NATS.`,
          { dependency: 'nats', reason: (err as { code?: string }).code ?? 'error' },
        );
      }
      if (reply.error) {
        const { code, message, details } = reply.error;
        throw new DomainError(Object.hasOwn(ERROR_STATUS, code) ? code : 'INTERNAL', message, details);
      }
      return reply.result;
    };
  };
}
