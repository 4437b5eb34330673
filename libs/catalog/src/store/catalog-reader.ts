import { Inject, Injectable } from '@nestjs/common';
import { DATA_SOURCE } from '@parley/platform';
import type { DataSource } from 'typeorm';
import { descriptorOf } from '../model/catalog-descriptors';
import type { Row } from '../model/entity-schemas';
import { SecretCipher } from '../secrets/secret-cipher';
import { CatalogStore, type StoredEntity } from './catalog-store';

/** Reads of single catalog entities by bundle list name and key, outside any write. */
@Injectable()
export class CatalogReader {
  private readonly store: CatalogStore;

  constructor(
    @Inject(DATA_SOURCE) private readonly dataSource: DataSource,
    @Inject(SecretCipher) cipher: SecretCipher,
  ) {
    this.store = new CatalogStore(cipher);
  }

  async one(kind: string, key: string | null | undefined): Promise<StoredEntity | null> {
    if (key === null || key === undefined) return null;
    return this.store.loadOne(this.dataSource.manager, descriptorOf(kind)!, key);
  }

  async record(kind: string, key: string | null | undefined): Promise<Row | null> {
    return (await this.one(kind, key))?.record ?? null;
  }

  /** The entities with these keys, in the order of the keys (missing ones left out). */
  async many(kind: string, keys: readonly string[]): Promise<StoredEntity[]> {
    const found = await this.store.loadMany(this.dataSource.manager, descriptorOf(kind)!, [...keys]);
    return keys.map((k) => found.get(k)).filter((e): e is StoredEntity => e !== undefined);
  }

  async all(kind: string): Promise<Row[]> {
    const found = await this.store.loadMany(this.dataSource.manager, descriptorOf(kind)!);
    return [...found.values()].map((e) => e.record);
  }
}
