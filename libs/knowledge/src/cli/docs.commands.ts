import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { SingleBar } from 'cli-progress';
import { Option, type Command } from 'commander';
import type { DocumentRecord } from '../ingestion/document-registry';
import { MEDIA_TYPES, mediaTypeOf } from '../ingestion/extract';

interface ServerOptions {
  url: string;
  apiKey?: string;
}

interface ErrorReply {
  error?: { code?: string; message?: string; details?: { problems?: { path: string; message: string }[] } };
}

/** A failed call to Parley, with the server's error code and sentence. */
class ParleyError extends Error {}

async function call<T>(server: ServerOptions, method: string, path: string, body?: FormData): Promise<T> {
  const res = await fetch(new URL(path, server.url), {
    method,
    headers: server.apiKey ? { authorization: `Bearer ${server.apiKey}` } : {},
    body,
  });
  const text = await res.text();
  const parsed = text ? (JSON.parse(text) as unknown) : null;
  if (!res.ok) {
    const error = (parsed as ErrorReply | null)?.error;
    const problems = (error?.details?.problems ?? []).map((p) => `${p.path}: ${p.message}`);
    throw new ParleyError(
      `${error?.code ?? res.status}: ${error?.message ?? res.statusText}${problems.length ? ` (${problems.join('; ')})` : ''}`,
    );
  }
  return parsed as T;
}

/** The document id a file gets: its name, reduced to the characters an id may hold, so adding it again replaces it. */
export const documentIdOf = (file: string): string =>
  basename(file)
    .replace(/[^A-Za-z0-9._:@-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 200) || 'document';

const documentsPath = (collection: string) => `/api/v1/collections/${encodeURIComponent(collection)}/documents`;

/** Polls a document until its ingestion ends, or `deadline` passes. */
async function settled(
  server: ServerOptions,
  collection: string,
  id: string,
  deadline: number,
  onChange: (doc: DocumentRecord) => void,
): Promise<DocumentRecord> {
  for (;;) {
    const doc = await call<DocumentRecord>(server, 'GET', `${documentsPath(collection)}/${encodeURIComponent(id)}`);
    onChange(doc);
    if (doc.status === 'ready' || doc.status === 'failed') return doc;
    if (Date.now() > deadline) throw new ParleyError(`still ${doc.status} after the timeout`);
    await sleep(200);
  }
}

/** Where the running Parley is, and the key to call it with; commander reads both from the environment too. */
const serverOptions = (command: Command) =>
  command
    .addOption(new Option('--url <url>', 'where Parley serves HTTP').env('PARLEY_URL').default('http://127.0.0.1:3000'))
    .addOption(
      new Option('--api-key <key>', 'an API key; adding and removing need the admin role').env('PARLEY_API_KEY'),
    );

/**
 * `parley docs add <collection> <files…>`, `parley docs list <collection>` and `parley docs rm
 * <collection> <documentId>`: documents of a collection, through a running Parley's HTTP API.
 */
export function registerDocsCommands(program: Command): void {
  const docs = program.command('docs').description("Add, list and remove a document collection's documents");

  serverOptions(
    docs
      .command('add <collection> <files...>')
      .description(
        `Upload files (${Object.values(MEDIA_TYPES).flat().join(', ')}) into a collection and wait for their ingestion; each file's name is its document id, so adding it again replaces it`,
      )
      .option('--timeout <seconds>', 'how long to wait for the ingestions', '600'),
  ).action(async (collection: string, files: string[], options: ServerOptions & { timeout: string }) => {
    const deadline = Date.now() + Number(options.timeout) * 1000;
    const bar = new SingleBar({
      format: 'ingesting {bar} {value}/{total} files | {chunks} chunks | {file}',
      noTTYOutput: true,
      notTTYSchedule: 500,
      hideCursor: true,
    });
    const chunks = new Map<string, number>();
    const total = () => [...chunks.values()].reduce((a, b) => a + b, 0);
    bar.start(files.length, 0, { chunks: 0, file: '' });
    const failures: string[] = [];
    for (const file of files) {
      try {
        const bytes = await readFile(file);
        const form = new FormData();
        const id = documentIdOf(file);
        form.append('documentId', id);
        form.append('title', basename(file));
        let type: string = 'application/octet-stream';
        try {
          type = mediaTypeOf({ fileName: file });
        } catch {
          // The server names the file and the types it takes.
        }
        form.append('file', new Blob([bytes], { type }), basename(file));
        await call(options, 'POST', documentsPath(collection), form);
        bar.update({ file: basename(file) });
        const doc = await settled(options, collection, id, deadline, (d) => {
          chunks.set(file, d.chunkCount);
          bar.update({ chunks: total(), file: `${basename(file)} ${d.status}` });
        });
        if (doc.status === 'failed') failures.push(`${file}: ${doc.error ?? 'ingestion failed'}`);
      } catch (err) {
        failures.push(`${file}: ${(err as Error).message}`);
      }
      bar.increment({ chunks: total() });
    }
    bar.stop();
    const ok = files.length - failures.length;
    process.stdout.write(`${ok} of ${files.length} files ingested into ${collection}, ${total()} chunks\n`);
    for (const f of failures) process.stderr.write(`failed: ${f}\n`);
    if (failures.length > 0) process.exitCode = 1;
  });

  serverOptions(
    docs.command('list <collection>').description("A collection's documents with their status and counts"),
  ).action(async (collection: string, options: ServerOptions) => {
    const reply = await call<{ counts: { documents: number; chunks: number }; documents: DocumentRecord[] }>(
      options,
      'GET',
      documentsPath(collection),
    );
    for (const d of reply.documents)
      process.stdout.write(
        `${d.documentId}\t${d.status}\t${d.chunkCount} chunks\t${d.tokenCount} tokens\t${d.title}${d.error ? `\t${d.error}` : ''}\n`,
      );
    process.stdout.write(`${reply.counts.documents} documents, ${reply.counts.chunks} chunks\n`);
  });

  serverOptions(docs.command('rm <collection> <documentId>').description('Remove a document and its chunks')).action(
    async (collection: string, id: string, options: ServerOptions) => {
      await call(options, 'DELETE', `${documentsPath(collection)}/${encodeURIComponent(id)}`);
      process.stdout.write(`removed ${id} from ${collection}\n`);
    },
  );
}
