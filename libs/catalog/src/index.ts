export { CatalogModule } from './catalog.module';
export { CATALOG_ENTITIES } from './model/entity-schemas';
export { CATALOG_DESCRIPTORS, CAPABILITIES, PROVIDER_TYPES } from './model/catalog-descriptors';
export { CatalogService, type ApplyResult } from './apply/catalog.service';
export type { ApplyDiff, ChangeStatus } from './apply/plan-apply';
export { CatalogQueries } from './queries/catalog-queries';
export { CatalogReader } from './store/catalog-reader';
export { SnapshotResolver } from './snapshot/snapshot-resolver';
export { ASK_USER_QUESTION_TOOL, functionName } from './snapshot/tool-definitions';
export { ProviderCredentials } from './runtime/provider-credentials';
export { CatalogToolConfigSource } from './runtime/tool-config-source';
export { CatalogMcpClientConfigSource, type McpClientConfig } from './runtime/mcp-client-config-source';
export {
  CatalogAccess,
  canRead,
  canManage,
  ADMIN_ROLE,
  type AclEntry,
  type OwnedEntity,
  type Permission,
} from './access/catalog-access';
export { SecretCipher } from './secrets/secret-cipher';
export { rotateEncryptionKeys } from './secrets/rotate-keys';
export { YAML_CONTENT_TYPES } from './http/yaml-body';
export { registerCatalogCommands } from './cli/catalog.commands';
