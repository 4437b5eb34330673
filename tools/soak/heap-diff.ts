/**
 * Compares two V8 heap snapshots (.heapsnapshot, as `--heapsnapshot-signal` writes them): the
 * objects by constructor (their count and own size) that grew most from the first to the second.
 * Usage: node -r ./tools/register.js tools/soak/heap-diff.ts <before> <after> [rows]
 */
import { readFileSync } from 'node:fs';

interface Totals {
  count: number;
  bytes: number;
}

export function heapTotals(path: string): Map<string, Totals> {
  const snapshot = JSON.parse(readFileSync(path, 'utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  const fields = snapshot.snapshot.meta.node_fields;
  const types = snapshot.snapshot.meta.node_types[0];
  const width = fields.length;
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f));
  const totals = new Map<string, Totals>();
  const { nodes, strings } = snapshot;
  for (let i = 0; i < nodes.length; i += width) {
    const type = types[nodes[i + typeAt]];
    const name = type === 'object' || type === 'closure' ? strings[nodes[i + nameAt]] : `(${type})`;
    const key = type === 'closure' ? `closure ${name}` : name;
    const t = totals.get(key) ?? { count: 0, bytes: 0 };
    t.count++;
    t.bytes += nodes[i + sizeAt];
    totals.set(key, t);
  }
  return totals;
}

export interface HeapGrowth {
  name: string;
  /** Objects and their own bytes added from the first snapshot to the second. */
  count: number;
  bytes: number;
  /** Objects in the second. */
  total: number;
}

/** The constructors of `after` by the own bytes they added since `before`, most first. */
export function heapGrowth(before: Map<string, Totals>, after: Map<string, Totals>): HeapGrowth[] {
  const diff = [...after].map(([name, t]) => {
    const was = before.get(name) ?? { count: 0, bytes: 0 };
    return { name, count: t.count - was.count, bytes: t.bytes - was.bytes, total: t.count };
  });
  return diff.sort((x, y) => y.bytes - x.bytes);
}

export const heapBytes = (m: Map<string, Totals>) => [...m.values()].reduce((s, t) => s + t.bytes, 0);

function main(): void {
  const [before, after, rows = '40'] = process.argv.slice(2);
  const a = heapTotals(before);
  const b = heapTotals(after);
  process.stdout.write(
    `heap: ${(heapBytes(a) / 1048576).toFixed(1)} MB -> ${(heapBytes(b) / 1048576).toFixed(1)} MB\n`,
  );
  process.stdout.write('| constructor | objects added | bytes added | objects now |\n|---|---:|---:|---:|\n');
  for (const d of heapGrowth(a, b).slice(0, Number(rows)))
    process.stdout.write(`| ${d.name.slice(0, 60)} | ${d.count} | ${d.bytes} | ${d.total} |\n`);
}

if (require.main === module) main();
