import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '@parley/core';
import { CatalogService } from '../apply/catalog.service';
import { descriptorForRoute } from '../model/catalog-descriptors';
import type { Row } from '../model/entity-schemas';
import { CatalogReader } from '../store/catalog-reader';
import { CatalogAccess, type AclEntry, type Caller } from './catalog-access';

/** The collections a client may write (seed 001's owned entities); every other one is the admins'. */
export const SELF_SERVICE: readonly string[] = ['providers', 'models'];

const isAdmin = (caller: Caller) => caller.roles.includes('admin');
/** Admins and auditors read the catalog's own view of everything (secrets as flags only). */
export const seesAll = (caller: Caller): boolean => isAdmin(caller) || caller.roles.includes('auditor');
const isObject = (v: unknown): v is Row => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What a caller that may use but not manage a provider or model sees of it: no address, owner or secret. */
const USABLE_FIELDS: Readonly<Record<string, readonly string[]>> = {
  providers: ['code', 'description', 'providerType', 'status', 'instanceWide'],
  models: [
    'code',
    'description',
    'llmModelName',
    'llmProvider',
    'modelType',
    'llmKnowledgeCutoffDate',
    'llmInputTokenPrice',
    'llmOutputTokenPrice',
    'llmContextWindow',
    'capabilities',
    'status',
    'instanceWide',
  ],
};

const pick = (row: Row, fields: readonly string[]): Row =>
  Object.fromEntries(fields.filter((f) => f in row).map((f) => [f, row[f]]));

/**
 * The catalog as a caller may change it (seed 001's self-service): admins everything, as
 * CatalogService does; a client creates providers and models it owns, and reads, changes,
 * deletes and shares only those it may (owner or `manage` grantee). Every refusal is decided
 * before CatalogService writes, so a refused request changes nothing:
 * - another collection (agents, actions, tools, …): FORBIDDEN;
 * - an entity the client may not even use: NOT_FOUND, as an unknown one (seed 001's get);
 * - one it may use but not manage: FORBIDDEN;
 * - `instanceWide` or `owner` other than they are (a new entity: false and the caller): FORBIDDEN;
 * - a model on a provider it may not use: VALIDATION_FAILED on `llmProvider`, as an unknown provider;
 * - a share with a role (`role:<name>`, which would reach every holder of it): FORBIDDEN.
 */
@Injectable()
export class CatalogSelfService {
  constructor(
    @Inject(CatalogService) private readonly catalog: CatalogService,
    @Inject(CatalogReader) private readonly reader: CatalogReader,
    @Inject(CatalogAccess) private readonly access: CatalogAccess,
  ) {}

  async list(caller: Caller, route: string): Promise<Row[]> {
    if (seesAll(caller)) return this.catalog.list(route);
    selfService(route);
    const views: Row[] = [];
    for (const row of await this.catalog.list(route)) {
      if (await this.access.canUse(caller, route, row)) views.push(await this.view(caller, route, row));
    }
    return views;
  }

  async get(caller: Caller, route: string, key: string): Promise<Row> {
    if (seesAll(caller)) return this.catalog.get(route, key);
    selfService(route);
    return this.view(caller, route, await this.usable(caller, route, key));
  }

  async create(caller: Caller, route: string, body: unknown): Promise<Row> {
    if (isAdmin(caller)) return this.catalog.create(route, body);
    selfService(route);
    if (!isObject(body)) return this.catalog.create(route, body);
    const owned = ownedFields(caller, body, { owner: caller.subject, instanceWide: false });
    if (route === 'models') await this.assertProviderUsable(caller, body.llmProvider);
    return this.catalog.create(route, { ...body, ...owned });
  }

  async update(caller: Caller, route: string, key: string, body: unknown): Promise<Row> {
    if (isAdmin(caller)) return this.catalog.update(route, key, body);
    selfService(route);
    const stored = await this.manageable(caller, route, key);
    if (!isObject(body)) return this.catalog.update(route, key, body);
    const owned = ownedFields(caller, body, { owner: stored.owner, instanceWide: stored.instanceWide });
    if (route === 'models' && body.llmProvider !== stored.llmProvider)
      await this.assertProviderUsable(caller, body.llmProvider);
    return this.catalog.update(route, key, { ...body, ...owned });
  }

