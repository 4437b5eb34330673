/**
 * The schema block of seed 000 (LlmActionSchemaPromptService): an "Input data structure:" and
 * an "Output data structure:" section that walk each JSON Schema's fields, so the model knows
 * the shape of what it reads and writes. Properties keep the document's order.
 */

export type SchemaDirection = 'I' | 'O' | 'M';
export type SchemaCardinality = 'I' | 'L';

export interface PromptSchema {
  code: string;
  description: string | null;
  /** I input, O output, M read from memory (listed with the inputs). */
  direction: SchemaDirection;
  /** I a single item, L a list of items. */
  cardinality: SchemaCardinality;
  jsonSchema: Record<string, unknown>;
}

type Json = Record<string, unknown>;
const MAX_DEPTH = 8;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export function schemaBlock(schemas: readonly PromptSchema[]): string {
  const inputs = schemas.filter((s) => s.direction !== 'O');
  const outputs = schemas.filter((s) => s.direction === 'O');
  const sections: string[] = [];
  if (inputs.length > 0) sections.push(['Input data structure:', ...inputs.map(describeSchema)].join('\n'));
  if (outputs.length > 0) sections.push(['Output data structure:', ...outputs.map(describeSchema)].join('\n'));
  return sections.join('\n\n');
}

function describeSchema(schema: PromptSchema): string {
  const shape = schema.cardinality === 'L' ? 'a list of items' : 'a single item';
  const source = schema.direction === 'M' ? 'from memory, ' : '';
  const description = schema.description?.trim() || stringOf(schema.jsonSchema.description);
  const head = `${schema.code} (${source}${shape})${description ? `: ${description}` : ''}`;
  const root = resolve(schema.jsonSchema, schema.jsonSchema);
  const lines = isObject(root.properties)
    ? fieldLines(root, schema.jsonSchema, 0, [])
    : [`- value (${typeLabel(root, schema.jsonSchema)})`];
  return [head, ...lines].join('\n');
}

function fieldLines(node: Json, doc: Json, depth: number, seen: string[]): string[] {
  const properties = isObject(node.properties) ? node.properties : {};
  const required = Array.isArray(node.required) ? node.required : [];
  const indent = '  '.repeat(depth);
  const lines: string[] = [];
  for (const [name, raw] of Object.entries(properties)) {
    if (!isObject(raw)) continue;
    const ref = typeof raw.$ref === 'string' ? raw.$ref : null;
    const field = resolve(raw, doc);
    const flags = [typeLabel(field, doc), ...(required.includes(name) ? ['required'] : [])].join(', ');
    const description = stringOf(raw.description) || stringOf(field.description);
    lines.push(`${indent}- ${name} (${flags})${description ? `: ${description}` : ''}`);
    const child = isObject(field.properties) ? field : isObject(field.items) ? resolve(field.items, doc) : null;
    const cyclic = ref !== null && seen.includes(ref);
    if (child && isObject(child.properties) && depth + 1 < MAX_DEPTH && !cyclic) {
      lines.push(...fieldLines(child, doc, depth + 1, ref ? [...seen, ref] : seen));
    }
  }
  return lines;
}

function typeLabel(node: Json, doc: Json): string {
  if (Array.isArray(node.enum)) return `one of ${node.enum.map((v) => JSON.stringify(v)).join(', ')}`;
  if (node.const !== undefined) return `always ${JSON.stringify(node.const)}`;
  const variants = (node.anyOf ?? node.oneOf) as unknown;
  if (Array.isArray(variants)) {
    return variants.map((v) => (isObject(v) ? typeLabel(resolve(v, doc), doc) : 'any')).join(' or ');
  }
  const types = Array.isArray(node.type) ? node.type.map(String) : typeof node.type === 'string' ? [node.type] : [];
  const base = types.length > 0 ? types.join(' or ') : isObject(node.properties) ? 'object' : 'any';
  if (types.includes('array') && isObject(node.items)) {
    return `${base.replace('array', `array of ${typeLabel(resolve(node.items, doc), doc)}`)}`;
  }
  return typeof node.format === 'string' ? `${base}, ${node.format}` : base;
}

/** Follows a local `$ref` (`#/$defs/X`, `#/definitions/X`); anything else is described as is. */
function resolve(node: Json, doc: Json): Json {
  let current = node;
  for (let hops = 0; typeof current.$ref === 'string' && hops < MAX_DEPTH; hops++) {
    const target = current.$ref
      .replace(/^#\/?/, '')
      .split('/')
      .filter(Boolean)
      .reduce<unknown>((at, key) => (isObject(at) ? at[decodeURIComponent(key)] : undefined), doc);
    if (!isObject(target)) break;
    current = target;
  }
  return current;
}

const stringOf = (v: unknown): string => (typeof v === 'string' ? v.trim() : '');
