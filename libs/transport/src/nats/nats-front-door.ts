import {
  Logger,
  type BeforeApplicationShutdown,
  type FactoryProvider,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { Authenticator, SubjectRateLimiter } from '@parley/auth';
import { CONFIG, type Config } from '@parley/config';
import { MetricsService } from '@parley/observability';
import { NATS_LINK, type NatsConnection, type NatsLink } from '@parley/platform';
import type { BoundOperation } from '../operations/bound-operations';
import { NatsRpcServer } from './nats-rpc-server';
import { natsMethods } from './operation-methods';
import type { RpcMethods } from './rpc-method';

export const NATS_QUERY_SERVER = Symbol('parley.nats-query-server');
export const NATS_COMMAND_SERVER = Symbol('parley.nats-command-server');

export interface FrontDoorDeps {
  config: Config;
  nats: NatsLink;
  authenticator: Authenticator;
  rateLimiter: SubjectRateLimiter;
  metrics: MetricsService;
}

/**
 * A NatsRpcServer tied to the Nest lifecycle: it starts taking requests once the app is up and
 * NATS has answered (at start, or later when NATS could not be reached then), and drains before
 * the NATS connection closes. Does nothing when NATS is off.
 */
export class NatsFrontDoor implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private server: NatsRpcServer | null = null;
  private cancel: (() => void) | null = null;
  private readonly logger = new Logger('NatsFrontDoor');

  constructor(
    private readonly kind: 'qry' | 'cmd',
    private readonly deps: FrontDoorDeps,
    private readonly methods: RpcMethods,
  ) {}

  get root(): string {
    return `${this.deps.config.prefix}.${this.kind}`;
  }

  onApplicationBootstrap(): void {
    this.cancel = this.deps.nats.onConnected((nats) => this.start(nats));
  }

  private start(nats: NatsConnection): void {
    const { config, authenticator, rateLimiter, metrics } = this.deps;
    this.server = new NatsRpcServer(nats, {
      root: this.root,
      methods: this.methods,
      maxPayloadBytes: config.nats.maxPayloadBytes,
      authenticator,
      rateLimiter,
      metrics,
      onInternal: (err) =>
        this.logger.error(`${this.root}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`),
    }).start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.cancel?.();
    await this.server?.stop();
    this.server = null;
  }
}

/**
 * The NATS front door of a table (`operations`: its BoundOperation[] token) on `<prefix>.<kind>.*`.
 * Needs CONFIG, NATS_LINK, Authenticator, SubjectRateLimiter and MetricsService.
 */
export function natsFrontDoor(provide: symbol, kind: 'qry' | 'cmd', operations: symbol): FactoryProvider {
  return {
    provide,
    inject: [CONFIG, NATS_LINK, Authenticator, SubjectRateLimiter, MetricsService, operations],
    useFactory: (
      config: Config,
      nats: NatsLink,
      authenticator: Authenticator,
      rateLimiter: SubjectRateLimiter,
      metrics: MetricsService,
      bound: BoundOperation[],
    ) => new NatsFrontDoor(kind, { config, nats, authenticator, rateLimiter, metrics }, natsMethods(bound)),
  };
}
