import { createParamDecorator, SetMetadata, type ExecutionContext } from '@nestjs/common';
import type { Principal, Role } from '../principal';

export const PUBLIC_ROUTE = 'parley:public';
export const REQUIRED_ROLES = 'parley:roles';

/** The route answers without a credential (and without rate limiting). */
export const Public = () => SetMetadata(PUBLIC_ROUTE, true);

/**
 * The caller needs at least one of these roles, else FORBIDDEN. Without it any authenticated
 * caller passes and the handler decides (ownership).
 */
export const Roles = (...roles: Role[]) => SetMetadata(REQUIRED_ROLES, roles);

/** The authenticated caller, set by AuthGuard. */
export const CurrentPrincipal = createParamDecorator(
  (_data: unknown, ctx: ExecutionContext): Principal =>
    ctx.switchToHttp().getRequest<{ principal: Principal }>().principal,
);
