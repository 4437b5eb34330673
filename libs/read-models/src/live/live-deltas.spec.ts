import type { ChildProcess } from 'node:child_process';
import { NATS_RETRY_MS, NatsLink } from '@parley/platform';
import { freePort, killProcess, startNatsServer, until } from '@parley/testing';
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
    let publisher: NatsLink;
    let subscriber: NatsLink;
    beforeAll(async () => {
      publisher = await NatsLink.open('nats://127.0.0.1:4222', {});
      subscriber = await NatsLink.open('nats://127.0.0.1:4222', {});
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
      await subscriber.connection!.flush();
      new NatsLiveDeltas(publisher, prefix).publish('c1', delta);
      await expect(received).resolves.toEqual(delta);
    });

    it('sends the deltas a conversation publishes in one turn of the event loop as one message per call and kind, in order', async () => {
      const prefix = `live${Date.now()}j`;
      const seen: LiveDelta[] = [];
      const other: LiveDelta[] = [];
      new NatsLiveDeltas(subscriber, prefix).subscribe('c1', (d) => seen.push(d));
      new NatsLiveDeltas(subscriber, prefix).subscribe('c2', (d) => other.push(d));
      await subscriber.connection!.flush();
      const live = new NatsLiveDeltas(publisher, prefix);
      live.publish('c1', { turnNo: 1, callNo: 1, attempt: 1, reasoning: 'Let me ' });
      live.publish('c1', { turnNo: 1, callNo: 1, attempt: 1, reasoning: 'think.' });
      live.publish('c1', { turnNo: 1, callNo: 1, attempt: 1, text: 'Hel' });
      live.publish('c2', { turnNo: 3, callNo: 2, attempt: 1, text: 'Other' });
      live.publish('c1', { turnNo: 1, callNo: 1, attempt: 1, text: 'lo' });
      live.publish('c1', { turnNo: 1, callNo: 1, attempt: 2, text: 'Hi' });
      await new Promise((r) => setImmediate(r));
      // A delta published in a later turn of the loop goes on its own.
      live.publish('c1', { turnNo: 1, callNo: 1, attempt: 2, text: ' there' });
      await new Promise((r) => setImmediate(r));
      await publisher.connection!.flush();
      await until(() => seen.length === 4 && other.length === 1, 5000);
      expect(seen).toEqual([
        { turnNo: 1, callNo: 1, attempt: 1, reasoning: 'Let me think.' },
        { turnNo: 1, callNo: 1, attempt: 1, text: 'Hello' },
        { turnNo: 1, callNo: 1, attempt: 2, text: 'Hi' },
        { turnNo: 1, callNo: 1, attempt: 2, text: ' there' },
      ]);
      expect(other).toEqual([{ turnNo: 3, callNo: 2, attempt: 1, text: 'Other' }]);
    });

    it(
      'subscribes once a NATS that could not be reached at start answers, and drops deltas until then',
      async () => {
        const port = await freePort();
        const url = `nats://127.0.0.1:${port}`;
        const [late, later] = [await NatsLink.open(url, {}), await NatsLink.open(url, {})];
        let server: ChildProcess | undefined;
        try {
          const seen: LiveDelta[] = [];
          const cancelled: LiveDelta[] = [];
          new NatsLiveDeltas(late, 'p').subscribe('c1', (d) => seen.push(d));
          new NatsLiveDeltas(late, 'p').subscribe('c1', (d) => cancelled.push(d))();
          new NatsLiveDeltas(later, 'p').publish('c1', { ...delta, text: 'lost' });

          server = await startNatsServer(port);
          const connected = (link: NatsLink) => new Promise((resolve) => link.onConnected(resolve));
          await Promise.all([connected(late), connected(later)]);
          await late.connection!.flush();
          new NatsLiveDeltas(later, 'p').publish('c1', delta);
          await later.connection!.flush();
          await new Promise((r) => setTimeout(r, 200));
          expect(seen).toEqual([delta]);
          expect(cancelled).toEqual([]);
        } finally {
          await late.close();
          await later.close();
          if (server) await killProcess(server);
        }
      },
      5 * NATS_RETRY_MS,
    );
  });
});
