import { Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { Authenticator, SubjectRateLimiter } from '@parley/auth';
import type { Config } from '@parley/config';
import type { MetricsService } from '@parley/observability';
import type { NatsConnection, NatsLink } from '@parley/platform';
import { NatsRpcServer } from './nats-rpc-server';
import type { RpcMethods } from './rpc-method';

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
