/**
 * The projector thread of the all-in-one server (`ProjectorThread`): the read-model projections
 * and the NATS integration relay, as `apps/projector` runs them, on a worker thread of their own.
 * The main thread sends `append` after its appends (the subscriptions here wake as for their own)
 * and `stop`; this thread sends `ready`, the projection lag as it changes, and `stopped`.
 */
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { Config } from '@parley/config';
import { wakeAllSubscribers } from '@parley/event-store';
import { createLogger, MetricsService, NestPinoLogger } from '@parley/observability';
import { parentPort, workerData } from 'node:worker_threads';
import { registerConfigSecrets } from './register-config-secrets';
import { ProjectorModule } from './projector.module';
import { LAG_EVERY_MS, type FromProjector, type ToProjector } from './projector-thread.messages';

async function main(): Promise<void> {
  const port = parentPort!;
  const send = (message: FromProjector) => port.postMessage(message);
  const { config } = workerData as { config: Config };
  registerConfigSecrets(config);
  const logger = createLogger({ level: config.log.level, name: 'parley-projector' });
  const context = await NestFactory.createApplicationContext(ProjectorModule.forRoot(config), {
    logger: new NestPinoLogger(logger),
  });
  const metrics = context.get(MetricsService);
  let lastLag = '';
  const lag = setInterval(() => {
    void metrics.gaugeValues('projection_lag_ms').then((values) => {
      const text = JSON.stringify(values);
      if (text === lastLag) return;
      lastLag = text;
      send({ type: 'lag', values });
    });
  }, LAG_EVERY_MS);
  let stopping = false;
  port.on('message', (message: ToProjector) => {
    if (message.type === 'append') wakeAllSubscribers();
    else if (message.type === 'stop' && !stopping) {
      stopping = true;
      clearInterval(lag);
      void context.close().then(
        () => send({ type: 'stopped' }),
        (err: unknown) => {
          logger.error({ err }, 'the projector thread did not stop cleanly');
          send({ type: 'stopped' });
        },
      );
    }
  });
  send({ type: 'ready' });
}

main().catch((err: unknown) => {
  parentPort?.postMessage({ type: 'failed', message: err instanceof Error ? (err.stack ?? err.message) : String(err) });
});
