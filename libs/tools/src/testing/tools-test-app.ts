import { Global, Module, type DynamicModule, type Provider } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ConfigModule, loadConfig } from '@parley/config';
import type { ToolDefinition } from '@parley/core';
import { MCP_CLIENT_CONFIG_SOURCE, type McpClientConfig } from '@parley/mcp';
import { NatsModule } from '@parley/platform';
import type { ToolConfig } from '../tool-config';
import { TOOL_CONFIG_SOURCE } from '../tool-config.source';
import type { ToolCallContext } from '../tool-outcome';
import { ToolsModule } from '../tools.module';

/** In-memory catalog for tests: tool configs by code, MCP client configs by name. */
export class FakeCatalog {
  readonly tools = new Map<string, ToolConfig>();
  readonly mcpClients = new Map<string, McpClientConfig>();
}

@Global()
@Module({})
class FakeCatalogModule {
  static with(catalog: FakeCatalog, extra: Provider[]): DynamicModule {
    const providers: Provider[] = [
      {
        provide: TOOL_CONFIG_SOURCE,
        useValue: {
          configFor: async (code: string) => {
            const config = catalog.tools.get(code);
            if (!config) throw new Error(`no tool ${code}`);
            return config;
          },
        },
      },
      {
        provide: MCP_CLIENT_CONFIG_SOURCE,
        useValue: { configFor: async (name: string) => catalog.mcpClients.get(name) },
      },
      ...extra,
    ];
    return { module: FakeCatalogModule, providers, exports: providers };
  }
}

/** A Nest app with ToolsModule, a fake catalog and the given environment settings. */
export async function toolsTestApp(options: {
  env?: Record<string, string>;
  natsUrl?: string | null;
  providers?: Provider[];
  catalog?: FakeCatalog;
}) {
  const catalog = options.catalog ?? new FakeCatalog();
  const moduleRef = await Test.createTestingModule({
    imports: [
      ConfigModule.forRoot(loadConfig(options.env ?? {})),
      NatsModule.forRoot({ url: options.natsUrl ?? null }),
      FakeCatalogModule.with(catalog, options.providers ?? []),
      ToolsModule,
    ],
  }).compile();
  const app = await moduleRef.init();
  return { app, catalog };
}

export function toolDef(
  overrides: Partial<ToolDefinition> & Pick<ToolDefinition, 'name' | 'kind' | 'ref'>,
): ToolDefinition {
  return {
    description: overrides.name,
    parameters: { type: 'object' },
    approval: 'never',
    idempotent: false,
    returnDirect: false,
    skipResponse: false,
    ...overrides,
  };
}

export function callContext(overrides: Partial<ToolCallContext> = {}): ToolCallContext {
  return {
    conversationId: 'c-1',
    appId: 'SUPPORT',
    toolCallId: 'call-1',
    timeoutMs: 5_000,
    maxOutputBytes: 4_096,
    ...overrides,
  };
}
