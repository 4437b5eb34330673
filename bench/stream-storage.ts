/**
 * What a streamed reply costs on disk: a reply of BENCH_STORAGE_CHARS characters (2,000 by
 * default), streamed by a simulator at 20 and at 100 tokens a second (one token ≈ one streamed
 * piece of at most four characters), is sent to a conversation of its own; then the turn's rows
 * in `es_events` are weighed with `pg_column_size` (the whole row: ids, hashes, metadata and data),
 * beside the text, and a ChunksReceived row is weighed column by column. Part of `npm run bench:turn`,
 * after its scenarios (BENCH_STORAGE=0 leaves it out; BENCH_ONLY=storage runs it alone).
 */
import { CatalogService } from '../libs/catalog/src';
import { startSimulator } from '../libs/testing/src';
import type { INestApplication } from '@nestjs/common';
import { Pool } from 'pg';

const RATES = [20, 100];

/** The columns of es_events, each weighed on its own in a ChunksReceived row. */
const COLUMNS = [
  'global_position',
  'transaction_id',
  'stream_id',
  'category',
  'revision',
  'event_id',
  'event_type',
  'schema_version',
  'data',
  'metadata',
  'created_at',
  'prev_hash',
  'hash',
];

export interface StreamStorageRow {
  tokensPerSecond: number;
  textBytes: number;
  chunkEvents: number;
  chunkBytes: number;
  turnEvents: number;
  turnBytes: number;
  /** Of one ChunksReceived row on average: its data and its metadata (the rest is the envelope's columns). */
  chunkDataBytes: number;
  chunkMetadataBytes: number;
  /** Of one ChunksReceived row on average: each column's `pg_column_size`, and the whole row's. */
  chunkColumns: Record<string, number>;
  /** The turn's rows by event type: how many, and their bytes in all. */
  byType: { type: string; n: number; bytes: number }[];
}

const VOCABULARY = (
  'the order was shipped on monday from our warehouse in leeds and the carrier expects to deliver it ' +
  'within three working days you can follow the parcel with the tracking number in your confirmation ' +
  'email if it does not arrive by friday please reply here and we will open a claim with the courier ' +
  'refunds are paid to the original card usually within five days of the return reaching us while ' +
  'exchanges ship as soon as the replacement is in stock our support team answers every message ' +
  'between eight and six on weekdays'
).split(' ');

/** A reply of `chars` characters of prose that does not repeat itself (a seeded walk over a vocabulary). */
function replyText(chars: number): string {
  let seed = 42;
  const words: string[] = [];
  let length = 0;
  while (length < chars) {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    const word = VOCABULARY[seed % VOCABULARY.length];
    words.push(words.length % 12 === 11 ? `${word}.` : word);
    length += word.length + 1;
  }
  return words.join(' ').slice(0, chars).trimEnd();
}

/** A provider on the paced simulator, and an action on it whose replies may be long. */
const pacedCatalog = (simulatorUrl: string) => ({
  providers: [
    {
      code: 'PACE',
      description: 'A simulator streaming at a set pace',
      providerType: 'openai-compatible',
      baseUrl: simulatorUrl,
      apiKey: 'sk-paced',
      instanceWide: true,
    },
  ],
  models: [
    {
      code: 'PACED-CH',
      description: 'Paced chat model',
      llmModelName: 'sim-chat',
      llmProvider: 'PACE',
      modelType: 'inference',
      llmInputTokenPrice: 0.000001,
      llmOutputTokenPrice: 0.000002,
      instanceWide: true,
    },
  ],
  configurations: [{ code: 'PACE', description: 'Long replies', temperature: 0, tokenSizeMax: 4096 }],
  actions: [
    {
      code: 'STREAM',
      description: 'A long streamed reply',
      llmModel: 'PACED-CH',
      llmConfiguration: 'PACE',
      llmMemoryStrategy: 'FULL',
      llmActionPrompt: 'Answer at length.',
    },
  ],
});

/**
 * Runs the two rates against `app` (listening, with the test catalog's agent HELPDESK and memory
 * strategy FULL; an action on a paced simulator is added) with the client key `key`, weighing rows
 * in `databaseUrl`.
 */
