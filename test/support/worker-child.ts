import { loadConfig } from '@parley/config';
import { createLogger } from '@parley/observability';
import { createHttpApp } from '@parley/transport';
import { AppModule } from '../../apps/server/src/app.module';

/**
 * The all-in-one Parley in a process of its own, for tests that kill one mid-turn. Prints
 * "ready <port>" once it consumes jobs and serves HTTP.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const app = await createHttpApp(
    AppModule.forRoot(config, { worker: true }),
    config,
    createLogger({ level: 'silent' }),
  );
  await app.listen(0, '127.0.0.1');
  process.stdout.write(`ready ${(app.getHttpServer().address() as { port: number }).port}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
