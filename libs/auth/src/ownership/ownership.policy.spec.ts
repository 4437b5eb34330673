import { DomainError } from '@parley/core';
import type { Principal } from '../principal';
import {
  assertCanManageCatalogEntity,
  assertCanUseCatalogEntity,
  canUseCatalogEntity,
  type CatalogAccess,
} from './catalog-access.policy';
import { assertCanCommand, assertCanRead, ownerFilter, requireRoles } from './ownership.policy';

const alice: Principal = { subject: 'alice', roles: ['client'] };
const bob: Principal = { subject: 'bob', roles: ['client'] };
const auditor: Principal = { subject: 'audit-bot', roles: ['auditor'] };
const admin: Principal = { subject: 'root', roles: ['admin'] };

const codeOf = (fn: () => void): string | null => {
  try {
    fn();
    return null;
  } catch (err) {
    return (err as DomainError).code;
  }
};

describe('conversation ownership', () => {
  it.each([
    ['the owning client', alice, null],
    ['another client', bob, 'NOT_FOUND'],
    ['an auditor', auditor, null],
    ['an admin', admin, null],
  ])('reading alice’s conversation as %s → %s', (_who, principal, expected) => {
    expect(codeOf(() => assertCanRead(principal, 'alice'))).toBe(expected);
  });

  it.each([
    ['the owning client', alice, null],
    ['another client', bob, 'FORBIDDEN'],
    ['an auditor', auditor, 'FORBIDDEN'],
    ['an admin', admin, null],
  ])('commanding alice’s conversation as %s → %s', (_who, principal, expected) => {
    expect(codeOf(() => assertCanCommand(principal, 'alice'))).toBe(expected);
  });

  it('answers a forbidden read exactly like an unknown conversation', () => {
    let refused: DomainError | undefined;
    try {
      assertCanRead(bob, 'alice', { type: 'Conversation', id: 'c-1' });
    } catch (err) {
      refused = err as DomainError;
    }
    expect(refused).toEqual(DomainError.notFound('Conversation', 'c-1'));
    expect(refused?.message).toBe("Conversation 'c-1' was not found.");
  });

  it('does not let a subject named like the owner but without the client role command', () => {
    expect(codeOf(() => assertCanCommand({ subject: 'alice', roles: ['auditor'] }, 'alice'))).toBe('FORBIDDEN');
  });

  it('filters lists to the client’s own rows and leaves them whole for auditors and admins', () => {
    expect(ownerFilter(alice)).toBe('alice');
    expect(ownerFilter(auditor)).toBeNull();
    expect(ownerFilter(admin)).toBeNull();
    expect(ownerFilter({ subject: 'alice', roles: [] })).toBe('');
  });

  it('refuses a principal without any of the required roles with FORBIDDEN', () => {
    expect(codeOf(() => requireRoles(auditor, ['client', 'admin']))).toBe('FORBIDDEN');
    expect(codeOf(() => requireRoles(admin, ['client', 'admin']))).toBeNull();
  });
});

describe('catalog entity access (seed 001)', () => {
  const owned: CatalogAccess = { ownerSubject: 'alice', instanceWide: false, acl: [] };
  const shared: CatalogAccess = { ownerSubject: 'alice', instanceWide: false, acl: ['bob'] };
  const everyone: CatalogAccess = { ownerSubject: null, instanceWide: true, acl: [] };

  it('lets a client use what it owns, what is instance-wide and what is shared with it', () => {
    expect(canUseCatalogEntity(alice, owned)).toBe(true);
    expect(canUseCatalogEntity(bob, owned)).toBe(false);
    expect(canUseCatalogEntity(bob, shared)).toBe(true);
    expect(canUseCatalogEntity(bob, everyone)).toBe(true);
    expect(canUseCatalogEntity(auditor, owned)).toBe(true);
  });

  it('hides an entity that is not shared with the caller behind NOT_FOUND', () => {
    expect(codeOf(() => assertCanUseCatalogEntity(bob, owned, { type: 'Provider', id: 'SIM' }))).toBe('NOT_FOUND');
  });

  it('lets only the owner or an admin change an entity, even one shared with others', () => {
    expect(codeOf(() => assertCanManageCatalogEntity(alice, shared))).toBeNull();
    expect(codeOf(() => assertCanManageCatalogEntity(bob, shared))).toBe('FORBIDDEN');
    expect(codeOf(() => assertCanManageCatalogEntity(bob, everyone))).toBe('FORBIDDEN');
    expect(codeOf(() => assertCanManageCatalogEntity(admin, everyone))).toBeNull();
  });
});
