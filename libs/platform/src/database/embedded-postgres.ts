import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Client } from 'pg';

export interface EmbeddedPostgres {
  /** A normal postgres:// URL on a loopback port: the app cannot tell it from a server. */
  url: string;
  stop(): Promise<void>;
}

const URL_FILE = 'postgres.url';

/**
 * PostgreSQL for a laptop with nothing installed: PGlite (PostgreSQL compiled to WebAssembly)
 * with its data under `dataDir`, served over the wire protocol on a free loopback port. The
 * URL is written to `<dataDir>/postgres.url` so the CLI can reach the running server's
 * database instead of opening the same files twice. The packages are loaded only here.
 * `sharedBuffersMb`: its `shared_buffers` (default 128, PostgreSQL's).
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  options: { sharedBuffersMb?: number } = {},
): Promise<EmbeddedPostgres> {
  const dir = resolve(dataDir, 'pgdata');
  await mkdir(dir, { recursive: true });
  const [{ PGlite }, { PGLiteSocketServer }, { vector }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('@electric-sql/pglite-socket'),
    import('@electric-sql/pglite-pgvector'),
  ]);
  // pgvector is loaded so the knowledge lib's vector stores get an HNSW index, not an exact scan.
  // shared_buffers sized by EMBEDDED_SHARED_BUFFERS_MB: an HNSW index that outgrows it is read
  // back from PGlite's file system on every search.
  const db = await PGlite.create(dir, {
    extensions: { vector },
    postgresqlconf: [`shared_buffers = ${options.sharedBuffersMb ?? 128}MB`],
  });
  // The socket server runs one statement at a time and keeps a transaction's statements
  // together, so several connections are safe: the pg pool, TypeORM, the CLI and the session
  // lock connection of each subscription (projections, relay) share it.
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 32 });
  await server.start();
  const url = `postgres://postgres@${server.getServerConn()}/postgres`;
  const urlFile = join(resolve(dataDir), URL_FILE);
  await writeFile(urlFile, `${url}\n`, { mode: 0o600 });
  return {
    url,
    stop: async () => {
      await rm(urlFile, { force: true });
      await server.stop();
      await db.close();
    },
  };
}

/** The URL of an embedded database a running Parley serves from `dataDir`, if one answers. */
export async function runningEmbeddedPostgres(dataDir: string): Promise<string | null> {
  const url = (await readFile(join(resolve(dataDir), URL_FILE), 'utf8').catch(() => '')).trim();
  if (!url) return null;
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
  try {
    await client.connect();
    return url;
  } catch {
    return null;
  } finally {
    await client.end().catch(() => undefined);
  }
}
