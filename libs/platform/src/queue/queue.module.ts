import { Global, Inject, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { CONFIG, type Config } from '@parley/config';
import { Redis } from 'ioredis';
import { BullMqJobQueue, type BullMqOptions } from './bullmq-job-queue';
import { InProcessJobQueue } from './in-process-job-queue';
import { JOB_QUEUE, type JobQueue } from './job-queue.port';

class QueueLifecycle implements OnApplicationShutdown {
  constructor(@Inject(JOB_QUEUE) private readonly queue: JobQueue) {}
  async onApplicationShutdown(): Promise<void> {
    await this.queue.close();
  }
}

/** BullMQ on Redis when REDIS_URL is set; otherwise the in-process queue. */
export function createJobQueue(config: Config, overrides: Partial<BullMqOptions> = {}): JobQueue {
  if (!config.redis.url) return new InProcessJobQueue(undefined, config.shutdown.graceMs);
  const connection = new Redis(config.redis.url, { maxRetriesPerRequest: null, lazyConnect: false });
  connection.on('error', () => undefined);
  const queue = new BullMqJobQueue(connection, {
    prefix: config.prefix,
    lockDurationMs: config.redis.queueLockMs,
    stalledIntervalMs: Math.max(250, Math.floor(config.redis.queueLockMs / 2)),
    shutdownGraceMs: config.shutdown.graceMs,
    ...overrides,
  });
  const close = queue.close.bind(queue);
  queue.close = async () => {
    await close();
    await connection.quit().catch(() => connection.disconnect());
  };
  return queue;
}

@Global()
@Module({})
export class QueueModule {
  static forRoot(overrides: Partial<BullMqOptions> = {}): DynamicModule {
    return {
      module: QueueModule,
      providers: [
        { provide: JOB_QUEUE, inject: [CONFIG], useFactory: (config: Config) => createJobQueue(config, overrides) },
        QueueLifecycle,
      ],
      exports: [JOB_QUEUE],
    };
  }
}
