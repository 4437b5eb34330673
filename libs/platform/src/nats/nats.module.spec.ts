import { ConfigModule, loadConfig } from '@parley/config';
import { Test } from '@nestjs/testing';
import { freePort } from '@parley/testing';
import { NATS_CONNECTION, NatsModule, type NatsConnection } from './nats.module';

describe('NatsModule', () => {
  const boot = (url: string | null) =>
    Test.createTestingModule({
      imports: [ConfigModule.forRoot(loadConfig({})), NatsModule.forRoot({ url })],
    }).compile();

  it('stops the boot with a sentence naming NATS_URL and the address when NATS cannot be reached', async () => {
    const url = `nats://127.0.0.1:${await freePort()}`;
    const failed = await boot(url).then(
      () => null,
      (err: Error) => err,
    );
    expect(failed?.message).toBe(`NATS at ${url} (NATS_URL) could not be reached`);
    expect((failed?.cause as Error).message).toMatch(/CONNECTION_REFUSED/);
  });

  it('connects to a running NATS, and provides null when NATS is off', async () => {
    const on = await boot('nats://127.0.0.1:4222');
    const nats = on.get<NatsConnection>(NATS_CONNECTION);
    await expect(nats.flush()).resolves.toBeUndefined();
    await on.close();
    expect(nats.isClosed()).toBe(true);
    const off = await boot(null);
    expect(off.get(NATS_CONNECTION)).toBeNull();
    await off.close();
  });
});
