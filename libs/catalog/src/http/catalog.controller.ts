import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Put, Query } from '@nestjs/common';
import { CurrentPrincipal, Roles, type Principal } from '@parley/auth';
import { DomainError } from '@parley/core';
import type { AclEntry } from '../access/catalog-access';
import { CatalogSelfService } from '../access/self-service';
import { CatalogService, type ApplyResult } from '../apply/catalog.service';
import type { Row } from '../model/entity-schemas';

/**
 * Catalog administration over HTTP (docs/catalog.md): CRUD under /api/v1/catalog/<collection>
 * and a declarative apply. Thin: validation and errors come from CatalogService, who may do
 * what from CatalogSelfService. Admins write everything, auditors read it; clients manage
 * the providers and models they own or may manage (seed 001's self-service) and share them
 * through the ACL routes. Clients read the rest of the catalog through the queries.
 */
@Controller('api/v1/catalog')
@Roles('admin')
export class CatalogController {
  constructor(
    @Inject(CatalogService) private readonly catalog: CatalogService,
    @Inject(CatalogSelfService) private readonly self: CatalogSelfService,
  ) {}

  /** A YAML or JSON bundle; `?dryRun=true` returns the diff and writes nothing. */
  @Post('apply')
  @HttpCode(200)
  apply(@Body() body: unknown, @Query('dryRun') dryRun?: string): Promise<ApplyResult> {
    return this.catalog.apply(body, { dryRun: flag(dryRun) });
  }

  /** A client: the providers or models it may use. */
  @Get(':collection')
  @Roles('admin', 'auditor', 'client')
  list(@CurrentPrincipal() caller: Principal, @Param('collection') collection: string): Promise<Row[]> {
    return this.self.list(caller, collection);
  }

  @Get(':collection/:key')
  @Roles('admin', 'auditor', 'client')
  get(
    @CurrentPrincipal() caller: Principal,
    @Param('collection') collection: string,
    @Param('key') key: string,
  ): Promise<Row> {
    return this.self.get(caller, collection, key);
  }

  /** A client: a provider or model it then owns, private until shared. */
  @Post(':collection')
  @Roles('admin', 'client')
  create(
    @CurrentPrincipal() caller: Principal,
    @Param('collection') collection: string,
    @Body() body: unknown,
  ): Promise<Row> {
    return this.self.create(caller, collection, body);
  }

  @Put(':collection/:key')
  @Roles('admin', 'client')
  update(
    @CurrentPrincipal() caller: Principal,
    @Param('collection') collection: string,
    @Param('key') key: string,
    @Body() body: unknown,
  ): Promise<Row> {
    return this.self.update(caller, collection, key, body);
  }

  @Delete(':collection/:key')
  @Roles('admin', 'client')
  @HttpCode(204)
  remove(
    @CurrentPrincipal() caller: Principal,
    @Param('collection') collection: string,
    @Param('key') key: string,
  ): Promise<void> {
    return this.self.remove(caller, collection, key);
  }

  /** Who a provider, model or tool is shared with (seed 001's ACL). */
  @Get(':collection/:key/acl')
  @Roles('admin', 'auditor', 'client')
  acl(
    @CurrentPrincipal() caller: Principal,
    @Param('collection') collection: string,
    @Param('key') key: string,
  ): Promise<AclEntry[]> {
    return this.self.acl(caller, collection, key);
  }

  /** Shares it with a subject or (admins) `role:<name>`: `{permission: read|manage}`; answers the new ACL. */
  @Put(':collection/:key/acl/:grantee')
  @Roles('admin', 'client')
  share(
    @CurrentPrincipal() caller: Principal,
    @Param('collection') collection: string,
    @Param('key') key: string,
    @Param('grantee') grantee: string,
    @Body() body: unknown,
  ): Promise<AclEntry[]> {
    return this.self.share(caller, collection, key, grantee, body);
  }

  @Delete(':collection/:key/acl/:grantee')
  @Roles('admin', 'client')
  @HttpCode(204)
  unshare(
    @CurrentPrincipal() caller: Principal,
    @Param('collection') collection: string,
    @Param('key') key: string,
    @Param('grantee') grantee: string,
  ): Promise<void> {
    return this.self.unshare(caller, collection, key, grantee);
  }
}

function flag(value: string | undefined): boolean {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  throw DomainError.validation([{ path: 'dryRun', message: 'expected true or false' }]);
}
