export { createPgPool, type PgPoolOptions } from './database/pg-pool';
export { runMigrations } from './database/migrate';
export {
  DomainError,
  ERROR_STATUS,
  errorBody,
  type ErrorBody,
  type ErrorCode,
  type FieldProblem,
} from './errors/domain-error';
export { parseOrThrow, zodProblems } from './errors/zod-problems';
export {
  DatabaseModule,
  PG_POOL,
  DATA_SOURCE,
  type DatabaseModuleOptions,
  type EntityClass,
} from './database/database.module';
export { RedisModule, REDIS } from './redis/redis.module';
export { createRedis, connectedRedis, type Redis } from './redis/redis-client';
export { NatsModule, NATS_CONNECTION, type NatsConnection } from './nats/nats.module';
export { startEmbeddedPostgres, runningEmbeddedPostgres, type EmbeddedPostgres } from './database/embedded-postgres';
export { resolveDatabase, type ResolvedDatabase } from './database/resolve-database';
export { withLocalEncryptionKey } from './secrets/local-encryption-key';
