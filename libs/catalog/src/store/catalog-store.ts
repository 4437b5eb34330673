import type { EntityManager } from 'typeorm';
import { CATALOG_DESCRIPTORS } from '../model/catalog-descriptors';
import type { EntityDescriptor } from '../model/descriptor';
import { entityFor, type Row } from '../model/entity-schemas';
import type { Sealed, SecretCipher } from '../secrets/secret-cipher';
import { SECRET_SPECS, type Secret } from '../secrets/secret-specs';
import { linkItems, shapeRecord } from './catalog-records';

/** A catalog entity as stored: its API shape and, decrypted in memory only, its secret. */
export interface StoredEntity {
  record: Row;
  /** null also when the entity was loaded sealed (see `open`). */
  secret: Secret | null;
  sealed: Sealed | null;
}

/** Everything in the catalog, by bundle list name and key. The catalog is small: it fits. */
export type CatalogView = Map<string, Map<string, StoredEntity>>;

/** Ties a ciphertext to its row, so a ciphertext copied to another row does not decrypt. */
export const secretBinding = (d: EntityDescriptor, key: string): string => `${d.table}/${key}`;

export class CatalogStore {
  constructor(private readonly cipher: SecretCipher) {}

  /** The whole catalog with secrets left sealed: a write decrypts only what it touches. */
  async loadView(manager: EntityManager): Promise<CatalogView> {
    const view: CatalogView = new Map();
    for (const d of CATALOG_DESCRIPTORS) view.set(d.kind, await this.loadMany(manager, d, undefined, false));
    return view;
  }

  /** Decrypts a sealed entity's secret and fills in its flags. */
  open(d: EntityDescriptor, key: string, entity: StoredEntity): StoredEntity {
    if (!d.secrets || !entity.sealed || entity.secret) return entity;
    const secret = JSON.parse(this.cipher.decrypt(entity.sealed, secretBinding(d, key))) as Secret;
    return { ...entity, secret, record: { ...entity.record, ...SECRET_SPECS[d.secrets].flags(secret) } };
  }

  async loadMany(
    manager: EntityManager,
    d: EntityDescriptor,
    keys?: string[],
    decrypt = true,
  ): Promise<Map<string, StoredEntity>> {
    const where = keys ? keys.map((k) => ({ [d.key.field]: k })) : undefined;
    if (keys && keys.length === 0) return new Map();
    const rows = await manager.find(entityFor(d.table), { where, order: { [d.key.field]: 'ASC' } });
    const links: Record<string, Map<string, Row[]>> = {};
    for (const link of d.links) {
      const linkWhere = keys ? keys.map((k) => ({ [link.parent]: k })) : undefined;
      const linkRows = await manager.find(entityFor(link.table), { where: linkWhere, order: { position: 'ASC' } });
      const byParent = new Map<string, Row[]>();
      for (const row of linkRows) {
        const parent = String(row[link.parent]);
        byParent.set(parent, [...(byParent.get(parent) ?? []), row]);
      }
      links[link.field] = byParent;
    }
    const result = new Map<string, StoredEntity>();
    for (const row of rows) {
      const key = String(row[d.key.field]);
      const sealed: Sealed | null =
        d.secrets && typeof row.secretCiphertext === 'string'
          ? { keyId: String(row.secretKeyId), ciphertext: row.secretCiphertext }
          : null;
      const ownLinks = Object.fromEntries(d.links.map((l) => [l.field, links[l.field].get(key) ?? []]));
      const entity = { record: shapeRecord(d, row, ownLinks, null), secret: null, sealed };
      result.set(key, decrypt ? this.open(d, key, entity) : entity);
    }
    return result;
  }

  async loadOne(manager: EntityManager, d: EntityDescriptor, key: string): Promise<StoredEntity | null> {
    return (await this.loadMany(manager, d, [key])).get(key) ?? null;
  }

  /** Inserts or updates one entity and replaces its link rows. `secret: undefined` keeps the stored one. */
  async write(
    manager: EntityManager,
    d: EntityDescriptor,
    record: Row,
    secret: Secret | null | undefined,
    exists: boolean,
  ): Promise<void> {
    const key = String(record[d.key.field]);
    const row: Row = { [d.key.field]: key };
    for (const name of Object.keys(d.fields)) row[name] = record[name];
    if (d.secrets && secret !== undefined) {
      const sealed =
        secret && Object.keys(secret).length > 0
          ? this.cipher.encrypt(JSON.stringify(secret), secretBinding(d, key))
          : null;
      row.secretKeyId = sealed?.keyId ?? null;
      row.secretCiphertext = sealed?.ciphertext ?? null;
    }
    const entity = entityFor(d.table);
    if (exists) await manager.update(entity, { [d.key.field]: key }, row);
    else await manager.insert(entity, row);
    for (const link of d.links) {
      const linkEntity = entityFor(link.table);
      await manager.delete(linkEntity, { [link.parent]: key });
      const rows = linkItems(link, record).map((item, position) => ({ ...item, [link.parent]: key, position }));
      if (rows.length > 0) await manager.insert(linkEntity, rows);
    }
  }
}
