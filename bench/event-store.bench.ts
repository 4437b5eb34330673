/**
 * Event-store benchmark: the PostgreSQL adapter beside the same SQL issued through a bare
 * `pg` pool (the baseline), in one run, on a fresh database that is dropped at the end.
 * Run with `npm run bench:event-store`; results are recorded in bench/README.md.
 */
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { PostgresEventStore } from '../libs/event-store/src';
import { APPEND_SQL, READ_STREAM_FORWARDS_SQL, readPageSql } from '../libs/event-store/src/postgres/postgres-sql';
import { createPgPool } from '../libs/platform/src';
import { createScratchDatabase } from '../libs/testing/src';

const ADMIN_URL = process.env.PARLEY_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const ROUND_MS = Number(process.env.BENCH_ROUND_MS ?? 1000);
const DATA = { text: 'hello from the benchmark', n: 42, tags: ['a', 'b'] };

type Op = (writer: number, i: number) => Promise<unknown>;

/** Runs `op` from `writers` concurrent loops for `ms`; returns operations per second. */
async function throughput(writers: number, ms: number, op: Op): Promise<number> {
  const until = Date.now() + ms;
  let done = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      for (let i = 0; Date.now() < until; i++) {
        await op(w, i);
        done++;
      }
    }),
  );
  return done / (Number(process.hrtime.bigint() - started) / 1e9);
}

/**
 * Warms both sides up (JIT, prepared statements on every pooled connection), then measures in
 * A-B-B-A-A-B-B-A order so drift on a busy machine weighs on both alike.
 */
async function compare(writers: number, adapter: Op, baseline: Op): Promise<[number, number]> {
  await throughput(writers, ROUND_MS / 3, adapter);
  await throughput(writers, ROUND_MS / 3, baseline);
  let [a, b] = [0, 0];
  for (const side of ['a', 'b', 'b', 'a', 'a', 'b', 'b', 'a']) {
    if (side === 'a') a += await throughput(writers, ROUND_MS, adapter);
    else b += await throughput(writers, ROUND_MS, baseline);
  }
  return [a / 4, b / 4];
}

const baselineParams = (streamId: string, count: number): unknown[] => {
  const ids = Array.from({ length: count }, () => randomUUID());
  const data = JSON.stringify(DATA);
  return [
    streamId,
    streamId.slice(0, streamId.indexOf('-')),
    0,
    null,
    JSON.stringify(streamId),
    ids,
    ids.map(() => 'BenchEvent'),
    ids.map(() => '"BenchEvent"'),
    ids.map(() => 1),
    ids.map(() => data),
    ids.map(() => '{}'),
    null,
    null,
  ];
};

const events = (count: number) =>
  Array.from({ length: count }, () => ({ eventId: randomUUID(), type: 'BenchEvent', data: DATA }));

async function main(): Promise<void> {
  const db = await createScratchDatabase('bench', ADMIN_URL);
  let pool: Pool | undefined;
  try {
    pool = createPgPool({ url: db.url, max: 20, applicationName: 'parley-bench' });
    await run(pool);
  } finally {
    await pool?.end();
    await db.drop();
  }
}

