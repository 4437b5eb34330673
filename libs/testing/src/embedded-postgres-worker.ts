import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';

export interface EmbeddedPostgresForTest {
  /** postgres:// URL of the PGlite socket server, as `npm start` with no DATABASE_URL serves it. */
  url: string;
  stop(): Promise<void>;
}

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
require(workerData.register);
const { startEmbeddedPostgres } = require(workerData.module);
startEmbeddedPostgres(workerData.dir, workerData.options).then(
  (pg) => {
    parentPort.postMessage({ url: pg.url });
    parentPort.once('message', () => pg.stop().then(() => parentPort.postMessage({ stopped: true })));
  },
  (err) => parentPort.postMessage({ error: String(err && err.stack || err) }),
);
`;

/**
 * The embedded PostgreSQL of `npm start` (PGlite with pgvector, over the wire protocol) in a
 * worker thread of the test process: PGlite loads Node's modules with dynamic `import()`, which
 * Jest's module sandbox refuses, and a worker runs outside it.
 */
export async function startEmbeddedPostgresForTest(
  options: { sharedBuffersMb?: number } = {},
): Promise<EmbeddedPostgresForTest> {
  const dir = await mkdtemp(join(tmpdir(), 'parley-pglite-'));
  const root = join(__dirname, '..', '..', '..');
  const worker = new Worker(WORKER, {
    eval: true,
    workerData: {
      dir,
      options,
      register: join(root, 'tools', 'register.js'),
      module: join(root, 'libs', 'platform', 'src', 'database', 'embedded-postgres.ts'),
    },
  });
  const next = () =>
    new Promise<{ url?: string; error?: string; stopped?: boolean }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
  const started = await next();
  if (started.error || !started.url) {
    await worker.terminate();
    throw new Error(`the embedded PostgreSQL did not start: ${started.error}`);
  }
  return {
    url: started.url,
    stop: async () => {
      const stopped = next();
      worker.postMessage('stop');
      await stopped;
      await worker.terminate();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
