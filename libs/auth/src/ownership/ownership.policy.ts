import { DomainError } from '@parley/core';
import { hasRole, type Principal, type Role } from '../principal';

/** What is being read, so a refusal reads exactly like a resource that does not exist. */
export interface ResourceRef {
  type: string;
  id: string;
}

/** FORBIDDEN unless the principal holds at least one of `roles`. */
export function requireRoles(principal: Principal, roles: readonly Role[]): void {
  if (roles.length === 0 || roles.some((r) => hasRole(principal, r))) return;
  throw new DomainError('FORBIDDEN', `This operation needs one of the roles: ${roles.join(', ')}.`, {
    requiredRoles: [...roles],
  });
}

/**
 * The one rule for reading a conversation, for single reads and lists alike: auditors and
 * admins read every conversation; a client only those its subject owns. A principal with
 * neither role reads none, whatever its subject.
 */
export function canReadConversation(principal: Principal, ownerSubject: string): boolean {
  return hasRole(principal, 'admin') || hasRole(principal, 'auditor') || isOwner(principal, ownerSubject);
}

function canCommand(principal: Principal, ownerSubject: string): boolean {
  return hasRole(principal, 'admin') || isOwner(principal, ownerSubject);
}

/**
 * Auditors and admins read everything; a client reads only what its subject owns. A refusal is
 * NOT_FOUND, so a client cannot learn that someone else's conversation exists.
 */
export function assertCanRead(principal: Principal, ownerSubject: string, resource?: ResourceRef): void {
  if (canReadConversation(principal, ownerSubject)) return;
  throw resource ? DomainError.notFound(resource.type, resource.id) : new DomainError('NOT_FOUND', 'Not found.');
}

/** Admins command anyone's conversation; a client only its own; an auditor never: FORBIDDEN. */
export function assertCanCommand(principal: Principal, ownerSubject: string): void {
  if (canCommand(principal, ownerSubject)) return;
  throw new DomainError('FORBIDDEN', 'This caller may not command this conversation.');
}

/**
 * For list queries: the owner to filter by, or null when the principal may see every owner's
 * rows. The same rule as `canReadConversation`: a principal that is no client matches no owner.
 */
export function ownerFilter(principal: Principal): string | null {
  if (hasRole(principal, 'admin') || hasRole(principal, 'auditor')) return null;
  return hasRole(principal, 'client') ? principal.subject : NO_OWNER;
}

/** An owner no conversation has (subjects are never empty). */
const NO_OWNER = '';

function isOwner(principal: Principal, ownerSubject: string): boolean {
  return hasRole(principal, 'client') && principal.subject === ownerSubject;
}