export async function measureStreamStorage(
  app: INestApplication,
  url: string,
  key: string,
  databaseUrl: string,
): Promise<StreamStorageRow[]> {
  const chars = Number(process.env.BENCH_STORAGE_CHARS ?? 2000);
  const text = replyText(chars);
  const sim = await startSimulator();
  const pool = new Pool({ connectionString: databaseUrl, max: 1 });
  const rows: StreamStorageRow[] = [];
  try {
    await app
      .get(CatalogService)
      .apply(pacedCatalog(sim.url), { dryRun: false })
      .catch((err: { message: string; details?: unknown }) => {
        throw new Error(`${err.message} ${JSON.stringify(err.details ?? {})}`);
      });
    const call = async (path: string, body: unknown) => {
      const res = await fetch(`${url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const json = (await res.json()) as { conversationId: string; reply?: string };
      if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
      return json;
    };
    for (const rate of RATES) {
      sim.script([{ reply: { text } }]);
      sim.setLatency(1000 / rate);
      const { conversationId } = await call('/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'STREAM' });
      const { reply } = await call(`/api/v1/conversations/${conversationId}/messages`, {
        content: 'Where is my order?',
        timeoutMs: 600_000,
      });
      if (reply !== text) throw new Error(`the reply came back as ${JSON.stringify(reply?.slice(0, 80))}…`);
      // The turn's events: everything after the user's message.
      const { rows: weighed } = await pool.query<{
        type: string;
        n: number;
        bytes: number;
        data: number;
        metadata: number;
      }>(
        `select event_type as type, count(*)::int as n, sum(pg_column_size(e.*))::int as bytes,
                avg(pg_column_size(data))::float8 as data, avg(pg_column_size(metadata))::float8 as metadata
         from es_events e
         where stream_id = $1 and revision >= (select min(revision) from es_events
                                               where stream_id = $1 and event_type = 'TurnStarted')
         group by event_type`,
        [`conversation-${conversationId}`],
      );
      const { rows: columns } = await pool.query<Record<string, number>>(
        `select ${COLUMNS.map((c) => `avg(pg_column_size(${c}))::float8 as ${c}`).join(', ')},
                avg(pg_column_size(e.*))::float8 as "whole row"
         from es_events e where stream_id = $1 and event_type = 'ChunksReceived'`,
        [`conversation-${conversationId}`],
      );
      const chunk = weighed.find((w) => w.type === 'ChunksReceived');
      rows.push({
        tokensPerSecond: rate,
        textBytes: Buffer.byteLength(text),
        chunkEvents: chunk?.n ?? 0,
        chunkBytes: chunk?.bytes ?? 0,
        turnEvents: weighed.reduce((n, w) => n + w.n, 0),
        turnBytes: weighed.reduce((n, w) => n + w.bytes, 0),
        chunkDataBytes: chunk?.data ?? 0,
        chunkMetadataBytes: chunk?.metadata ?? 0,
        chunkColumns: columns[0],
        byType: weighed.map(({ type, n, bytes }) => ({ type, n, bytes })).sort((a, b) => b.bytes - a.bytes),
      });
    }
  } finally {
    await pool.end();
    await sim.close();
  }
  return rows;
}

export function printStreamStorage(rows: StreamStorageRow[]): void {
  const head = [
    'streamed reply',
    'text bytes',
    'ChunksReceived events',
    'their bytes',
    'their bytes / text',
    "the turn's events",
    'their bytes',
    'turn bytes / text',
    'a chunk event: data / metadata / row bytes',
  ];
  process.stdout.write(`\n| ${head.join(' | ')} |\n|${head.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|\n`);
  for (const r of rows)
    process.stdout.write(
      `| ${r.tokensPerSecond} tokens/s | ${r.textBytes} | ${r.chunkEvents} | ${r.chunkBytes} | ${(r.chunkBytes / r.textBytes).toFixed(2)} × | ${r.turnEvents} | ${r.turnBytes} | ${(r.turnBytes / r.textBytes).toFixed(2)} × | ${r.chunkDataBytes.toFixed(0)} / ${r.chunkMetadataBytes.toFixed(0)} / ${r.chunkEvents ? (r.chunkBytes / r.chunkEvents).toFixed(0) : '–'} |\n`,
    );
}

/** The turn's rows by event type, at each rate: count and bytes. */
export function printTurnEvents(rows: StreamStorageRow[]): void {
  const types = [...new Set(rows.flatMap((r) => r.byType.map((t) => t.type)))];
  const head = ["the turn's rows by type", ...rows.map((r) => `events, bytes at ${r.tokensPerSecond} tokens/s`)];
  process.stdout.write(`\n| ${head.join(' | ')} |\n|---|${rows.map(() => '---:').join('|')}|\n`);
  for (const type of types)
    process.stdout.write(
      `| ${type} | ${rows
        .map((r) => r.byType.find((t) => t.type === type))
        .map((t) => (t ? `${t.n}, ${t.bytes}` : '–'))
        .join(' | ')} |\n`,
    );
}

/** A ChunksReceived row column by column: what each column weighs on average, at each rate. */
export function printChunkColumns(rows: StreamStorageRow[]): void {
  const head = ['a ChunksReceived row: column', ...rows.map((r) => `bytes at ${r.tokensPerSecond} tokens/s`)];
  process.stdout.write(`\n| ${head.join(' | ')} |\n|---|${rows.map(() => '---:').join('|')}|\n`);
  for (const column of [...COLUMNS, 'whole row'])
    process.stdout.write(
      `| ${column} | ${rows.map((r) => (r.chunkColumns[column] ?? Number.NaN).toFixed(1)).join(' | ')} |\n`,
    );
}
