import { connect, type NatsConnection } from 'nats';
import { InProcessLiveDeltas } from './in-process-live-deltas';
import type { LiveDelta } from './live-deltas.port';
import { NatsLiveDeltas } from './nats-live-deltas';

const delta: LiveDelta = { turnNo: 1, callNo: 1, attempt: 1, text: 'Hel' };

describe('live deltas', () => {
  it('in process: reaches the listeners of that conversation only, until they unsubscribe', () => {
    const live = new InProcessLiveDeltas();
    const seen: LiveDelta[] = [];
    const other: LiveDelta[] = [];
    const stop = live.subscribe('c1', (d) => seen.push(d));
    live.subscribe('c2', (d) => other.push(d));
    live.publish('c1', delta);
    stop();
    live.publish('c1', { ...delta, text: 'lo' });
    expect(seen).toEqual([delta]);
    expect(other).toEqual([]);
  });

  describe('over NATS', () => {
    let publisher: NatsConnection;
    let subscriber: NatsConnection;
    beforeAll(async () => {
      publisher = await connect({ servers: '127.0.0.1:4222' });
      subscriber = await connect({ servers: '127.0.0.1:4222' });
    });
    afterAll(async () => {
      await publisher.close();
      await subscriber.close();
    });

    it('carries a delta from one connection (a worker) to another (an SSE server)', async () => {
      const prefix = `live${Date.now()}`;
      const received = new Promise<LiveDelta>((resolve) => {
        new NatsLiveDeltas(subscriber, prefix).subscribe('c1', resolve);
      });
      await subscriber.flush();
      new NatsLiveDeltas(publisher, prefix).publish('c1', delta);
      await expect(received).resolves.toEqual(delta);
    });
  });
});
