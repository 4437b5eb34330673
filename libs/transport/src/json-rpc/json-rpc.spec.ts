import { DEV_PRINCIPAL, SubjectRateLimiter } from '@parley/auth';
import { DomainError } from '@parley/core';
import { z } from 'zod';
import type { RpcMethods } from '../nats/rpc-method';
import { JsonRpcDispatcher, jsonRpcCodeOf } from './json-rpc';

describe('JsonRpcDispatcher', () => {
  const internals: unknown[] = [];
  const methods: RpcMethods = {
    echo: { schema: z.strictObject({ text: z.string() }), run: async (_p, input: { text: string }) => input.text },
    broken: {
      schema: z.object({}),
      run: async () => {
        throw new TypeError("Cannot read properties of undefined (reading 'x')");
      },
    },
    busy: {
      schema: z.object({}),
      run: async () => {
        throw new DomainError('CONVERSATION_BUSY', 'A turn is running.', { status: 'RU' });
      },
    },
  };
  const dispatcher = new JsonRpcDispatcher(() => methods, {
    rateLimiter: new SubjectRateLimiter({ redis: null, prefix: 'json-rpc-spec', perMinute: 1000 }),
    onInternal: (err) => internals.push(err),
  });

  it('answers an unexpected failure -32603 with INTERNAL in data, the failure logged and not shown', async () => {
    const answer = await dispatcher.dispatch(
      { jsonrpc: '2.0', id: 1, method: 'broken' },
      { principal: DEV_PRINCIPAL, authorization: undefined },
    );
    expect(answer).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: {
        code: -32603,
        message: 'Something went wrong inside Parley; the error was logged.',
        data: { code: 'INTERNAL', message: 'Something went wrong inside Parley; the error was logged.' },
      },
    });
    expect(internals).toHaveLength(1);
    expect(JSON.stringify(answer)).not.toContain('undefined');
  });

  it('answers a Parley error in the server range with its body in data', async () => {
    const answer = await dispatcher.dispatch(
      { jsonrpc: '2.0', id: 'b', method: 'busy' },
      { principal: DEV_PRINCIPAL, authorization: undefined },
    );
    expect(answer).toEqual({
      jsonrpc: '2.0',
      id: 'b',
      error: {
        code: -32009,
        message: 'A turn is running.',
        data: { code: 'CONVERSATION_BUSY', message: 'A turn is running.', details: { status: 'RU' } },
      },
    });
  });

  it('maps every Parley code into -32602, -32603 or the server range -32000..-32099', () => {
    expect(jsonRpcCodeOf('VALIDATION_FAILED')).toBe(-32602);
    expect(jsonRpcCodeOf('INTERNAL')).toBe(-32603);
    expect(
      [
        'UNAUTHENTICATED',
        'FORBIDDEN',
        'NOT_FOUND',
        'IDEMPOTENCY_KEY_REUSED',
        'PAYLOAD_TOO_LARGE',
        'LLM_LIMIT_EXCEEDED',
        'RATE_LIMITED',
        'LLM_RUNTIME_ERROR',
        'SERVICE_UNAVAILABLE',
        'TIMEOUT',
      ].map((code) => jsonRpcCodeOf(code as never)),
    ).toEqual([-32001, -32003, -32004, -32009, -32013, -32022, -32029, -32052, -32053, -32054]);
  });

  it('refuses a batch over the limit whole, runs nothing, and answers ids of the wrong type with null', async () => {
    const calls = Array.from({ length: 101 }, (_, n) => ({ jsonrpc: '2.0', id: n, method: 'broken' }));
    internals.length = 0;
    expect(await dispatcher.dispatch(calls, { principal: DEV_PRINCIPAL, authorization: undefined })).toMatchObject({
      id: null,
      error: { code: -32600 },
    });
    expect(internals).toHaveLength(0);
    expect(
      await dispatcher.dispatch(
        { jsonrpc: '2.0', id: { no: 1 }, method: 'echo', params: { text: 'x' } },
        { principal: DEV_PRINCIPAL, authorization: undefined },
      ),
    ).toMatchObject({ id: null, error: { code: -32600, data: { details: { problems: [{ path: 'id' }] } } } });
    expect(
      await dispatcher.dispatch(
        { jsonrpc: '2.0', id: 2, method: 'echo', params: { text: 'x' } },
        { principal: DEV_PRINCIPAL, authorization: undefined },
      ),
    ).toEqual({ jsonrpc: '2.0', id: 2, result: 'x' });
  });
});
