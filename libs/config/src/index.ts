export { loadConfig, toConfig, ConfigError, type Config } from './config';
export { envSchema, type Env } from './config.schema';
export { ConfigModule, CONFIG } from './config.module';
