/**
 * A NestJS service consuming Parley's integration events from JetStream:
 *   node -r ./tools/register.js examples/nestjs-consumer/main.ts [nats-url] [parley-prefix]
 * (defaults nats://127.0.0.1:4222 and parley). It logs in with the service's own NATS user, one
 * allowed the JetStream consumer calls on PARLEY_EVENTS (docs/security.md).
 */
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { ConsumerModule } from './consumer.module';
import { JetStreamEvents } from './jetstream-events.strategy';

export async function main(
  [servers = 'nats://127.0.0.1:4222', prefix = 'parley'] = process.argv.slice(2),
): Promise<void> {
  const app = await NestFactory.createMicroservice(ConsumerModule, {
    strategy: new JetStreamEvents({
      connection: { servers, name: 'orders-service' },
      prefix,
      durable: 'orders-service',
    }),
  });
  app.enableShutdownHooks();
  await app.listen();
}

if (require.main === module) void main();
