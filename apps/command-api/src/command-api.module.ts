import type { DynamicModule } from '@nestjs/common';
import type { Config } from '@parley/config';
import { ConversationModule } from '@parley/conversation';
import { KnowledgeHttpModule } from '@parley/knowledge';
import { CommandTransportModule, JsonRpcModule } from '@parley/transport';
import { runtimeModules } from '@parley/turn';

/** The command side: HTTP and NATS commands, and JSON-RPC (queries forwarded); turns run in apps/worker, read models in apps/projector. */
export class CommandApiModule {
  static forRoot(config: Config): DynamicModule {
    return {
      module: CommandApiModule,
      imports: [
        ...runtimeModules(config, { worker: false }),
        CommandTransportModule.forRoot(ConversationModule),
        KnowledgeHttpModule,
        JsonRpcModule,
      ],
    };
  }
}
