import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { CONFIG, type Config } from '@parley/config';
import type { FastifyRequest } from 'fastify';
import { Authenticator } from '../authenticator';
import { ADDRESS_RATE_LIMITER, SubjectRateLimiter } from '../limits/rate-limiter';
import { requireRoles } from '../ownership/ownership.policy';
import type { Principal, Role } from '../principal';
import { type DeferredRateLimit, PUBLIC_ROUTE, REQUIRED_ROLES, STARTS_TURN } from './auth.decorators';

/** `/health` matches itself; `/health*` matches every path that starts with `/health`. */
function isPublicPath(path: string, patterns: readonly string[]): boolean {
  return patterns.some((p) => (p.endsWith('*') ? path.startsWith(p.slice(0, -1)) : path === p));
}

/**
 * The global HTTP guard: every request is first counted by the per-address rate limit (before
 * any credential is looked up, so made-up keys and readiness probes cannot flood the database);
 * then public routes pass; every other request is authenticated from
 * `Authorization: Bearer`, checked against @Roles, then counted by the per-subject rate limit
 * (whose verdict a `@StartsTurn()` route's command awaits itself).
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    @Inject(Reflector) private readonly reflector: Reflector,
    @Inject(CONFIG) private readonly config: Config,
    @Inject(Authenticator) private readonly authenticator: Authenticator,
    @Inject(SubjectRateLimiter) private readonly rateLimiter: SubjectRateLimiter,
    @Inject(ADDRESS_RATE_LIMITER) private readonly addressLimiter: SubjectRateLimiter,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const request = context.switchToHttp().getRequest<FastifyRequest & { principal?: Principal } & DeferredRateLimit>();
    const targets = [context.getHandler(), context.getClass()];
    const path = request.url.split('?')[0];
    await this.addressLimiter.consume(request.ip);
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, targets)) return true;
    if (isPublicPath(path, this.config.security.publicPaths)) return true;

    const principal = await this.authenticator.authenticate(request.headers.authorization);
    request.principal = principal;
    const roles = this.reflector.getAllAndOverride<Role[] | undefined>(REQUIRED_ROLES, targets);
    if (roles) requireRoles(principal, roles);
    if (this.reflector.getAllAndOverride<boolean>(STARTS_TURN, targets))
      request.rateLimit = this.rateLimiter.pending(principal.subject);
    else await this.rateLimiter.consume(principal.subject);
    return true;
  }
}
