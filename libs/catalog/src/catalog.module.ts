import { Module } from '@nestjs/common';
import { CONFIG, type Config } from '@parley/config';
import { CatalogAccess } from './access/catalog-access';
import { CatalogService } from './apply/catalog.service';
import { CatalogController } from './http/catalog.controller';
import { YamlBodyParser } from './http/yaml-body';
import { CatalogQueries } from './queries/catalog-queries';
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
  SnapshotResolver,
  ProviderCredentials,
  CatalogToolConfigSource,
  CatalogMcpClientConfigSource,
];

/**
 * The catalog: administration over HTTP, the read queries, the snapshot resolver and the
 * call-time credential sources. Needs CONFIG and DATA_SOURCE (DatabaseModule.forRoot with
 * CATALOG_ENTITIES among its entities).
 */
@Module({
  controllers: [CatalogController],
  providers: [
    {
      provide: SecretCipher,
      inject: [CONFIG],
      useFactory: (config: Config) =>
        new SecretCipher(config.security.encryptionKey, config.security.previousEncryptionKeys),
    },
    ...EXPORTED.filter((p) => p !== SecretCipher),
    YamlBodyParser,
  ],
  exports: EXPORTED,
})
export class CatalogModule {}
