import { randomUUID } from 'node:crypto';
import { Test } from '@nestjs/testing';
import { ConfigModule, loadConfig } from '@parley/config';
import { DatabaseModule } from '@parley/platform';
import { createTestDatabase, type TestDatabase } from '@parley/testing';
import { EVENT_STORE, type EventStore } from './event-store.port';
import { EventStoreModule } from './event-store.module';
import { rawStoreOf, SealingEventStore } from './content/sealing-event-store';
import { KurrentEventStore } from './kurrent/kurrent-event-store';
import { PostgresEventStore } from './postgres/postgres-event-store';

describe('EventStoreModule', () => {
  let database: TestDatabase;
  beforeAll(async () => (database = await createTestDatabase('event_store_module')));
  afterAll(() => database.drop());

  const boot = (env: Record<string, string>) =>
    Test.createTestingModule({
      imports: [
        ConfigModule.forRoot(loadConfig(env)),
        DatabaseModule.forRoot({ url: database.url }),
        EventStoreModule.forRoot(),
      ],
    }).compile();

  it('provides the PostgreSQL store over the app pool, honouring the configured size limit', async () => {
    const app = await boot({ EVENT_MAX_BYTES: '2048' });
    await app.init();
    const store = app.get<EventStore>(EVENT_STORE);
    // Content sealing over the adapter (no metrics module here: nothing between them).
    expect(store).toBeInstanceOf(SealingEventStore);
    expect(rawStoreOf(store)).toBeInstanceOf(PostgresEventStore);
    const stream = `mod-${randomUUID()}`;
    await store.append(stream, [{ eventId: randomUUID(), type: 'Booted', data: { ok: true } }]);
    expect(await store.readStream(stream)).toHaveLength(1);
    await expect(
      store.append(stream, [{ eventId: randomUUID(), type: 'Big', data: 'x'.repeat(4096) }]),
    ).rejects.toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    await app.close();
  });

  it('provides the KurrentDB store when EVENTSTORE_URL is set, and closes it on shutdown', async () => {
    const app = await boot({ EVENTSTORE_URL: 'kurrentdb://127.0.0.1:2113?tls=false' });
    await app.init();
    const store = app.get<EventStore>(EVENT_STORE);
    expect(rawStoreOf(store)).toBeInstanceOf(KurrentEventStore);
    const close = jest.spyOn(rawStoreOf(store), 'close');
    await app.close();
    expect(close).toHaveBeenCalled();
  });
});
