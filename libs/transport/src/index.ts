export { HttpErrorFilter } from './http/http-error.filter';
export { ConversationCommandsController } from './http/conversation-commands.controller';
export { createHttpApp } from './app/create-http-app';
export { QueryTransportModule } from './http/query-transport.module';
export { QueriesController } from './http/queries.controller';
export { AuditController } from './http/audit.controller';
export { StreamController } from './sse/stream.controller';
export { streamConversation, type StreamSink } from './sse/conversation-stream';
export { NatsRpcServer, type NatsRpcServerOptions } from './nats/nats-rpc-server';
export { rpcMethod, type RpcMethod, type RpcMethods } from './nats/rpc-method';
export { queryMethods, type QueryHandlers } from './nats/query-methods';
export { commandMethods, COMMAND_SCHEMAS } from './nats/command-methods';
export {
  NatsQueryModule,
  NatsCommandModule,
  NATS_QUERY_SERVER,
  NATS_COMMAND_SERVER,
} from './nats/nats-transport.module';
export {
  runIntegrationRelay,
  ensureIntegrationStream,
  integrationStreamName,
  integrationSubject,
  type RelayOptions,
} from './nats/integration-relay';
export { IntegrationRelay, IntegrationRelayModule } from './nats/integration-relay.module';
export { OpenApiModule } from './openapi/openapi.module';
export { buildOpenApiDocument, jsonSchemaOf, type OpenApiDocument } from './openapi/openapi-document';
export { runDeployable, listenForOperations, type DeployableOptions } from './app/bootstrap';
