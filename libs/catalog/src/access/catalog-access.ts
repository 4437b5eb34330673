import { Inject, Injectable } from '@nestjs/common';
import { DATA_SOURCE } from '@parley/platform';
import { DomainError } from '@parley/core';
import type { DataSource } from 'typeorm';
import { descriptorOf } from '../model/catalog-descriptors';
import { aclEntity, type Row } from '../model/entity-schemas';
import { CatalogReader } from '../store/catalog-reader';

/**
 * Who may see and change owned catalog entities (seed 001's providers and models): the
 * owner, everyone when instance-wide, and grantees of the ACL. A grantee is a subject or
 * `role:<name>`. Entities without an owner field are shared configuration: readable by all.
 * Tools are the exception: one is usable by a non-admin only through a grant of its ACL
 * (`toolsGranted`), so a client can attach to its conversation only the tools shared with it.
 * Callers pass the principal: the catalog's HTTP routes, and StartConversation (`assertCanUse`).
 */
const ADMIN_ROLE = 'admin';

export type Permission = 'read' | 'manage';

export interface AclEntry {
  grantee: string;
  permission: Permission;
}

export interface OwnedEntity {
  owner?: unknown;
  instanceWide?: unknown;
}

const grants = (subject: string, roles: readonly string[], acl: readonly AclEntry[], allowed: Permission[]) =>
  acl.some(
    (e) => allowed.includes(e.permission) && (e.grantee === subject || roles.some((r) => e.grantee === `role:${r}`)),
  );

export function canRead(
  subject: string,
  roles: readonly string[],
  entity: OwnedEntity,
  acl: readonly AclEntry[] = [],
): boolean {
  if (roles.includes(ADMIN_ROLE) || !('owner' in entity) || entity.instanceWide === true) return true;
  return entity.owner === subject || grants(subject, roles, acl, ['read', 'manage']);
}

export function canManage(
  subject: string,
  roles: readonly string[],
  entity: OwnedEntity,
  acl: readonly AclEntry[] = [],
): boolean {
  if (roles.includes(ADMIN_ROLE)) return true;
  return ('owner' in entity && entity.owner === subject) || grants(subject, roles, acl, ['manage']);
}

/** The catalog lists whose entities are shared through the ACL: seed 001's owned ones, and tools. */
export const SHARED_KINDS: Readonly<Record<string, string>> = { providers: 'Provider', models: 'Model', tools: 'Tool' };
const GRANTEE = /^(role:[a-z][a-z0-9_-]{0,63}|[\w.@:-]{1,200})$/;
const PERMISSIONS: readonly string[] = ['read', 'manage'];

export interface Caller {
  subject: string;
  roles: readonly string[];
}

/** The ACL table: share an owned entity with a subject or a role. */
@Injectable()
export class CatalogAccess {
  constructor(
    @Inject(DATA_SOURCE) private readonly dataSource: DataSource,
    @Inject(CatalogReader) private readonly reader: CatalogReader,
  ) {}

  /** Whether `caller` may use the entity: `assertCanUse` as a yes or no. */
  async canUse(caller: Caller, kind: string, entity: Row): Promise<boolean> {
    if (canRead(caller.subject, caller.roles, entity)) return true;
    return canRead(caller.subject, caller.roles, entity, await this.aclOf(kind, String(entity.code)));
  }

  /** Whether `caller` may change, delete and share the entity: an admin, its owner, or a `manage` grantee. */
  async canChange(caller: Caller, kind: string, entity: Row): Promise<boolean> {
    if (canManage(caller.subject, caller.roles, entity)) return true;
    return canManage(caller.subject, caller.roles, entity, await this.aclOf(kind, String(entity.code)));
  }

  /** The tool codes among `codes` that `caller` may use: all for an admin, else those granted to it. */
  async toolsGranted(caller: Caller, codes: readonly string[]): Promise<Set<string>> {
    if (caller.roles.includes(ADMIN_ROLE)) return new Set(codes);
    const granted = new Set<string>();
    for (const code of new Set(codes)) {
      if (grants(caller.subject, caller.roles, await this.aclOf('tools', code), ['read', 'manage'])) granted.add(code);
    }
    return granted;
  }

  /** The ACL of a provider, model or tool, for the admin routes; NOT_FOUND for an unknown one. */
  async list(kind: string, key: string): Promise<AclEntry[]> {
    await this.existing(kind, key);
    return this.aclOf(kind, key);
  }

  /** Shares a provider, model or tool with `grantee` (a subject or `role:<name>`); returns the new ACL. */
  async share(kind: string, key: string, grantee: string, body: unknown): Promise<AclEntry[]> {
    await this.existing(kind, key);
    const permission = (body as { permission?: unknown } | null)?.permission;
    const problems = [
      ...(GRANTEE.test(grantee) ? [] : [{ path: 'grantee', message: 'expected a subject or role:<name>' }]),
      ...(typeof permission === 'string' && PERMISSIONS.includes(permission)
        ? []
        : [{ path: 'permission', message: 'expected read or manage' }]),
    ];
    if (problems.length > 0) throw DomainError.validation(problems);
    await this.grant(kind, key, grantee, permission as Permission);
    return this.aclOf(kind, key);
  }

  /** Takes a share back; NOT_FOUND when the entity or the grant does not exist. */
  async unshare(kind: string, key: string, grantee: string): Promise<void> {
    await this.existing(kind, key);
    if (!(await this.aclOf(kind, key)).some((e) => e.grantee === grantee))
      throw new DomainError('NOT_FOUND', `${SHARED_KINDS[kind]} '${key}' is not shared with '${grantee}'.`);
    await this.revoke(kind, key, grantee);
  }

  /**
   * FORBIDDEN unless `caller` may use the entity: an admin, its owner, anyone when it is
   * instance-wide, or a grantee of the ACL (asked only when the first three do not decide).
   */
  async assertCanUse(caller: Caller, kind: string, entity: Row): Promise<void> {
    if (await this.canUse(caller, kind, entity)) return;
    throw new DomainError(
      'FORBIDDEN',
      `${SHARED_KINDS[kind] ?? kind} '${String(entity.code)}' is not shared with '${caller.subject}'.`,
      { [kind === 'models' ? 'model' : 'provider']: entity.code },
    );
  }

  private async existing(kind: string, key: string): Promise<void> {
    if (!SHARED_KINDS[kind])
      throw DomainError.validation(
        [{ path: 'collection', message: 'only providers, models and tools are shared through the ACL' }],
        `'${kind}' has no ACL.`,
      );
    if (!(await this.reader.record(kind, key))) throw DomainError.notFound(SHARED_KINDS[kind], key);
  }

  async grant(kind: string, key: string, grantee: string, permission: Permission): Promise<void> {
    if (!descriptorOf(kind)) throw new DomainError('NOT_FOUND', `There is no catalog entity list '${kind}'.`);
    await this.dataSource.manager.upsert(aclEntity, { entityKind: kind, entityKey: key, grantee, permission }, [
      'entityKind',
      'entityKey',
      'grantee',
    ]);
  }

  async revoke(kind: string, key: string, grantee: string): Promise<void> {
    await this.dataSource.manager.delete(aclEntity, { entityKind: kind, entityKey: key, grantee });
  }

  async aclOf(kind: string, key: string): Promise<AclEntry[]> {
    const rows = await this.dataSource.manager.find(aclEntity, {
      where: { entityKind: kind, entityKey: key },
      order: { grantee: 'ASC' },
    });
    return rows.map((r) => ({ grantee: String(r.grantee), permission: r.permission as Permission }));
  }
}
