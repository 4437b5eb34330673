import { DomainError } from '@parley/core';
import { hasRole, type Principal } from '../principal';
import type { ResourceRef } from './ownership.policy';

/** Seed 001's sharing of catalog entities (providers, models, …). */
export interface CatalogAccess {
  /** The subject that created it; null for entities created by an administrator for everyone. */
  ownerSubject: string | null;
  /** Usable by every caller of the instance. */
  instanceWide: boolean;
  /** Subjects it has been shared with. */
  acl: readonly string[];
}

/** Owned, instance-wide, or ACL-shared; auditors and admins see every entity. */
export function canUseCatalogEntity(principal: Principal, entity: CatalogAccess): boolean {
  if (hasRole(principal, 'admin') || hasRole(principal, 'auditor')) return true;
  return entity.ownerSubject === principal.subject || entity.instanceWide || entity.acl.includes(principal.subject);
}

/** NOT_FOUND for an entity the caller cannot see (its existence is not revealed). */
export function assertCanUseCatalogEntity(principal: Principal, entity: CatalogAccess, resource: ResourceRef): void {
  if (!canUseCatalogEntity(principal, entity)) throw DomainError.notFound(resource.type, resource.id);
}

/** Seed 001: update and delete are owner only; admins manage everything. FORBIDDEN otherwise. */
export function assertCanManageCatalogEntity(principal: Principal, entity: CatalogAccess): void {
  if (hasRole(principal, 'admin')) return;
  if (entity.ownerSubject !== null && entity.ownerSubject === principal.subject) return;
  throw new DomainError('FORBIDDEN', 'Only the owner of this entity or an admin may change it.');
}
