export { createLogger, REDACTED_PATHS, type Logger, type LoggerOptions } from './logging/logger';
export { SecretMasker, secretMasker, registerSecret, registerSecrets, maskSecrets } from './logging/secret-masker';
export { NestPinoLogger } from './logging/nest-logger';
export {
  runWithContext,
  currentContext,
  currentTraceId,
  newTraceId,
  type RequestContext,
} from './context/request-context';
export {
  startTracing,
  withSpan,
  tracingEnabled,
  activeTraceId,
  traceCarrier,
  withTraceCarrier,
  type Tracing,
  type TracingOptions,
} from './tracing/tracing';
export { MetricsService, type LlmOutcome } from './metrics/metrics.service';
export { MetricsController } from './metrics/metrics.controller';
export { QueueDepthModule } from './metrics/queue-depth.module';
export { instrumentHttp } from './http/http-instrumentation';
export { observeNatsRequest, type HeaderReader } from './nats/nats-instrumentation';
export { ReadinessService, type CheckStatus, type Probe, type Readiness } from './health/readiness.service';
export { HealthController } from './health/health.controller';
export { ObservabilityModule } from './observability.module';
