import { z } from 'zod';

/**
 * The field types catalog entities are described with. One description gives the bundle's
 * zod schema, the TypeORM column and the API shape, so the three never drift apart.
 */
export type Field =
  | { type: 'string'; max: number; required: boolean }
  | { type: 'text'; required: boolean }
  | { type: 'int'; required: boolean; min: number }
  | { type: 'number'; required: boolean; min?: number; max?: number }
  | { type: 'bool'; default: boolean }
  | { type: 'enum'; values: readonly [string, ...string[]]; default: string | null; required: boolean }
  | { type: 'ref'; target: string; max: number; required: boolean }
  | { type: 'json'; required: boolean }
  | { type: 'list'; max: number; maxItems?: number }
  | { type: 'date' };

export const str = (max: number, required = false): Field => ({ type: 'string', max, required });
export const text = (required = false): Field => ({ type: 'text', required });
export const int = (min = 0, required = false): Field => ({ type: 'int', min, required });
export const num = (min?: number, max?: number, required = false): Field => ({ type: 'number', min, max, required });
export const bool = (fallback = false): Field => ({ type: 'bool', default: fallback });
export const oneOf = (values: readonly [string, ...string[]], fallback: string | null = null): Field => ({
  type: 'enum',
  values,
  default: fallback,
  required: false,
});
export const ref = (target: string, max: number, required = false): Field => ({ type: 'ref', target, max, required });
export const json = (required = false): Field => ({ type: 'json', required });
export const list = (max: number, maxItems?: number): Field => ({ type: 'list', max, maxItems });
export const date = (): Field => ({ type: 'date' });

const TEXT_MAX = 100_000;
export const KEY_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** A business key: the seed's maximum length, and characters that are safe in a URL path. */
export function keySchema(max: number) {
  return z
    .string({ message: 'expected a string' })
    .min(1, { message: 'must not be empty' })
    .max(max, { message: `key too long: at most ${max} characters` })
    .regex(KEY_PATTERN, { message: 'expected letters, digits, _ . or - (starting with a letter or digit)' });
}

function optional<T extends z.ZodType>(schema: T, required: boolean) {
  return required ? schema : schema.nullable().default(null);
}

export function fieldSchema(field: Field): z.ZodType {
  switch (field.type) {
    case 'string':
      return optional(
        z.string().max(field.max, { message: `too long: at most ${field.max} characters` }),
        field.required,
      );
    case 'text':
      return optional(z.string().max(TEXT_MAX), field.required);
    case 'int':
      return optional(z.number().int().min(field.min), field.required);
    case 'number': {
      let n = z.number();
      if (field.min !== undefined) n = n.min(field.min);
      if (field.max !== undefined) n = n.max(field.max);
      return optional(n, field.required);
    }
    case 'bool':
      return z.boolean().default(field.default);
    case 'enum': {
      const e = z.enum(field.values as [string, ...string[]]);
      return field.default !== null ? e.default(field.default) : optional(e, field.required);
    }
    case 'ref':
      return optional(keySchema(field.max), field.required);
    case 'json':
      return optional(z.record(z.string(), z.unknown()), field.required);
    case 'list': {
      const items = z.array(z.string().max(field.max, { message: `too long: at most ${field.max} characters` }));
      const capped =
        field.maxItems === undefined
          ? items
          : items.max(field.maxItems, { message: `too many: at most ${field.maxItems} items` });
      return capped.default([]);
    }
    case 'date':
      return optional(z.string().regex(/^\d{4}-\d{2}-\d{2}$/, { message: 'expected a date YYYY-MM-DD' }), false);
  }
}

/** PostgreSQL column type and length of a field (see the catalog migration). */
export function columnOf(field: Field): { type: string; length?: number; nullable: boolean } {
  switch (field.type) {
    case 'string':
      return { type: 'varchar', length: field.max, nullable: !field.required };
    case 'text':
      return { type: 'text', nullable: !field.required };
    case 'int':
      return { type: 'integer', nullable: !field.required };
    case 'number':
      return { type: 'double precision', nullable: !field.required };
    case 'bool':
      return { type: 'boolean', nullable: false };
    case 'enum':
      return { type: 'varchar', nullable: field.default === null && !field.required };
    case 'ref':
      return { type: 'varchar', length: field.max, nullable: !field.required };
    case 'json':
      return { type: 'json', nullable: !field.required };
    case 'list':
      return { type: 'json', nullable: false };
    case 'date':
      return { type: 'date', nullable: true };
  }
}

export const snakeCase = (name: string): string => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
