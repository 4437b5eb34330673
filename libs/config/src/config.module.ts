import { Global, Module, type DynamicModule } from '@nestjs/common';
import { loadConfig, type Config } from './config';

/** Injection token for the typed configuration. */
export const CONFIG = Symbol('parley.config');

@Global()
@Module({})
export class ConfigModule {
  /** Registers an already-parsed config (tests pass their own; apps pass `loadConfig()`). */
  static forRoot(config: Config = loadConfig()): DynamicModule {
    return { module: ConfigModule, providers: [{ provide: CONFIG, useValue: config }], exports: [CONFIG] };
  }
}
