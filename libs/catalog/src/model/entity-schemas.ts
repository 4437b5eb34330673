import { EntitySchema, type EntitySchemaColumnOptions } from 'typeorm';
import { CATALOG_DESCRIPTORS } from './catalog-descriptors';
import type { EntityDescriptor, LinkSpec } from './descriptor';
import { columnOf, snakeCase, type Field } from './fields';

/**
 * TypeORM entities generated from the descriptors: properties keep the bundle's camelCase
 * names, columns are their snake_case forms (see the catalog migration). Rows are plain
 * objects; the catalog never needs entity classes with behaviour.
 */
export type Row = Record<string, unknown>;

function column(name: string, field: Field, primary = false): EntitySchemaColumnOptions {
  const c = columnOf(field);
  return {
    name: snakeCase(name),
    type: c.type as EntitySchemaColumnOptions['type'],
    ...(c.length ? { length: c.length } : {}),
    nullable: c.nullable,
    primary,
  };
}

const SECRET_COLUMNS: Record<string, EntitySchemaColumnOptions> = {
  secretKeyId: { name: 'secret_key_id', type: 'varchar', length: 32, nullable: true },
  secretCiphertext: { name: 'secret_ciphertext', type: 'text', nullable: true },
};

function entitySchema(d: EntityDescriptor): EntitySchema<Row> {
  const columns: Record<string, EntitySchemaColumnOptions> = {
    [d.key.field]: { name: d.key.field, type: 'varchar', length: d.key.max, primary: true },
  };
  for (const [name, field] of Object.entries(d.fields)) columns[name] = column(name, field);
  if (d.secrets) Object.assign(columns, SECRET_COLUMNS);
  return new EntitySchema<Row>({ name: d.table, tableName: d.table, columns });
}

function linkSchema(d: EntityDescriptor, link: LinkSpec): EntitySchema<Row> {
  const [member] = Object.keys(link.columns);
  const columns: Record<string, EntitySchemaColumnOptions> = {
    [link.parent]: { name: link.parent, type: 'varchar', length: d.key.max, primary: true },
    position: { name: 'position', type: 'integer' },
  };
  for (const [name, field] of Object.entries(link.columns)) columns[name] = column(name, field, name === member);
  return new EntitySchema<Row>({ name: link.table, tableName: link.table, columns });
}

export const aclEntity = new EntitySchema<Row>({
  name: 'cat_acl',
  tableName: 'cat_acl',
  columns: {
    entityKind: { name: 'entity_kind', type: 'varchar', length: 32, primary: true },
    entityKey: { name: 'entity_key', type: 'varchar', length: 64, primary: true },
    grantee: { name: 'grantee', type: 'varchar', length: 200, primary: true },
    permission: { name: 'permission', type: 'varchar', length: 8 },
  },
});

const entities = new Map<string, EntitySchema<Row>>();
for (const d of CATALOG_DESCRIPTORS) {
  entities.set(d.table, entitySchema(d));
  for (const link of d.links) entities.set(link.table, linkSchema(d, link));
}

export const entityFor = (table: string): EntitySchema<Row> => entities.get(table)!;

/** Every catalog entity, for `DatabaseModule.forRoot({ entities })`. */
export const CATALOG_ENTITIES: EntitySchema<Row>[] = [...entities.values(), aclEntity];
