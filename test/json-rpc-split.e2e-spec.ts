import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { CatalogService } from '@parley/catalog';
import { createLogger } from '@parley/observability';
import { createTestDatabase, type TestDatabase } from '@parley/testing';
import { createHttpApp } from '@parley/transport';
import { connect, headers, type NatsConnection } from 'nats';
import { CommandApiModule } from '../apps/command-api/src/command-api.module';
import { QueryApiModule } from '../apps/query-api/src/query-api.module';
import { ADMIN_KEY, testConfig } from './support/parley-app';
import { testCatalog } from './support/test-catalog';

/**
 * JSON-RPC in the split deployment: the command API serves the commands and the query API the
 * queries, and each answers every method on `POST /rpc` and `<prefix>.rpc`, the other table's
 * forwarded to that table's NATS door with the caller's credential.
 */
describe('JSON-RPC on the command API and the query API apart', () => {
  let db: TestDatabase;
  let commandApi: NestFastifyApplication;
  let queryApi: NestFastifyApplication;
  let nc: NatsConnection;
  const urls: Record<'command' | 'query', string> = { command: '', query: '' };
  let prefix = '';

  beforeAll(async () => {
    db = await createTestDatabase('json_rpc_split_e2e');
    const config = testConfig(db.url, { PORT: '0' });
    prefix = config.prefix;
    const logger = createLogger({ level: 'silent' });
    commandApi = await createHttpApp(CommandApiModule.forRoot(config), config, logger);
    queryApi = await createHttpApp(QueryApiModule.forRoot(config), config, logger);
    for (const [side, app] of [
      ['command', commandApi],
      ['query', queryApi],
    ] as const) {
      await app.listen(0, '127.0.0.1');
      urls[side] = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
    }
    await commandApi.get(CatalogService).apply(testCatalog('http://127.0.0.1:9'), { dryRun: false });
    nc = await connect({ servers: config.nats.url! });
  }, 60_000);
  afterAll(async () => {
    await nc?.close();
    await commandApi?.close();
    await queryApi?.close();
    await db?.drop();
  });

  const rpc = async (side: 'command' | 'query', message: unknown) => {
    const res = await fetch(`${urls[side]}/rpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_KEY}` },
      body: JSON.stringify(message),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const call = (id: number, method: string, params: Record<string, unknown>) => ({
    jsonrpc: '2.0',
    id,
    method,
    params,
  });

  it('runs a command on the query API and a query on the command API, through the other’s NATS door', async () => {
    const started = await rpc('query', call(1, 'startConversation', { agentCode: 'HELPDESK', actionCode: 'CHAT' }));
    expect(started).toMatchObject({ status: 200, body: { id: 1, result: { status: 'NS' } } });
    const conversationId = started.body.result.conversationId as string;

    const events = await rpc('command', call(2, 'getEvents', { conversationId }));
    expect(events.body.result.map((e: { type: string }) => e.type)).toEqual(['ConversationStarted']);
    const local = await rpc('query', call(3, 'getEvents', { conversationId }));
    expect(local.body.result).toEqual(events.body.result);

    // The forwarded call's errors are the other door's, mapped alike; nothing is appended.
    const { body } = await rpc('query', [
      call(4, 'sendMessage', { conversationId, content: 'hi', surprise: 1 }),
      call(5, 'terminateConversation', { conversationId: '00000000-0000-4000-8000-000000000001' }),
      call(6, 'noSuchMethod', {}),
    ]);
    expect(body).toEqual([
      {
        jsonrpc: '2.0',
        id: 4,
        error: expect.objectContaining({ code: -32602, data: expect.objectContaining({ code: 'VALIDATION_FAILED' }) }),
      },
      {
        jsonrpc: '2.0',
        id: 5,
        error: expect.objectContaining({ code: -32004, data: expect.objectContaining({ code: 'NOT_FOUND' }) }),
      },
      { jsonrpc: '2.0', id: 6, error: expect.objectContaining({ code: -32601 }) },
    ]);
    const after = await rpc('command', call(7, 'getEvents', { conversationId }));
    expect(after.body.result).toHaveLength(1);
  });

  it('answers both tables on <prefix>.rpc, whichever API takes the message', async () => {
    const h = headers();
    h.set('authorization', `Bearer ${ADMIN_KEY}`);
    for (let n = 0; n < 4; n++) {
      const msg = await nc.request(
        `${prefix}.rpc`,
        JSON.stringify([
          call(1, 'startConversation', { agentCode: 'HELPDESK', actionCode: 'CHAT' }),
          call(2, 'getAllActions', {}),
        ]),
        { headers: h, timeout: 10_000 },
      );
      const [started, actions] = msg.json<{ result: any }[]>();
      expect(started!.result).toMatchObject({ status: 'NS' });
      expect(actions!.result).toEqual(expect.arrayContaining([expect.objectContaining({ code: 'CHAT' })]));
    }
  });

  it('checks the credential before forwarding anything', async () => {
    const res = await fetch(`${urls.command}/rpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer pk_nobody_nobody_nobody_nobody_nobody' },
      body: JSON.stringify(call(1, 'getAllActions', {})),
    });
    expect(res.status).toBe(401);
  });
});
