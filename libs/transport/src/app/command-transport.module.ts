import { Module, type DynamicModule, type ModuleMetadata } from '@nestjs/common';
import { COMMANDS } from '@parley/conversation';
import { operationsController } from '../http/operations.controller';
import { NATS_COMMAND_SERVER, natsFrontDoor } from '../nats/nats-front-door';
import { jsonRpcTable } from '../json-rpc/json-rpc-methods';
import { bindOperations, COMMAND_OPERATIONS } from '../operations/bound-operations';

const CommandsController = operationsController('CommandsController', COMMAND_OPERATIONS, COMMANDS);

/**
 * The command side's front doors, derived from COMMANDS: the HTTP routes and `<prefix>.cmd.*`
 * over NATS (and JSON-RPC's methods when JsonRpcModule is in the app). `handlers` is the module that provides and exports the commands' handlers
 * (ConversationModule). Needs AuthModule, ObservabilityModule and NatsModule.
 */
@Module({})
export class CommandTransportModule {
  static forRoot(handlers: NonNullable<ModuleMetadata['imports']>[number]): DynamicModule {
    return {
      module: CommandTransportModule,
      imports: [handlers],
      providers: [
        bindOperations(COMMAND_OPERATIONS, COMMANDS),
        natsFrontDoor(NATS_COMMAND_SERVER, 'cmd', COMMAND_OPERATIONS),
        jsonRpcTable(COMMAND_OPERATIONS),
      ],
      controllers: [CommandsController],
    };
  }
}
