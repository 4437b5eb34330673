export { DEV_PRINCIPAL, type Role, type Principal } from './principal';
export {
  requireRoles,
  assertCanRead,
  assertCanCommand,
  canReadConversation,
  ownerFilter,
} from './ownership/ownership.policy';
export { Authenticator } from './authenticator';
export { ApiKeysService } from './api-keys/api-keys.service';
export { ensureFirstRunKey, adminKeyFileOf, type FirstRunOutcome } from './api-keys/first-run-key';
export { registerKeyCommands } from './api-keys/keys.command';
export { createKeyRequest } from './api-keys/keys.http.controller';
export { Public, Roles, StartsTurn, CurrentPrincipal, type DeferredRateLimit } from './http/auth.decorators';
export { SubjectRateLimiter } from './limits/rate-limiter';
export { TurnSlots, SLOT_GRACE_MS } from './limits/turn-slots';
export { assertMessageWithinLimits, assertPayloadWithinLimit } from './limits/request-limits';
export { AuthModule } from './auth.module';
