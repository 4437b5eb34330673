import { COMMANDS } from '@parley/conversation';
import { z } from 'zod';
import { JSON_RPC_PATH, MAX_BATCH_CALLS } from '../json-rpc/json-rpc';
import { QUERIES } from '../operations/query-table';
import type { RouteDoc } from './openapi-routes';

const methods = [...COMMANDS, ...QUERIES].map((op) => op.name) as [string, ...string[]];
const id = z.union([z.string(), z.number(), z.null()]);

/** One call: the method is a command or query of the tables, params its NATS payload (path fields included). */
const rpcRequest = z.object({
  jsonrpc: z.literal('2.0'),
  method: z.enum(methods),
  params: z
    .record(z.string(), z.unknown())
    .optional()
    .describe("The operation's body plus its path fields by name (conversationId, …), and commandId for a command"),
  id: id.optional().describe('Left out: a notification, run and not answered'),
});

export const jsonRpcError = z.object({
  code: z
    .number()
    .int()
    .describe(
      '-32700 parse, -32600 invalid request, -32601 method not found, -32602 invalid params (VALIDATION_FAILED), ' +
        '-32603 internal; other Parley errors -32000 - (status - 400) for 4xx, -32050 - (status - 500) for 5xx',
    ),
  message: z.string(),
  data: z.object({
    code: z.string().describe("Parley's error code"),
    message: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
  }),
});

const rpcResponse = z.union([
  z.object({ jsonrpc: z.literal('2.0'), id, result: z.unknown() }),
  z.object({ jsonrpc: z.literal('2.0'), id, error: jsonRpcError }),
]);

/** `POST /rpc`, derived from the same tables as the routes: its methods are their names. */
export const JSON_RPC_ROUTE: RouteDoc = {
  method: 'post',
  path: JSON_RPC_PATH,
  operationId: 'jsonRpc',
  tag: 'json-rpc',
  summary: `JSON-RPC 2.0: a call, or a batch of at most ${MAX_BATCH_CALLS}; 204 when every call is a notification`,
  body: {
    name: 'JsonRpcRequest',
    schema: z.union([rpcRequest, z.array(rpcRequest).min(1).max(MAX_BATCH_CALLS)]),
  },
  status: 200,
  reply: z.union([rpcResponse, z.array(rpcResponse)]),
  jsonRpc: true,
};