async function run(pool: Pool): Promise<void> {
  const store = new PostgresEventStore(pool, { maxEventBytes: 1_048_576, pollMs: 200 });
  const rows: Array<[string, number, number]> = [];
  const stream = (kind: string, w: number, i: number) => `${kind}-w${w}-${i % 50}`;
  // First, on a new database, as a conversation's stream grows before statistics are gathered.
  const byLength = await appendsByStreamLength(store);

  for (const writers of [1, 4, 16]) {
    const [a, b] = await compare(
      writers,
      (w, i) => store.append(stream(`one${writers}a`, w, i), events(1)),
      (w, i) =>
        pool.query({
          name: 'bench_append',
          text: APPEND_SQL,
          values: baselineParams(stream(`one${writers}b`, w, i), 1),
        }),
    );
    rows.push([`single-event appends/s, ${writers} writer${writers > 1 ? 's' : ''}`, a, b]);
  }

  const [ba, bb] = await compare(
    4,
    (w, i) => store.append(stream('batcha', w, i), events(10)),
    (w, i) =>
      pool.query({ name: 'bench_append', text: APPEND_SQL, values: baselineParams(stream('batchb', w, i), 10) }),
  );
  rows.push(['events/s in 10-event batches, 4 writers', ba * 10, bb * 10]);

  const pageSql = readPageSql('none');
  const readFeed = async (adapter: boolean): Promise<number> => {
    let [after, count, tx, pos] = [null as string | null, 0, '0', 0n];
    const started = process.hrtime.bigint();
    for (;;) {
      if (adapter) {
        const page = await store.readPage(after, undefined, 1000);
        if (page.events.length === 0) break;
        count += page.events.length;
        after = page.events[page.events.length - 1].position;
      } else {
        const { rows: page } = await pool.query({ name: 'bench_page', text: pageSql, values: [tx, pos, 1000, null] });
        const events = page.filter((r) => r.global_position !== null);
        if (events.length === 0) break;
        count += events.length;
        [tx, pos] = [events[events.length - 1].tx, events[events.length - 1].global_position];
      }
    }
    return count / (Number(process.hrtime.bigint() - started) / 1e9);
  };
  const reads = [await readFeed(true), await readFeed(false), await readFeed(false), await readFeed(true)];
  rows.push(['catch-up read of the global feed, events/s', (reads[0] + reads[3]) / 2, (reads[1] + reads[2]) / 2]);

  const hundred = `read-${randomUUID()}`;
  await store.append(hundred, events(100));
  const [sa, sb] = await compare(
    4,
    () => store.readStream(hundred),
    () => pool.query({ name: 'bench_read_stream', text: READ_STREAM_FORWARDS_SQL, values: [hundred, 0n, null] }),
  );
  rows.push(['readStream of a 100-event stream, reads/s, 4 readers', sa, sb]);

  print(rows);
  printByLength(byLength);
}

/** Streams already this long before the appends to them are measured. */
const STREAM_LENGTHS = [0, 1_000, 10_000];

/**
 * Two-event appends (a turn's first) to one stream, 1 writer, by how many events the stream
 * already holds: the append's own cost must not grow with its stream (a conversation of many
 * turns). Measured round after round over the lengths, so drift weighs on all alike.
 */
async function appendsByStreamLength(store: PostgresEventStore): Promise<Array<[number, number]>> {
  const streams = STREAM_LENGTHS.map((length) => ({ length, id: `long${length}-${randomUUID()}`, rate: 0 }));
  // Many short conversations, then the long ones grown a turn at a time, as a server sees them.
  for (let i = 0; i < 300; i++) await store.append(`short-${randomUUID()}`, events(2));
  for (const s of streams) for (let done = 0; done < s.length; done += 2) await store.append(s.id, events(2));
  for (const s of streams) await throughput(1, ROUND_MS / 3, () => store.append(s.id, events(2)));
  const rounds = 4;
  for (let round = 0; round < rounds; round++)
    for (const s of round % 2 ? [...streams].reverse() : streams)
      s.rate += (await throughput(1, ROUND_MS / 2, () => store.append(s.id, events(2)))) / rounds;
  return streams.map((s) => [s.length, s.rate]);
}

function printByLength(rows: Array<[number, number]>): void {
  const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
  console.log('\n| two-event appends to one stream, 1 writer: events in it before | appends/s | ÷ a new stream |');
  console.log('|---:|---:|---:|');
  for (const [length, rate] of rows)
    console.log(`| ${fmt(length)} | ${fmt(rate)} | ${(rate / rows[0][1]).toFixed(2)} |`);
}

function print(rows: Array<[string, number, number]>): void {
  const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
  console.log(`\nEvent store benchmark — ${new Date().toISOString()} — ${ROUND_MS} ms rounds\n`);
  console.log('| scenario | adapter | bare pg (same SQL) | ratio |');
  console.log('|---|---:|---:|---:|');
  for (const [scenario, a, b] of rows) console.log(`| ${scenario} | ${fmt(a)} | ${fmt(b)} | ${(a / b).toFixed(2)} |`);
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
