import { Global, Inject, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { CONFIG, type Config } from '@parley/config';
import type { Pool } from 'pg';
import { DataSource, type EntitySchema } from 'typeorm';
import { createPgPool, pgSocket, pgTimeouts } from './pg-pool';

/** The raw `pg` pool: the event store and hot paths issue SQL through it. */
export const PG_POOL = Symbol('parley.pg-pool');
/** The TypeORM DataSource over the same database: catalog and read-model entities. */
export const DATA_SOURCE = Symbol('parley.data-source');

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export type EntityClass = Function | EntitySchema;

export interface DatabaseModuleOptions {
  /** TypeORM entities of every library the app uses. */
  entities?: EntityClass[];
  /** Overrides config.database.url (tests pass their own database). */
  url?: string;
  applicationName?: string;
}

class DatabaseLifecycle implements OnApplicationShutdown {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(DATA_SOURCE) private readonly dataSource: DataSource,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
    await this.pool.end();
  }
}

function urlOf(config: Config, options: DatabaseModuleOptions): string {
  const url = options.url ?? config.database.url;
  if (!url)
    throw new Error('DATABASE_URL: expected a postgres:// URL (it is not set and no embedded database was started)');
  return url;
}

@Global()
@Module({})
export class DatabaseModule {
  static forRoot(options: DatabaseModuleOptions = {}): DynamicModule {
    return {
      module: DatabaseModule,
      providers: [
        {
          provide: PG_POOL,
          inject: [CONFIG],
          useFactory: (config: Config) =>
            createPgPool({
              url: urlOf(config, options),
              max: config.database.poolSize,
              applicationName: options.applicationName,
              acquireTimeoutMs: config.database.acquireTimeoutMs,
              statementTimeoutMs: config.database.statementTimeoutMs,
            }),
        },
        {
          provide: DATA_SOURCE,
          inject: [CONFIG],
          useFactory: async (config: Config) => {
            const dataSource = new DataSource({
              type: 'postgres',
              url: urlOf(config, options),
              entities: options.entities ?? [],
              poolSize: Math.max(2, Math.ceil(config.database.poolSize / 2)),
              synchronize: false,
              logging: false,
              extra: {
                stream: pgSocket,
                ...pgTimeouts({
                  acquireTimeoutMs: config.database.acquireTimeoutMs,
                  statementTimeoutMs: config.database.statementTimeoutMs,
                }),
              },
            });
            return dataSource.initialize();
          },
        },
        DatabaseLifecycle,
      ],
      exports: [PG_POOL, DATA_SOURCE],
    };
  }
}
