export { ROLES, DEV_PRINCIPAL, isRole, hasRole, type Role, type Principal } from './principal';
export {
  requireRoles,
  assertCanRead,
  assertCanCommand,
  canRead,
  canCommand,
  ownerFilter,
  type ResourceRef,
} from './ownership/ownership.policy';
export {
  canUseCatalogEntity,
  assertCanUseCatalogEntity,
  assertCanManageCatalogEntity,
  type CatalogAccess,
} from './ownership/catalog-access.policy';
export { Authenticator, type NatsHeaders } from './authenticator';
export { ApiKeysService, type NewApiKey, type CreatedApiKey } from './api-keys/api-keys.service';
export type { ApiKeyRecord } from './api-keys/api-key.repository';
export { registerKeyCommands } from './api-keys/keys.command';
export { createKeyRequest } from './api-keys/keys.http.controller';
export { JwtVerifier, type JwtOptions } from './jwt/jwt-verifier';
export { Public, Roles, StartsTurn, CurrentPrincipal, type DeferredRateLimit } from './http/auth.decorators';
export { AuthGuard, isPublicPath } from './http/auth.guard';
export { SubjectRateLimiter, type RateLimiterOptions } from './limits/rate-limiter';
export { TurnSlots, type TurnSlotsOptions } from './limits/turn-slots';
export { assertMessageWithinLimits, assertPayloadWithinLimit, type MessageLimits } from './limits/request-limits';
export { AuthModule } from './auth.module';
