export { loadConfig, ConfigError, type Config } from './config';
export { ConfigModule, CONFIG } from './config.module';
