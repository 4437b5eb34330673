import { KurrentEventStore } from './kurrent-event-store';

/**
 * Needs no KurrentDB server: the store points at a port nobody listens on, as when the server is
 * down. Reads must fail with SERVICE_UNAVAILABLE rather than answer as if the streams were empty.
 */
describe('KurrentEventStore with its server unreachable', () => {
  const store = KurrentEventStore.connect('kurrentdb://127.0.0.1:1?tls=false', { maxEventBytes: 1024, pollMs: 100 });
  afterAll(() => store.close());

  it('fails a stream read with SERVICE_UNAVAILABLE', async () => {
    await expect(store.readStream('conversation-1')).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
  });

  it('fails streamRevisions instead of reporting the streams as missing', async () => {
    await expect(store.streamRevisions(['conversation-1', 'conversation-2'])).rejects.toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
    });
  });
});
