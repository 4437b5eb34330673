import type { ChildProcess } from 'node:child_process';
import { ConfigModule, loadConfig } from '@parley/config';
import { Test } from '@nestjs/testing';
import { freePort, killProcess, startNatsServer } from '@parley/testing';
import type { NatsConnection } from 'nats';
import { NATS_RETRY_MS, type NatsLink } from './nats-link';
import { NATS_LINK, NatsModule } from './nats.module';

describe('NatsModule', () => {
  const boot = (url: string | null) =>
    Test.createTestingModule({
      imports: [ConfigModule.forRoot(loadConfig({})), NatsModule.forRoot({ url })],
    }).compile();

  /** An app booted with a NATS URL nothing listens on yet. */
  const bootUnreachable = async () => {
    const port = await freePort();
    const app = await boot(`nats://127.0.0.1:${port}`);
    return { port, app, link: app.get<NatsLink>(NATS_LINK) };
  };

  let server: ChildProcess | null = null;
  afterEach(async () => {
    if (server) await killProcess(server);
    server = null;
  });

  it(
    'starts without a NATS it cannot reach, and connects once NATS answers',
    async () => {
      const { port, app, link } = await bootUnreachable();
      expect(link.enabled).toBe(true);
      expect(link.connection).toBeNull();
      const connected = new Promise<NatsConnection>((resolve) => link.onConnected(resolve));
      const taken = jest.fn();
      link.onConnected(taken)();

      server = await startNatsServer(port);
      const nats = await connected;
      await expect(nats.flush()).resolves.toBeUndefined();
      expect(link.connection).toBe(nats);
      expect(taken).not.toHaveBeenCalled();
      await app.close();
      expect(nats.isClosed()).toBe(true);
    },
    5 * NATS_RETRY_MS,
  );

  it(
    'stops trying when the app closes before NATS has answered',
    async () => {
      const { port, app, link } = await bootUnreachable();
      const waiting = jest.fn();
      link.onConnected(waiting);
      await app.close();

      server = await startNatsServer(port);
      await new Promise((r) => setTimeout(r, NATS_RETRY_MS + 500));
      expect(waiting).not.toHaveBeenCalled();
      expect(link.connection).toBeNull();
    },
    5 * NATS_RETRY_MS,
  );

  it('stops the start with a sentence naming NATS_URL and the address when NATS refuses the credentials', async () => {
    const port = await freePort();
    server = await startNatsServer(port, ['--user', 'parley', '--pass', 'secret']);
    const url = `nats://127.0.0.1:${port}`;
    const failed = await boot(url).then(
      () => null,
      (err: Error) => err,
    );
    expect(failed?.message).toBe(`NATS at ${url} (NATS_URL) could not be reached`);
    expect((failed?.cause as Error).message).toMatch(/AUTHORIZATION_VIOLATION|Authorization Violation/i);
  });

  it('connects to a running NATS at once, and has no connection when NATS is off', async () => {
    const on = await boot('nats://127.0.0.1:4222');
    const nats = on.get<NatsLink>(NATS_LINK).connection!;
    await expect(nats.flush()).resolves.toBeUndefined();
    await on.close();
    expect(nats.isClosed()).toBe(true);
    const off = await boot(null);
    const link = off.get<NatsLink>(NATS_LINK);
    expect(link.enabled).toBe(false);
    expect(link.connection).toBeNull();
    const never = jest.fn();
    link.onConnected(never);
    expect(never).not.toHaveBeenCalled();
    await off.close();
  });
});
