import { Module, type DynamicModule, type ModuleMetadata, type Provider } from '@nestjs/common';
import { McpPool } from './mcp-pool';

/**
 * Exports McpPool. It needs MCP_CLIENT_CONFIG_SOURCE (and takes MCP_METRICS when present):
 * either from a global module, or passed to `forRoot` with the modules those providers need.
 */
@Module({ providers: [McpPool], exports: [McpPool] })
export class McpModule {
  static forRoot(options: { imports?: ModuleMetadata['imports']; providers?: Provider[] } = {}): DynamicModule {
    return {
      module: McpModule,
      imports: options.imports ?? [],
      providers: [...(options.providers ?? []), McpPool],
      exports: [McpPool],
    };
  }
}
