import { openCatalogDb, testCipher, type CatalogTestDb } from '../catalog.test-kit';
import { CatalogReader } from '../store/catalog-reader';
import { CatalogAccess, canManage, canRead } from './catalog-access';

describe('catalog access', () => {
  const privateModel = { owner: 'alice', instanceWide: false };

  it('lets the owner, an admin and everyone for an instance-wide entity read it', () => {
    expect(canRead('alice', [], privateModel)).toBe(true);
    expect(canRead('bob', [], privateModel)).toBe(false);
    expect(canRead('bob', ['admin'], privateModel)).toBe(true);
    expect(canRead('bob', [], { owner: 'alice', instanceWide: true })).toBe(true);
  });

  it('shares through the ACL with a subject or a role', () => {
    expect(canRead('bob', [], privateModel, [{ grantee: 'bob', permission: 'read' }])).toBe(true);
    expect(canRead('carol', ['support'], privateModel, [{ grantee: 'role:support', permission: 'read' }])).toBe(true);
    expect(canManage('bob', [], privateModel, [{ grantee: 'bob', permission: 'read' }])).toBe(false);
    expect(canManage('bob', [], privateModel, [{ grantee: 'bob', permission: 'manage' }])).toBe(true);
    expect(canManage('alice', [], privateModel)).toBe(true);
  });

  it('treats entities without an owner as shared configuration that only admins manage', () => {
    expect(canRead('anyone', [], { code: 'CHAT' } as object)).toBe(true);
    expect(canManage('anyone', [], { code: 'CHAT' } as object)).toBe(false);
  });

  describe('the ACL table', () => {
    let t: CatalogTestDb;
    beforeAll(async () => {
      t = await openCatalogDb('catalog_acl');
    });
    afterAll(() => t.close());

    it('grants, upgrades and revokes', async () => {
      const access = new CatalogAccess(t.dataSource, new CatalogReader(t.dataSource, testCipher()));
      await access.grant('models', 'SIM-CHAT', 'bob', 'read');
      await access.grant('models', 'SIM-CHAT', 'bob', 'manage');
      await access.grant('models', 'SIM-CHAT', 'role:support', 'read');
      expect(await access.aclOf('models', 'SIM-CHAT')).toEqual([
        { grantee: 'bob', permission: 'manage' },
        { grantee: 'role:support', permission: 'read' },
      ]);
      await access.revoke('models', 'SIM-CHAT', 'bob');
      expect(await access.aclOf('models', 'SIM-CHAT')).toEqual([{ grantee: 'role:support', permission: 'read' }]);
      await expect(access.grant('gadgets', 'X', 'bob', 'read')).rejects.toThrow(/gadgets/);
    });
  });
});
