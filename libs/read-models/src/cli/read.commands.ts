import type { Command } from 'commander';
import { DEV_PRINCIPAL } from '@parley/auth';
import { loadConfig } from '@parley/config';
import { streamIdOf } from '@parley/domain';
import { chainOptionsOf, conversationKeysOf, PostgresEventStore, SealingEventStore } from '@parley/event-store';
import { createPgPool, resolveDatabase } from '@parley/platform';
import { PROJECTIONS, projectionNamed } from '../projections/projections';
import { rebuildProjections } from '../projections/rebuild';
import { AuditQueries, eventView } from '../queries/audit-queries';

/** The store as the service reads it: content opened with the conversations' keys, `[erased]` once erased. */
async function withStore<T>(fn: (store: SealingEventStore, raw: PostgresEventStore) => Promise<T>): Promise<T> {
  const database = await resolveDatabase(loadConfig(), (m) => process.stderr.write(`${m}\n`));
  const config = database.config;
  const pool = createPgPool({ url: config.database.url as string, max: 4, applicationName: 'parley-cli' });
  const store = new PostgresEventStore(pool, {
    maxEventBytes: config.eventStore.maxEventBytes,
    pollMs: config.eventStore.pollMs,
    chain: chainOptionsOf(config),
  });
  const sealing = new SealingEventStore(store, conversationKeysOf(config, pool), {
    encrypt: config.eventStore.contentEncryption,
  });
  try {
    return await fn(sealing, store);
  } finally {
    await store.close();
    await pool.end();
    await database.stop();
  }
}

const out = (line: string) => void process.stdout.write(`${line}\n`);
const PAGE = 1000;

/** Every event of the stream, page by page: `export` must not hold a long stream in memory. */
async function eachEvent(store: SealingEventStore, id: string, fn: (line: string) => void): Promise<void> {
  for (let from = 0n; ; from += BigInt(PAGE)) {
    const events = await store.readStream(streamIdOf(id), { fromRevision: from, maxCount: PAGE });
    for (const e of events) fn(JSON.stringify(eventView(e)));
    if (events.length < PAGE) return;
  }
}

/**
 * `parley events|state|verify|export <conversationId>` (auditors, straight from the event store,
 * as the operator who holds DATABASE_URL) and `parley projections rebuild [name]`.
 */
export function registerReadCommands(program: Command): void {
  program
    .command('events <conversationId>')
    .description('print the stream of a conversation, one JSON event per line')
    .option('--from <revision>', 'first revision', '0')
    .option('--limit <n>', 'how many events', '1000')
    .action((id: string, opts: { from: string; limit: string }) =>
      withStore(async (store) => {
        const events = await store.readStream(streamIdOf(id), {
          fromRevision: BigInt(opts.from),
          maxCount: Number(opts.limit),
        });
        for (const e of events) out(JSON.stringify(eventView(e)));
      }),
    );
  program
    .command('state <conversationId>')
    .description('print the state folded from the stream, at a revision or at its end')
    .option('--at <revision>', 'fold the events up to this revision')
    .action((id: string, opts: { at?: string }) =>
      withStore(async (store) => {
        const q = { conversationId: id, ...(opts.at === undefined ? {} : { atRevision: Number(opts.at) }) };
        out(JSON.stringify(await new AuditQueries(store).getState(DEV_PRINCIPAL, q), null, 2));
      }),
    );
  program
    .command('verify <conversationId>')
    .description('re-check the hash chain; exits 1 and names the first bad revision when an event was changed')
    .action((id: string) =>
      withStore(async (store) => {
        const result = await store.verifyStream(streamIdOf(id));
        if (result.ok) return out(`ok: ${result.checked} events verified`);
        out(`TAMPERED: first bad revision ${result.firstBadRevision} (${result.reason ?? 'hash mismatch'})`);
        process.exitCode = 1;
      }),
    );
  program
    .command('export <conversationId>')
    .description('export the stream as JSONL (one event per line, metadata and hashes included)')
    .action((id: string) => withStore((store) => eachEvent(store, id, out)));
  program
    .command('projections')
    .description('read models')
    .command('rebuild [name]')
    .description(
      `rebuild read models from position zero while the service runs (${PROJECTIONS.map((p) => p.name).join(', ')})`,
    )
    .action((name: string | undefined) =>
      withStore(async (_store, raw) => {
        const chosen = name === undefined ? PROJECTIONS : [projectionNamed(name)];
        if (chosen.some((p) => p === undefined))
          throw new Error(`unknown projection '${name}'; expected one of ${PROJECTIONS.map((p) => p.name).join(', ')}`);
        const result = await rebuildProjections(raw.pool, raw, chosen as typeof PROJECTIONS);
        out(`rebuilt ${chosen.map((p) => p?.name).join(', ')}: ${result.events} events in ${Math.round(result.ms)} ms`);
      }),
    );
}
