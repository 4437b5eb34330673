import { loadConfig } from '@parley/config';
import { connectedRedis, type Redis } from '@parley/platform';
import { freePort, killProcess, startRedisServer, until } from '@parley/testing';
import { randomBytes } from 'node:crypto';
import { ConversationSignals } from './conversation-signals';

const REDIS_URL = process.env.PARLEY_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('ConversationSignals announcements across processes', () => {
  const prefix = `test-${randomBytes(4).toString('hex')}`;
  const config = loadConfig({ PARLEY_PREFIX: prefix });
  const channel = `${prefix}:turn-announcements`;
  let connections: Redis[];
  let here: ConversationSignals;
  let there: ConversationSignals;

  beforeAll(async () => {
    connections = await Promise.all([connectedRedis(REDIS_URL), connectedRedis(REDIS_URL)]);
    // Two processes' signals, each on its own Redis connection.
    here = new ConversationSignals(connections[0], config);
    there = new ConversationSignals(connections[1], config);
  });

  afterAll(async () => {
    await Promise.all([here.onModuleDestroy(), there.onModuleDestroy()]);
    await Promise.all(connections.map((c) => c.quit()));
  });

  /** Resolves once `count` connections listen on the channel. */
  const subscribers = (count: number) =>
    until(
      async () => {
        const [, n] = (await connections[0].pubsub('NUMSUB', channel)) as [string, number];
        return Number(n) >= count;
      },
      5_000,
      10,
    );

  it("tells the other process's listeners of that conversation, and not this process's own", async () => {
    const heard: string[] = [];
    const offs = [
      there.onAnnounced('c-1', () => heard.push('there c-1')),
      there.onAnnounced('c-2', () => heard.push('there c-2')),
      here.onAnnounced('c-1', () => heard.push('here c-1')),
    ];
    await subscribers(2);

    await here.announce('c-1');
    // A second announcement, from the other side, marks when the first must have arrived.
    await there.announce('c-2');
    await until(() => heard.includes('there c-1'), 5_000, 10);
    await new Promise((resolve) => setTimeout(resolve, 50));

    expect(heard).toEqual(['there c-1']);
    for (const off of offs) off();
  });

  it('stops calling a listener once it is removed', async () => {
    const heard: string[] = [];
    const off = there.onAnnounced('c-3', () => heard.push('first'));
    there.onAnnounced('c-3', () => heard.push('second'));
    await subscribers(2);
    off();

    await here.announce('c-3');
    await until(() => heard.length > 0, 5_000, 10);

    expect(heard).toEqual(['second']);
  });

  it('listens once Redis is back when it was down as the first listener came', async () => {
    const port = await freePort();
    let server = await startRedisServer(port);
    const url = `redis://127.0.0.1:${port}`;
    const [listening, announcing] = await Promise.all([connectedRedis(url), connectedRedis(url)]);
    const listener = new ConversationSignals(listening, config);
    const announcer = new ConversationSignals(announcing, config);
    try {
      await killProcess(server);
      const heard: string[] = [];
      listener.onAnnounced('c-4', () => heard.push('c-4'));
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      server = await startRedisServer(port);

      await until(
        async () => {
          await announcer.announce('c-4').catch(() => undefined);
          return heard.length > 0;
        },
        15_000,
        200,
      );

      expect(heard[0]).toBe('c-4');
    } finally {
      await Promise.all([listener.onModuleDestroy(), announcer.onModuleDestroy()]);
      listening.disconnect();
      announcing.disconnect();
      await killProcess(server);
    }
  }, 30_000);

  it('without Redis, announces to no one and opens nothing', async () => {
    const alone = new ConversationSignals(null, config);
    const heard: string[] = [];
    alone.onAnnounced('c-1', () => heard.push('c-1'));

    await expect(alone.announce('c-1')).resolves.toBeUndefined();
    expect(heard).toEqual([]);
    await alone.onModuleDestroy();
  });
});
