import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import {
  configTableIn,
  CONFIG_TABLE_BEGIN,
  CONFIG_TABLE_END,
  normalizeTable,
  renderConfigTable,
  withConfigTable,
} from './config-table';
import { envSchema } from './config.schema';

const README = join(__dirname, '..', '..', '..', 'README.md');

describe('the configuration table of README.md', () => {
  it('is the one the config schema renders (else run `npm run docs:config`)', () => {
    const written = configTableIn(readFileSync(README, 'utf8'));
    if (written === null) throw new Error(`README.md lacks the markers ${CONFIG_TABLE_BEGIN} and ${CONFIG_TABLE_END}`);
    const rendered = renderConfigTable();
    if (normalizeTable(written) !== normalizeTable(rendered))
      throw new Error(
        "README.md's configuration table differs from libs/config/src/config.schema.ts: run `npm run docs:config` " +
          `and commit README.md.\n${firstDifference(normalizeTable(written), normalizeTable(rendered))}`,
      );
  });

  it('lists every variable of the schema with its default and description', () => {
    const table = renderConfigTable();
    for (const name of Object.keys(envSchema.shape)) expect(table).toContain(`| \`${name}\` |`);
    expect(table).toContain('| `PORT` | `3000` | HTTP port.');
    expect(table).toContain('| `DATABASE_URL` | unset |');
    expect(table).toContain('| `TOOL_HTTP_ALLOWED_HOSTS` | empty |');
    expect(table).toContain('| `PARLEY_AUTH_ENABLED` | `true` |');
  });

  it('refuses a variable without a description, naming it', () => {
    const schema = envSchema.extend({ NEW_SETTING: z.string().default('x') });
    expect(() => renderConfigTable(schema as unknown as typeof envSchema)).toThrow(
      'add a .describe(...) text to NEW_SETTING',
    );
  });

  it('escapes pipes, and replaces only what lies between the markers', () => {
    const schema = z.object({ A_B: z.string().default('1').describe('one | two') });
    const table = renderConfigTable(schema as unknown as typeof envSchema);
    expect(table).toContain('one \\| two');
    const readme = `# T\n\n${CONFIG_TABLE_BEGIN}\nold\n${CONFIG_TABLE_END}\n\nafter\n`;
    const next = withConfigTable(readme, table);
    expect(next).toBe(`# T\n\n${CONFIG_TABLE_BEGIN}\n\n${table}\n\n${CONFIG_TABLE_END}\n\nafter\n`);
    expect(configTableIn(next)).toBe(table);
    expect(withConfigTable(next, table)).toBe(next);
  });

  it('compares tables regardless of the padding a Markdown formatter adds', () => {
    const rendered = '| variable | default |\n|---|---|\n| `A` | `1` |';
    const padded = '| variable | default |\n| -------- | ------- |\n| `A`      | `1`     |';
    expect(normalizeTable(padded)).toBe(normalizeTable(rendered));
    expect(normalizeTable('| `A` | `2` |')).not.toBe(normalizeTable('| `A` | `1` |'));
  });
});

/** The first line where the two tables part, to say which variable changed. */
function firstDifference(written: string, rendered: string): string {
  const a = written.split('\n');
  const b = rendered.split('\n');
  for (let i = 0; i < Math.max(a.length, b.length); i++)
    if (a[i] !== b[i]) return `README.md has:    ${a[i] ?? '(nothing)'}\nthe schema gives: ${b[i] ?? '(nothing)'}`;
  return '';
}
