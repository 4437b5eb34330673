export { createPgPool, type PgPoolOptions } from './database/pg-pool';
export { runMigrations } from './database/migrate';
export { parseOrThrow, zodProblems } from './errors/zod-problems';
export { raisedBy, unavailableError } from './errors/unavailable';
export {
  DatabaseModule,
  PG_POOL,
  DATA_SOURCE,
  type DatabaseModuleOptions,
  type EntityClass,
} from './database/database.module';
export { RedisModule, REDIS } from './redis/redis.module';
export { createRedis, connectedRedis, type Redis } from './redis/redis-client';
export { NatsModule, NATS_LINK, type NatsConnection } from './nats/nats.module';
export { NatsLink, NATS_RETRY_MS } from './nats/nats-link';
export {
  JOB_QUEUE,
  type JobQueue,
  type JobHandler,
  type JobContext,
  type EnqueueOptions,
} from './queue/job-queue.port';
export { InProcessJobQueue } from './queue/in-process-job-queue';
export { BullMqJobQueue, type BullMqOptions } from './queue/bullmq-job-queue';
export { QueueModule, createJobQueue } from './queue/queue.module';
export { startEmbeddedPostgres, runningEmbeddedPostgres, type EmbeddedPostgres } from './database/embedded-postgres';
export { resolveDatabase, type ResolvedDatabase } from './database/resolve-database';
export { withLocalEncryptionKey } from './secrets/local-encryption-key';
