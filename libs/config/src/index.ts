export { loadConfig, toConfig, ConfigError, type Config } from './config';
export { envSchema, type Env } from './config.schema';
export { ConfigModule, CONFIG } from './config.module';
export {
  renderConfigTable,
  withConfigTable,
  configTableIn,
  normalizeTable,
  CONFIG_TABLE_BEGIN,
  CONFIG_TABLE_END,
} from './config-table';
