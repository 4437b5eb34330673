import { envSchema } from './config.schema';

/** The HTML comments README.md keeps the configuration table between. */
export const CONFIG_TABLE_BEGIN = '<!-- config-table:begin (npm run docs:config writes what follows) -->';
export const CONFIG_TABLE_END = '<!-- config-table:end -->';

type Schema = typeof envSchema;

/** A default as the schema produces it when the variable is unset. */
function shownDefault(value: unknown): string {
  if (value === undefined) return 'unset';
  if (value === '') return 'empty';
  return `\`${String(value)}\``;
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');

/**
 * The Markdown table of every environment variable of `schema`: its name, its default (what
 * parsing an empty environment gives) and its `describe` text. Throws naming the variables
 * that have no description, so a new setting cannot reach the README undocumented.
 */
export function renderConfigTable(schema: Schema = envSchema): string {
  const defaults = schema.parse({}) as Record<string, unknown>;
  const names = Object.keys(schema.shape) as (keyof Schema['shape'])[];
  const undescribed = names.filter((name) => !schema.shape[name].description?.trim());
  if (undescribed.length > 0)
    throw new Error(`add a .describe(...) text to ${undescribed.join(', ')} in libs/config/src/config.schema.ts`);
  const rows = names.map(
    (name) => `| \`${name}\` | ${shownDefault(defaults[name])} | ${cell(schema.shape[name].description ?? '')} |`,
  );
  return ['| variable | default | what it does |', '|---|---|---|', ...rows].join('\n');
}

/** Where the markers are in `readme`: the end of the first and the start of the second, or null. */
function between(readme: string): { from: number; to: number } | null {
  const begin = readme.indexOf(CONFIG_TABLE_BEGIN);
  const end = readme.indexOf(CONFIG_TABLE_END);
  return begin < 0 || end < begin ? null : { from: begin + CONFIG_TABLE_BEGIN.length, to: end };
}

/** `readme` with the text between the two markers replaced by `table`; throws when a marker is missing. */
export function withConfigTable(readme: string, table: string): string {
  const at = between(readme);
  if (!at) throw new Error(`README.md needs the lines ${CONFIG_TABLE_BEGIN} and ${CONFIG_TABLE_END}, in that order`);
  return `${readme.slice(0, at.from)}\n\n${table}\n\n${readme.slice(at.to)}`;
}

/** The table README.md holds between the markers, as written (null when a marker is missing). */
export function configTableIn(readme: string): string | null {
  const at = between(readme);
  return at ? readme.slice(at.from, at.to).trim() : null;
}

/**
 * A table with its cells trimmed and its separator row reduced to `---`, so a table that a
 * Markdown formatter padded compares equal to the rendered one.
 */
export function normalizeTable(table: string): string {
  return table
    .trim()
    .split('\n')
    .map((row) =>
      row
        .trim()
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim())
        .map((cell) => (/^:?-+:?$/.test(cell) ? '---' : cell))
        .join(' | ')
        .trim(),
    )
    .join('\n');
}
