import { Controller, Get, Inject, Param, Req, Res } from '@nestjs/common';
import { adminKeyFileOf, CurrentPrincipal, Public, type Principal } from '@parley/auth';
import { CONFIG, type Config } from '@parley/config';
import { DomainError } from '@parley/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { readFile } from 'node:fs/promises';
import { UiFiles } from './ui-files';

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);
/** A request a proxy on this machine passed on is not this machine's: any of these says so. */
const PROXY_HEADERS = ['x-forwarded-for', 'forwarded', 'x-real-ip', 'via'];

/**
 * The dashboard (docs/dashboard.md): its built files at /ui, an SPA fallback to index.html for
 * the page paths, the development key offer, and who the caller is. The pages themselves read
 * only the public API with the key the person signed in with.
 */
@Controller()
export class DashboardController {
  constructor(
    @Inject(UiFiles) private readonly files: UiFiles,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  @Get('ui')
  @Public()
  index(@Res() reply: FastifyReply): Promise<void> {
    return this.page(reply);
  }

  /**
   * The first run's development admin key (`<dataDir>/admin.key`), for the sign-in page to offer.
   * Only in development, only to a request from this machine that no proxy forwarded: anyone
   * who can reach it could also read the file. 404 otherwise, as if the route did not exist.
   */
  @Get('ui/dev-key')
  @Public()
  async devKey(@Req() request: FastifyRequest): Promise<{ key: string }> {
    const proxied = PROXY_HEADERS.some((h) => request.headers[h] !== undefined);
    const local = LOOPBACK.has(request.raw.socket.remoteAddress ?? '') && !proxied;
    const key =
      this.config.env === 'development' && local
        ? (await readFile(adminKeyFileOf(this.config.database.dataDir), 'utf8').catch(() => '')).trim()
        : '';
    if (!key) throw DomainError.notFound('Route', 'GET /ui/dev-key');
    return { key };
  }

  @Get('ui/*')
  @Public()
  async file(@Param('*') path: string, @Res() reply: FastifyReply): Promise<void> {
    const file = await this.files.get(path);
    if (!file) {
      // A hashed asset that is not there is a 404; any other path is a page of the app.
      if (path.startsWith('assets/') || path.includes('.')) throw DomainError.notFound('File', `/ui/${path}`);
      return this.page(reply);
    }
    await reply
      .header('content-type', file.type)
      .header('cache-control', file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
      .send(file.body);
  }

  /** The caller's subject and roles, so the pages offer only what the key may do. */
  @Get('api/v1/whoami')
  whoami(@CurrentPrincipal() principal: Principal): { subject: string; roles: string[] } {
    return { subject: principal.subject, roles: [...principal.roles] };
  }

  private async page(reply: FastifyReply): Promise<void> {
    const index = await this.files.index();
    if (!index)
      throw new DomainError('SERVICE_UNAVAILABLE', 'The dashboard is not built: run `npm run ui:build`.', {
        dependency: 'dashboard build',
      });
    await reply.header('content-type', index.type).header('cache-control', 'no-cache').send(index.body);
  }
}
