export { HttpErrorFilter } from './http/http-error.filter';
export { createHttpApp } from './app/create-http-app';
export { CommandTransportModule } from './app/command-transport.module';
export { QueryTransportModule } from './app/query-transport.module';
export { streamConversation } from './sse/conversation-stream';
export { integrationStreamName } from './nats/integration-relay';
export { IntegrationRelayModule } from './nats/integration-relay.module';
export { OpenApiModule } from './openapi/openapi.module';
export { runDeployable, listenForOperations } from './app/bootstrap';
