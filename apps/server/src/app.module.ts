import type { DynamicModule } from '@nestjs/common';
import type { Config } from '@parley/config';
import { ConversationModule } from '@parley/conversation';
import { KnowledgeHttpModule } from '@parley/knowledge';
import { ReadModelsModule } from '@parley/read-models';
import {
  CommandTransportModule,
  DashboardModule,
  IntegrationRelayModule,
  JsonRpcModule,
  McpServerModule,
  OpenApiModule,
  ProjectorThread,
  QueryTransportModule,
} from '@parley/transport';
import { runtimeModules } from '@parley/turn';

export interface AppOptions {
  /** Run turn and timer jobs in this process (default true: the all-in-one server). */
  worker?: boolean;
  /**
   * Run the projections and the integration relay on a worker thread of their own
   * (`ProjectorThread`) rather than on the main thread (default: PROJECTOR_THREAD).
   */
  projectorThread?: boolean;
}

/** The all-in-one deployable: HTTP, NATS, worker and projector in one process. */
export class AppModule {
  static forRoot(config: Config, options: AppOptions = {}): DynamicModule {
    const threaded = options.projectorThread ?? config.eventStore.projectorThread;
    return {
      module: AppModule,
      imports: [
        ...runtimeModules(config, { worker: options.worker ?? true }),
        ReadModelsModule.forRoot({ projections: !threaded }),
        QueryTransportModule,
        CommandTransportModule.forRoot(ConversationModule),
        KnowledgeHttpModule,
        ...(threaded ? [] : [IntegrationRelayModule]),
        JsonRpcModule,
        McpServerModule,
        OpenApiModule,
        DashboardModule,
      ],
      providers: threaded ? [ProjectorThread] : [],
    };
  }
}
