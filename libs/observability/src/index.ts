export { createLogger, REDACTED_PATHS, type Logger } from './logger';
export { HealthController } from './health.controller';
