import { Inject, Injectable } from '@nestjs/common';
import { DATA_SOURCE, DomainError } from '@parley/platform';
import type { DataSource } from 'typeorm';
import { descriptorOf } from '../model/catalog-descriptors';
import { aclEntity } from '../model/entity-schemas';

/**
 * Who may see and change owned catalog entities (seed 001's providers and models): the
 * owner, everyone when instance-wide, and grantees of the ACL. A grantee is a subject or
 * `role:<name>`. Entities without an owner field are shared configuration: readable by all.
 * The auth layer calls these; the catalog itself does not know the caller.
 */
export const ADMIN_ROLE = 'admin';

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

/** The ACL table: share an owned entity with a subject or a role. */
@Injectable()
export class CatalogAccess {
  constructor(@Inject(DATA_SOURCE) private readonly dataSource: DataSource) {}

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
