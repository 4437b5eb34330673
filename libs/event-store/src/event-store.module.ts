import { Global, Inject, Logger, Module, type BeforeApplicationShutdown, type DynamicModule } from '@nestjs/common';
import { CONFIG, type Config } from '@parley/config';
import { MetricsService } from '@parley/observability';
import { PG_POOL, SecretCipher } from '@parley/platform';
import type { Pool } from 'pg';
import { ConversationKeys } from './content/conversation-keys';
import { SealingEventStore } from './content/sealing-event-store';
import { EVENT_STORE, type EventStore } from './event-store.port';
import { parseChainKey, type ChainOptions } from './hash-chain';
import { KurrentEventStore } from './kurrent/kurrent-event-store';
import { MeteredEventStore } from './metered-event-store';
import { PostgresEventStore, type FeedHold } from './postgres/postgres-event-store';

class EventStoreLifecycle implements BeforeApplicationShutdown {
  constructor(@Inject(EVENT_STORE) private readonly store: EventStore) {}

  // Before the pool closes (DatabaseModule ends it on application shutdown).
  async beforeApplicationShutdown(): Promise<void> {
    await this.store.close();
  }
}

/**
 * Provides EVENT_STORE: PostgreSQL over DatabaseModule's PG_POOL, or KurrentDB when
 * EVENTSTORE_URL is set. Subscription runners still need PG_POOL for their checkpoints.
 * With the ObservabilityModule in the app, appends are timed into `event_store_append_ms`.
 */
/** The hash chain's key and policy from EVENT_CHAIN_KEY and EVENT_CHAIN_REQUIRE_KEYED, for every store a process builds. */
export function chainOptionsOf(config: Config): ChainOptions {
  const { chainKey, requireKeyedChain } = config.eventStore;
  return { key: chainKey ? parseChainKey(chainKey) : null, requireKeyed: requireKeyedChain };
}

/** The warning for a transaction of Parley's database that has held the feed (PostgresEventStore's `onHeld`). */
export function describeHold(hold: FeedHold): string {
  const who =
    hold.prepared !== null
      ? `prepared transaction '${hold.prepared}'`
      : hold.pid !== null
        ? `pid ${hold.pid}${hold.applicationName ? ` ('${hold.applicationName}')` : ''}, ${hold.state ?? 'state unknown'}` +
          (hold.transactionStart ? ` since ${hold.transactionStart.toISOString()}` : '') +
          (hold.query ? `, last statement: ${JSON.stringify(hold.query)}` : '')
        : 'it has just ended';
  return (
    `transaction ${hold.xid} of this database has held the event feed for ${Math.round(hold.heldMs / 1000)} s (${who}): ` +
    'the projections, the integration relay and read-your-writes waits stop at it until it ends'
  );
}

const feedLogger = new Logger('EventFeed');

/** Injection token for the conversations' data keys (ConversationKeys): erasure and key rotation use them. */
export const CONVERSATION_KEYS = Symbol('parley.conversation-keys');

/** The data keys of conversations, wrapped with PARLEY_ENCRYPTION_KEY (and readable with the previous keys). */
export function conversationKeysOf(config: Config, pool: Pool): ConversationKeys {
  const { encryptionKey, previousEncryptionKeys } = config.security;
  return new ConversationKeys(pool, new SecretCipher(encryptionKey, previousEncryptionKeys));
}

@Global()
@Module({})
export class EventStoreModule {
  static forRoot(): DynamicModule {
    return {
      module: EventStoreModule,
      providers: [
        {
          provide: CONVERSATION_KEYS,
          inject: [CONFIG, PG_POOL],
          useFactory: (config: Config, pool: Pool) => conversationKeysOf(config, pool),
        },
        {
          provide: EVENT_STORE,
          inject: [CONFIG, PG_POOL, CONVERSATION_KEYS, { token: MetricsService, optional: true }],
          useFactory: (config: Config, pool: Pool, keys: ConversationKeys, metrics?: MetricsService): EventStore => {
            const { kurrentUrl, maxEventBytes, pollMs } = config.eventStore;
            const chain = chainOptionsOf(config);
            const store = kurrentUrl
              ? KurrentEventStore.connect(kurrentUrl, { maxEventBytes, pollMs, chain })
              : new PostgresEventStore(pool, {
                  maxEventBytes,
                  pollMs,
                  chain,
                  onHeld: (hold) => feedLogger.warn(describeHold(hold)),
                });
            const metered = metrics ? new MeteredEventStore(store, (ms) => metrics.recordEventStoreAppend(ms)) : store;
            return new SealingEventStore(metered, keys, { encrypt: config.eventStore.contentEncryption });
          },
        },
        EventStoreLifecycle,
      ],
      exports: [EVENT_STORE, CONVERSATION_KEYS],
    };
  }
}
