import { createPgPool } from '@parley/platform';
import { createTestDatabase } from '@parley/testing';
import { describeEventStoreContract } from '../contract/event-store.contract';
import { KurrentEventStore } from './kurrent-event-store';

const url = process.env.EVENTSTORE_URL;
const MAX_EVENT_BYTES = 2 * 1_048_576;
const options = { maxEventBytes: MAX_EVENT_BYTES, pollMs: 100 };

if (url) {
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
} else {
  describe.skip('KurrentEventStore — event-store contract: SKIPPED, EVENTSTORE_URL not set (no KurrentDB server)', () => {
    it('runs the whole contract suite against a KurrentDB server when EVENTSTORE_URL is set', () => undefined);
  });
}
