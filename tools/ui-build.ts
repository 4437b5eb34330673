import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..');
const SOURCES = [join(ROOT, 'ui'), join(ROOT, 'package-lock.json')];
const STAMP = join(ROOT, 'dist', 'ui', '.built');

/** The newest modification time of a file under `path`. */
function newest(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name))));
}

/**
 * Builds the dashboard into dist/ui with Vite when the build is missing or older than its
 * sources (ui/ and the lockfile): `npm start` and the tests call it, so a fresh clone serves
 * /ui without a separate step, and an unchanged tree costs one directory walk.
 */
export function ensureUiBuilt(log: (line: string) => void = () => undefined): 'built' | 'fresh' {
  if (existsSync(STAMP) && statSync(STAMP).mtimeMs >= Math.max(...SOURCES.map(newest))) return 'fresh';
  log('building the dashboard (ui/ → dist/ui)…');
  const vite = join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js');
  const run = spawnSync(process.execPath, [vite, 'build', '--config', join(ROOT, 'ui', 'vite.config.mts')], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  if (run.status !== 0) throw new Error(`The dashboard build failed (vite exited with ${run.status ?? run.signal}).`);
  writeFileSync(STAMP, `${new Date().toISOString()}\n`);
  return 'built';
}

if (require.main === module) {
  try {
    ensureUiBuilt((line) => process.stderr.write(`${line}\n`));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(1);
  }
}
