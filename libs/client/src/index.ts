export { ParleyClient, type Commands, type Queries, type TurnResult, type WaitOptions } from './client';
export {
  ParleyError,
  ERROR_STATUS,
  type ParleyErrorCode,
  type ParleyErrorBody,
  type ValidationProblem,
} from './errors';
export { HttpTransport, httpTransport, type HttpTransportOptions } from './http-transport';
export { NatsTransport, natsTransport, type NatsTransportOptions } from './nats-transport';
export { parseFrame } from './sse';
export type { CallOptions, ParleyTransport, StreamFrame, StreamOptions } from './transport';
export {
  OPERATIONS,
  type CommandInputs,
  type CommandName,
  type CommandReplies,
  type CommandReply,
  type QueryInputs,
  type QueryName,
  type QueryReplies,
  type TurnReply,
} from './operations.generated';
