import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Put, Query } from '@nestjs/common';
import { Roles } from '@parley/auth';
import { DomainError } from '@parley/core';
import { CatalogAccess, type AclEntry } from '../access/catalog-access';
import { CatalogService, type ApplyResult } from '../apply/catalog.service';
import type { Row } from '../model/entity-schemas';

/**
 * Catalog administration over HTTP (docs/catalog.md): CRUD under /api/v1/catalog/<collection>
 * and a declarative apply. Thin: validation and errors come from CatalogService. Writes are
 * for admins; auditors may read it too. Clients read the catalog through the queries.
 */
@Controller('api/v1/catalog')
@Roles('admin')
export class CatalogController {
  constructor(
    @Inject(CatalogService) private readonly catalog: CatalogService,
    @Inject(CatalogAccess) private readonly access: CatalogAccess,
  ) {}

  /** A YAML or JSON bundle; `?dryRun=true` returns the diff and writes nothing. */
  @Post('apply')
  @HttpCode(200)
  apply(@Body() body: unknown, @Query('dryRun') dryRun?: string): Promise<ApplyResult> {
    return this.catalog.apply(body, { dryRun: flag(dryRun) });
  }

  @Get(':collection')
  @Roles('admin', 'auditor')
  list(@Param('collection') collection: string): Promise<Row[]> {
    return this.catalog.list(collection);
  }

  @Get(':collection/:key')
  @Roles('admin', 'auditor')
  get(@Param('collection') collection: string, @Param('key') key: string): Promise<Row> {
    return this.catalog.get(collection, key);
  }

  @Post(':collection')
  create(@Param('collection') collection: string, @Body() body: unknown): Promise<Row> {
    return this.catalog.create(collection, body);
  }

  @Put(':collection/:key')
  update(@Param('collection') collection: string, @Param('key') key: string, @Body() body: unknown): Promise<Row> {
    return this.catalog.update(collection, key, body);
  }

  @Delete(':collection/:key')
  @HttpCode(204)
  remove(@Param('collection') collection: string, @Param('key') key: string): Promise<void> {
    return this.catalog.remove(collection, key);
  }

  /** Who a provider or model is shared with (seed 001's ACL). */
  @Get(':collection/:key/acl')
  @Roles('admin', 'auditor')
  acl(@Param('collection') collection: string, @Param('key') key: string): Promise<AclEntry[]> {
    return this.access.list(collection, key);
  }

  /** Shares it with a subject or `role:<name>`: `{permission: read|manage}`; answers the new ACL. */
  @Put(':collection/:key/acl/:grantee')
  share(
    @Param('collection') collection: string,
    @Param('key') key: string,
    @Param('grantee') grantee: string,
    @Body() body: unknown,
  ): Promise<AclEntry[]> {
    return this.access.share(collection, key, grantee, body);
  }

  @Delete(':collection/:key/acl/:grantee')
  @HttpCode(204)
  unshare(
    @Param('collection') collection: string,
    @Param('key') key: string,
    @Param('grantee') grantee: string,
  ): Promise<void> {
    return this.access.unshare(collection, key, grantee);
  }
}

function flag(value: string | undefined): boolean {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  throw DomainError.validation([{ path: 'dryRun', message: 'expected true or false' }]);
}
