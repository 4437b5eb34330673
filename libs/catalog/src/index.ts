export { CatalogModule } from './catalog.module';
export { CATALOG_ENTITIES } from './model/entity-schemas';
export { CATALOG_DESCRIPTORS } from './model/catalog-descriptors';
export { CatalogService } from './apply/catalog.service';
export { CatalogQueries, availableModelsQuery } from './queries/catalog-queries';
export { CatalogSelfService } from './access/self-service';
export { SnapshotResolver } from './snapshot/snapshot-resolver';
export { ProviderCredentials } from './runtime/provider-credentials';
export { registerCatalogCommands } from './cli/catalog.commands';
export { SecretCipher } from './secrets/secret-cipher';
export { SpendBudgets, budgetExceeded, refusalDetails, type Reservation } from './budgets/spend-budgets';
export { worstCaseCost, type BudgetRefusal } from './budgets/budget-rules';
export { budgetLedgerQuery, budgetParams } from './budgets/budgets.controller';
export { CatalogCollectionSource } from './runtime/collection-source';
export {
  environmentBundle,
  EnvironmentCatalog,
  ENV_MODEL,
  GENERATE_ACTION,
  GENERATE_AGENT,
  MCP_PROXY_CLIENT,
} from './env/environment-catalog';
