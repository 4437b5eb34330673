export { createPgPool, type PgPoolOptions } from './database/pg-pool';
export { runMigrations } from './database/migrate';
