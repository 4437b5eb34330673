export { HttpErrorFilter } from './http/http-error.filter';
export { createHttpApp } from './app/create-http-app';
export { CommandTransportModule } from './app/command-transport.module';
export { QueryTransportModule } from './app/query-transport.module';
export { QUERIES } from './operations/query-table';
export {
  bindOperations,
  COMMAND_OPERATIONS,
  QUERY_OPERATIONS,
  type BoundOperation,
} from './operations/bound-operations';
export { payloadSchema, fromPayload } from './operations/payload';
export { operationsController } from './http/operations.controller';
export { StreamController } from './sse/stream.controller';
export { streamConversation, type StreamSink } from './sse/conversation-stream';
export { NatsRpcServer, type NatsRpcServerOptions } from './nats/nats-rpc-server';
export { type RpcMethod, type RpcMethods } from './nats/rpc-method';
export { natsMethods } from './nats/operation-methods';
export { natsFrontDoor, NATS_QUERY_SERVER, NATS_COMMAND_SERVER } from './nats/nats-front-door';
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
