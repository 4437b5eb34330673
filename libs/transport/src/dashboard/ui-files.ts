import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join, relative, resolve, sep } from 'node:path';

/** Where `npm run ui:build` writes the dashboard (gitignored build output). */
export const UI_BUILD_DIR = resolve(__dirname, '../../../../dist/ui');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.woff2': 'font/woff2',
};

export interface UiFile {
  body: Buffer;
  type: string;
  /** Vite names everything under assets/ by its content hash: it may be cached for ever. */
  immutable: boolean;
}

/**
 * The built dashboard, read once into memory: a handful of small files, so serving them needs no
 * static-file plugin. A path outside the build (`..`) or a file type not listed is not served.
 */
export class UiFiles {
  private files: Promise<Map<string, UiFile>> | null = null;

  constructor(private readonly dir = UI_BUILD_DIR) {}

  /** The file at `path` (relative to /ui/), or null when the build has none. */
  async get(path: string): Promise<UiFile | null> {
    return (await this.load()).get(path) ?? null;
  }

  /** index.html, or null when the dashboard was never built. */
  index(): Promise<UiFile | null> {
    return this.get('index.html');
  }

  private load(): Promise<Map<string, UiFile>> {
    this.files ??= this.read().catch(() => new Map<string, UiFile>());
    return this.files;
  }

  private async read(): Promise<Map<string, UiFile>> {
    const files = new Map<string, UiFile>();
    const walk = async (dir: string): Promise<void> => {
      for (const entry of await readdir(dir, { withFileTypes: true })) {
        const full = join(dir, entry.name);
        if (entry.isDirectory()) await walk(full);
        const type = TYPES[extname(entry.name)];
        if (!entry.isFile() || !type || (await stat(full)).size > 5_000_000) continue;
        const path = relative(this.dir, full).split(sep).join('/');
        files.set(path, { body: await readFile(full), type, immutable: path.startsWith('assets/') });
      }
    };
    await walk(this.dir);
    return files;
  }
}
