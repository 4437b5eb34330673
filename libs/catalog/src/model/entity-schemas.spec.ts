import { openCatalogDb, type CatalogTestDb } from '../catalog.test-kit';
import { CATALOG_ENTITIES } from './entity-schemas';

describe('catalog entities and the migration', () => {
  let t: CatalogTestDb;
  beforeAll(async () => {
    t = await openCatalogDb('catalog_schema');
  });
  afterAll(() => t.close());

  it('map every property onto a column of the migrated table with the same type', async () => {
    const columns: { table_name: string; column_name: string; data_type: string; max: number | null }[] =
      await t.dataSource.query(
        `select table_name, column_name, data_type, character_maximum_length as max
           from information_schema.columns where table_name like 'cat\\_%'`,
      );
    const found = new Map(columns.map((c) => [`${c.table_name}.${c.column_name}`, c]));
    const drift: string[] = [];
    for (const entity of CATALOG_ENTITIES) {
      const metadata = t.dataSource.getMetadata(entity);
      for (const column of metadata.columns) {
        const db = found.get(`${metadata.tableName}.${column.databaseName}`);
        const expected = String(column.type).replace('varchar', 'character varying');
        if (!db) drift.push(`${metadata.tableName}.${column.databaseName} is missing`);
        else if (db.data_type !== expected) drift.push(`${metadata.tableName}.${column.databaseName}: ${db.data_type}`);
        else if (column.length && Number(column.length) !== db.max)
          drift.push(`${metadata.tableName}.${column.databaseName} length`);
      }
    }
    expect(drift).toEqual([]);
    const tables = new Set(columns.map((c) => c.table_name));
    const mapped = new Set(CATALOG_ENTITIES.map((e) => t.dataSource.getMetadata(e).tableName));
    expect([...tables].filter((table) => !mapped.has(table))).toEqual([]);
  });
});
