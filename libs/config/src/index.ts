export { loadConfig, ConfigError, type Config } from './config';
export { ConfigModule, CONFIG } from './config.module';
export {
  renderConfigTable,
  withConfigTable,
  configTableIn,
  normalizeTable,
  CONFIG_TABLE_BEGIN,
  CONFIG_TABLE_END,
} from './config-table';
