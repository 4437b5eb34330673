import { createParamDecorator, SetMetadata, type ExecutionContext } from '@nestjs/common';
import type { Principal, Role } from '../principal';

export const PUBLIC_ROUTE = 'parley:public';
export const REQUIRED_ROLES = 'parley:roles';
export const STARTS_TURN = 'parley:starts-turn';

/** The route answers without a credential (and without rate limiting). */
export const Public = () => SetMetadata(PUBLIC_ROUTE, true);

/**
 * The caller needs at least one of these roles, else FORBIDDEN. Without it any authenticated
 * caller passes and the handler decides (ownership).
 */
export const Roles = (...roles: Role[]) => SetMetadata(REQUIRED_ROLES, roles);

/**
 * The route runs a command that starts or resumes a turn. Its request is counted by the rate
 * limit like any other, but the verdict is left on the request (`rateLimit`) for the command to
 * await beside its running-turn slot, so the command waits for Redis once instead of twice.
 * The route's command must await it (its OperationContext carries it to TurnCommand).
 */
export const StartsTurn = () => SetMetadata(STARTS_TURN, true);

/** The rate limit's verdict on a request of a `@StartsTurn()` route, awaited by its command. */
export interface DeferredRateLimit {
  rateLimit?: Promise<void>;
}

/** The authenticated caller, set by AuthGuard. */
export const CurrentPrincipal = createParamDecorator(
  (_data: unknown, ctx: ExecutionContext): Principal =>
    ctx.switchToHttp().getRequest<{ principal: Principal }>().principal,
);
