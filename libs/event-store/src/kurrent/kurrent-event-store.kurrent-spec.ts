import { createPgPool } from '@parley/platform';
import { createTestDatabase } from '@parley/testing';
import { describeEventStoreContract } from '../contract/event-store.contract';
import { KurrentEventStore } from './kurrent-event-store';

/**
 * The event-store contract against a real KurrentDB (or EventStoreDB 20+) server:
 * `EVENTSTORE_URL=kurrentdb://127.0.0.1:2113?tls=false npm run test:kurrent`. Not part of
 * `npm test`, whose machines have no KurrentDB server; without EVENTSTORE_URL it fails.
 */
const url = process.env.EVENTSTORE_URL;
if (!url) throw new Error('EVENTSTORE_URL is not set: the KurrentDB contract suite needs a KurrentDB server.');
const MAX_EVENT_BYTES = 2 * 1_048_576;
const options = { maxEventBytes: MAX_EVENT_BYTES, pollMs: 100 };

describeEventStoreContract('KurrentEventStore', async () => {
  const database = await createTestDatabase('kurrent_checkpoints');
  const pool = createPgPool({ url: database.url, max: 12 });
  const store = KurrentEventStore.connect(url, options);
  return {
    store,
    pool,
    maxEventBytes: MAX_EVENT_BYTES,
    reopen: async () => KurrentEventStore.connect(url, options),
    close: async () => {
      await store.close();
      await pool.end();
      await database.drop();
    },
  };
});