  async remove(caller: Caller, route: string, key: string): Promise<void> {
    if (!isAdmin(caller)) {
      selfService(route);
      await this.manageable(caller, route, key);
    }
    return this.catalog.remove(route, key);
  }

  async acl(caller: Caller, route: string, key: string): Promise<AclEntry[]> {
    if (!seesAll(caller)) {
      selfService(route);
      await this.manageable(caller, route, key);
    }
    return this.access.list(route, key);
  }

  async share(caller: Caller, route: string, key: string, grantee: string, body: unknown): Promise<AclEntry[]> {
    if (!isAdmin(caller)) {
      selfService(route);
      await this.manageable(caller, route, key);
      if (grantee.startsWith('role:'))
        throw new DomainError('FORBIDDEN', 'Only an admin may share with a role; share with a subject.', { grantee });
    }
    return this.access.share(route, key, grantee, body);
  }

  async unshare(caller: Caller, route: string, key: string, grantee: string): Promise<void> {
    if (!isAdmin(caller)) {
      selfService(route);
      await this.manageable(caller, route, key);
    }
    return this.access.unshare(route, key, grantee);
  }

  /**
   * How `caller` sees a provider or model it may use: the catalog's view (secrets as flags)
   * when it sees everything or may manage it, else the fields it needs to use it.
   */
  async view(caller: Caller, kind: string, row: Row): Promise<Row> {
    if (seesAll(caller) || (await this.access.canChange(caller, kind, row))) return row;
    return pick(row, USABLE_FIELDS[kind]);
  }

  /** The entity, when `caller` may use it; NOT_FOUND as for an unknown one otherwise. */
  private async usable(caller: Caller, route: string, key: string): Promise<Row> {
    const row = await this.catalog.get(route, key);
    if (await this.access.canUse(caller, route, row)) return row;
    throw notFound(route, key);
  }

  /** The entity, when `caller` may change it; NOT_FOUND when it may not even use it, else FORBIDDEN. */
  private async manageable(caller: Caller, route: string, key: string): Promise<Row> {
    const row = await this.usable(caller, route, key);
    if (await this.access.canChange(caller, route, row)) return row;
    throw new DomainError(
      'FORBIDDEN',
      `Only the owner of ${descriptorForRoute(route)!.label} '${key}', a subject it is shared with to manage, or an admin may change or share it.`,
      { entity: route, key },
    );
  }

  private async assertProviderUsable(caller: Caller, code: unknown): Promise<void> {
    if (typeof code !== 'string') return; // missing or malformed: the catalog's validation names it
    const provider = await this.reader.record('providers', code);
    if (provider && (await this.access.canUse(caller, 'providers', provider))) return;
    throw DomainError.validation(
      [{ path: 'llmProvider', message: `no provider '${code}' this caller may use` }],
      'The catalog change has 1 problem(s); nothing was written.',
    );
  }
}

function selfService(route: string): void {
  if (SELF_SERVICE.includes(route)) return;
  throw new DomainError('FORBIDDEN', `Only an admin may change '${route}'; clients manage providers and models.`, {
    collection: route,
  });
}

/** The same answer as CatalogService gives for an unknown key, so a private entity's existence is not revealed. */
function notFound(route: string, key: string): DomainError {
  const d = descriptorForRoute(route)!;
  return new DomainError('NOT_FOUND', `No ${d.label} '${key}' in the catalog.`, { entity: d.kind, key });
}

/**
 * `owner` and `instanceWide` as a client writes them: as they are (`current`), which a body
 * may repeat but not change. Instance-wide sharing and ownership transfers are for admins.
 */
function ownedFields(caller: Caller, body: Row, current: { owner: unknown; instanceWide: unknown }): Row {
  for (const field of ['owner', 'instanceWide'] as const) {
    const given = body[field];
    const now = current[field] ?? (field === 'instanceWide' ? false : null);
    if (given !== undefined && given !== now)
      throw new DomainError(
        'FORBIDDEN',
        field === 'instanceWide'
          ? 'Only an admin may make a provider or model instance-wide (or private again).'
          : `Only an admin may give a provider or model another owner than '${String(now)}'.`,
        { field, subject: caller.subject },
      );
  }
  return { owner: current.owner ?? null, instanceWide: current.instanceWide ?? false };
}
