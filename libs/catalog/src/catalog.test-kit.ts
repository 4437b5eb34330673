import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '@parley/testing';
import { DataSource } from 'typeorm';
import { parse } from 'yaml';
import { CATALOG_ENTITIES } from './model/entity-schemas';
import { SecretCipher } from './secrets/secret-cipher';

/** Shared by the catalog's database tests: a database of their own, a key, the example bundle. */
export const TEST_KEY = 'a'.repeat(64);
export const OTHER_KEY = Buffer.alloc(32, 7).toString('base64');

export const examplePath = join(__dirname, '..', '..', '..', 'examples', 'catalog.yaml');
export const exampleBundle = (): Record<string, unknown[]> =>
  parse(readFileSync(examplePath, 'utf8')) as Record<string, unknown[]>;

export interface CatalogTestDb {
  db: TestDatabase;
  dataSource: DataSource;
  close(): Promise<void>;
}

export async function openCatalogDb(label: string): Promise<CatalogTestDb> {
  const db = await createTestDatabase(label);
  const dataSource = await new DataSource({ type: 'postgres', url: db.url, entities: CATALOG_ENTITIES }).initialize();
  return {
    db,
    dataSource,
    close: async () => {
      await dataSource.destroy();
      await db.drop();
    },
  };
}

export const testCipher = (key: string | null = TEST_KEY, previous: string[] = []) => new SecretCipher(key, previous);
