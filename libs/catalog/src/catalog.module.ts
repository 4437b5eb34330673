import { Global, Module } from '@nestjs/common';
import { CONFIG, type Config } from '@parley/config';
import { COLLECTION_SOURCE } from '@parley/knowledge';
import { PROVIDER_ENDPOINTS } from '@parley/llm';
import { MCP_CLIENT_CONFIG_SOURCE } from '@parley/mcp';
import { TOOL_CONFIG_SOURCE } from '@parley/tools';
import { CatalogAccess } from './access/catalog-access';
import { CatalogSelfService } from './access/self-service';
import { BudgetsController } from './budgets/budgets.controller';
import { SpendBudgets } from './budgets/spend-budgets';
import { CatalogService } from './apply/catalog.service';
import { CatalogController } from './http/catalog.controller';
import { EnvironmentCatalog } from './env/environment-catalog';
import { YamlBodyParser } from './http/yaml-body';
import { CatalogQueries } from './queries/catalog-queries';
import { CatalogCollectionSource } from './runtime/collection-source';
import { CatalogMcpClientConfigSource } from './runtime/mcp-client-config-source';
import { ProviderCredentials } from './runtime/provider-credentials';
import { CatalogToolConfigSource } from './runtime/tool-config-source';
import { SecretCipher } from './secrets/secret-cipher';
import { SnapshotResolver } from './snapshot/snapshot-resolver';
import { CatalogReader } from './store/catalog-reader';

const EXPORTED = [
  SecretCipher,
  CatalogService,
  CatalogReader,
  CatalogQueries,
  CatalogAccess,
  CatalogSelfService,
  SnapshotResolver,
  ProviderCredentials,
  CatalogToolConfigSource,
  CatalogMcpClientConfigSource,
  CatalogCollectionSource,
  SpendBudgets,
];

/**
 * The catalog: administration over HTTP, the read queries, the snapshot resolver and the
 * call-time credential sources. Needs CONFIG and DATA_SOURCE (DatabaseModule.forRoot with
 * CATALOG_ENTITIES among its entities). Global, because it also binds the ports the LLM
 * adapter, the tool executors and the MCP pool resolve credentials through.
 */
@Global()
@Module({
  controllers: [CatalogController, BudgetsController],
  providers: [
    {
      provide: SecretCipher,
      inject: [CONFIG],
      useFactory: (config: Config) =>
        new SecretCipher(config.security.encryptionKey, config.security.previousEncryptionKeys),
    },
    ...EXPORTED.filter((p) => p !== SecretCipher),
    YamlBodyParser,
    EnvironmentCatalog,
    { provide: PROVIDER_ENDPOINTS, useExisting: ProviderCredentials },
    { provide: TOOL_CONFIG_SOURCE, useExisting: CatalogToolConfigSource },
    { provide: MCP_CLIENT_CONFIG_SOURCE, useExisting: CatalogMcpClientConfigSource },
    { provide: COLLECTION_SOURCE, useExisting: CatalogCollectionSource },
  ],
  exports: [...EXPORTED, PROVIDER_ENDPOINTS, TOOL_CONFIG_SOURCE, MCP_CLIENT_CONFIG_SOURCE, COLLECTION_SOURCE],
})
export class CatalogModule {}
