import type { Type } from '@nestjs/common';
import type { Principal, Role } from '@parley/auth';
import type { z } from 'zod';

/** Who calls, and how: built by every front door the same way, read by every handler. */
export interface OperationContext {
  caller: Principal;
  /** Commands only: HTTP's `Idempotency-Key` header, the `commandId` field elsewhere. */
  idempotencyKey?: string;
  correlationId?: string;
  /**
   * The front door's rate-limit verdict on this request, when the operation starts a turn: its
   * command awaits it beside its running-turn slot, so it waits for Redis once, not twice.
   */
  rateLimit?: Promise<void>;
}

/** Where an operation answers over HTTP; the other front doors need no more than its name. */
export interface HttpRoute {
  method: 'get' | 'post' | 'put' | 'delete';
  /**
   * OpenAPI style (`/api/v1/conversations/{conversationId}`): each `{name}` is an input field.
   * The other fields come from the body (post, put) or the query string (get, delete).
   */
  path: string;
  /** The success status; a turn-starting operation answers 202 instead while its turn goes on. */
  status: number;
  /** Where the handler answers null, HTTP answers 404 naming this ('Agent'); other doors answer null. */
  nullIsNotFound?: string;
  /**
   * Input fields whose path segment has another name in the route pattern (`:id` for
   * `conversationId`): HTTP metrics and trace spans are labelled with the pattern.
   */
  segmentNames?: Readonly<Record<string, string>>;
}

/**
 * One command or query, as every front door serves it: HTTP, NATS and the OpenAPI document
 * are derived from these entries, and so is any later door (JSON-RPC, MCP). Nothing in it
 * belongs to one transport except `http`, which the others ignore.
 */
export interface Operation {
  /** The operationId, the NATS method, the JSON-RPC method and the MCP tool name. */
  readonly name: string;
  readonly kind: 'command' | 'query';
  readonly summary: string;
  /** The OpenAPI tag. */
  readonly tag: string;
  /** One input for every door: path parameters, query string and body merged; the NATS payload. */
  readonly input: z.ZodObject;
  readonly reply: z.ZodType;
  /** The caller needs one of these, else FORBIDDEN before anything runs; none: any caller. */
  readonly roles?: readonly Role[];
  /** Starts or resumes a turn: the rate limit's verdict is left to the command (`ctx.rateLimit`). */
  readonly startsTurn?: boolean;
  /** The Nest provider that does the work. */
  readonly handler: Type;
  run(handler: never, input: never, ctx: OperationContext): Promise<unknown>;
  readonly http?: HttpRoute;
}

/** An entry, typed where it is written: `run` gets the handler's instance and the input's output type. */
export interface OperationSpec<I extends z.ZodObject, H> extends Omit<Operation, 'input' | 'handler' | 'run'> {
  input: I;
  handler: Type<H>;
  run(handler: H, input: z.output<I>, ctx: OperationContext): Promise<unknown>;
}

export const defineOperation = <I extends z.ZodObject, H>(spec: OperationSpec<I, H>): Operation =>
  spec as unknown as Operation;

/** The providers a table needs, each once. */
export const handlersOf = (table: readonly Operation[]): Type[] => [...new Set(table.map((op) => op.handler))];
