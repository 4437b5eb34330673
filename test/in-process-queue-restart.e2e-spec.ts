import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { CatalogService } from '@parley/catalog';
import { loadConfig } from '@parley/config';
import { EVENT_STORE, type EventStore } from '@parley/event-store';
import { createLogger } from '@parley/observability';
import { ProjectionsService } from '@parley/read-models';
import { createTestDatabase, startSimulator, until, type Simulator, type TestDatabase } from '@parley/testing';
import { createHttpApp } from '@parley/transport';
import { randomBytes } from 'node:crypto';
import { AppModule } from '../apps/server/src/app.module';
import { ADMIN_KEY, callerOf } from './support/parley-app';
import { testCatalog } from './support/test-catalog';

/**
 * Without Redis (`npm start` as it comes) the turn queue lives in the process: a restart loses
 * its jobs and timers, and the turn dispatcher stores them again when the next process starts.
 */
describe('the in-process queue across a restart', () => {
  let db: TestDatabase;
  let simulator: Simulator;
  const apps: NestFastifyApplication[] = [];
  // Both processes share the prefix (so the dispatcher's checkpoint) and the key, as a restart does.
  const prefix = `t${randomBytes(5).toString('hex')}`;
  const encryptionKey = randomBytes(32).toString('hex');
  const config = () =>
    loadConfig({
      DATABASE_URL: db.url,
      PARLEY_PREFIX: prefix,
      PARLEY_ENCRYPTION_KEY: encryptionKey,
      PARLEY_ADMIN_API_KEY: ADMIN_KEY,
      LOG_LEVEL: 'silent',
    });

  beforeAll(async () => {
    db = await createTestDatabase('inproc_restart');
    simulator = await startSimulator();
  });
  afterAll(async () => {
    for (const app of apps) await app.close().catch(() => undefined);
    await simulator.close();
    await db.drop();
  });

  const startApp = async () => {
    const cfg = config();
    expect(cfg.redis.url).toBeNull();
    const app = await createHttpApp(AppModule.forRoot(cfg), cfg, createLogger({ level: 'silent' }));
    await app.listen(0, '127.0.0.1');
    apps.push(app);
    return { app, call: callerOf(`http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`) };
  };

  it('expires a question asked before the restart: its timer is stored again when the next process starts', async () => {
    const first = await startApp();
    const catalog = testCatalog(simulator.url) as any;
    catalog.configurations[0].questionTimeoutMs = 3000;
    await first.app.get(CatalogService).apply(catalog, { dryRun: false });
    simulator.script([
      {
        reply: {
          toolCalls: [{ name: 'AskUserQuestion', arguments: { questions: [{ key: 'k', question: 'Which one?' }] } }],
        },
      },
    ]);
    const id = (await first.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'ANSWER' })).body
      .conversationId as string;
    const asked = await first.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'help' });
    expect(asked.body.status).toBe('WA');
    await first.app.get(ProjectionsService).waitForPosition(asked.body.position, 10_000);
    // Past the dispatcher's own look at the question (about a second after it), which found its timer stored.
    await new Promise((r) => setTimeout(r, 1500));
    await first.app.close();
    apps.length = 0;

    const second = await startApp();
    const store = second.app.get<EventStore>(EVENT_STORE);
    const failedEvent = async () =>
      (await store.readStream(`conversation-${id}`)).find((e) => e.type === 'ConversationFailed');
    await until(async () => (await failedEvent()) !== undefined, 15_000, 100);
    expect((await failedEvent())!.data).toMatchObject({ code: 'QUESTION_TIMEOUT' });
  }, 40_000);

  it('rejects an approval asked before the restart as timed out: its timer is stored again, and the turn goes on', async () => {
    const first = await startApp();
    const catalog = testCatalog(simulator.url) as any;
    catalog.configurations[0].toolApprovalTimeoutMs = 3000;
    await first.app.get(CatalogService).apply(catalog, { dryRun: false });
    simulator.script([
      { when: { toolResult: { name: 'CANCEL_ORDER' } }, reply: { text: 'Not cancelled.' } },
      { reply: { toolCalls: [{ name: 'CANCEL_ORDER', arguments: { orderId: 'Q-1' }, id: 'call_q1' }] } },
    ]);
    const id = (await first.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'CANCEL' })).body
      .conversationId as string;
    const waiting = await first.call('POST', `/api/v1/conversations/${id}/messages`, { content: 'cancel Q-1' });
    expect(waiting.body).toMatchObject({ status: 'WA', pendingApprovals: [{ toolCallId: 'call_q1' }] });
    await first.app.get(ProjectionsService).waitForPosition(waiting.body.position, 10_000);
    await new Promise((r) => setTimeout(r, 1500));
    await first.app.close();
    apps.length = 0;

    const second = await startApp();
    const store = second.app.get<EventStore>(EVENT_STORE);
    const typed = async (type: string) => (await store.readStream(`conversation-${id}`)).filter((e) => e.type === type);
    await until(async () => (await typed('ConversationCompleted')).length > 0, 15_000, 100);
    expect((await typed('ToolCallRejected')).map((e) => e.data)).toEqual([
      expect.objectContaining({ toolCallId: 'call_q1', code: 'APPROVAL_TIMEOUT' }),
    ]);
    expect((await typed('ConversationCompleted'))[0].data).toMatchObject({ reply: 'Not cancelled.' });
  }, 40_000);
});
