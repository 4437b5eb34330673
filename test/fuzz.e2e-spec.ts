import { COMMANDS, type Operation } from '@parley/conversation';
import { ERROR_STATUS } from '@parley/core';
import { EVENT_STORE, type EventStore } from '@parley/event-store';
import fc from 'fast-check';
import { connect, headers, type NatsConnection } from 'nats';
import { QUERIES } from '../libs/transport/src/operations/query-table';
import { ADMIN_KEY, startParley, type ParleyUnderTest } from './support/parley-app';

/**
 * Property-based fuzzing of every command and query, derived from the operation tables as the
 * front doors are, over HTTP, NATS and JSON-RPC on both: malformed JSON, wrong types, huge strings, `__proto__` and
 * `constructor` keys, NUL, lone surrogates, deep nesting. Whatever comes in, Parley answers below
 * 500 (every backing service is up), a refused input appends nothing to the event store, and
 * memory stays bounded. `npm test` runs a fixed seed and a few runs; `npm run fuzz` runs long
 * (FUZZ_RUNS, FUZZ_SEED=random or a number; FUZZ_SEED and FUZZ_PATH of a report replay its input).
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 150);
const SEED = process.env.FUZZ_SEED === 'random' ? Date.now() % 2 ** 31 : Number(process.env.FUZZ_SEED ?? 20_261_125);
const OPERATIONS: readonly Operation[] = [...COMMANDS, ...QUERIES];

/** Inputs the fuzzer found answered with 500, run first on every run: operation, door, payload (CID: the conversation). */
const REGRESSIONS: [string, 'http' | 'nats', string][] = [
  // Twenty thousand levels of nesting overflowed the stack of the unstorable-text check: now 400.
  [
    'removeToolRepository',
    'nats',
    `{"conversationId":"CID","repositoryId":{},"commandId":${'['.repeat(20_000)}1${']'.repeat(20_000)}}`,
  ],
  [
    'startConversation',
    'http',
    `{"agentCode":"HELPDESK","actionCode":"CHAT","metadata":${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}}`,
  ],
  // A NUL in a catalog code reached PostgreSQL (`invalid byte sequence`): now 400 VALIDATION_FAILED.
  ['findToolByCode', 'nats', '{"code":"a\\u0000b"}'],
  ['findToolByCode', 'http', '{"code":"a\\u0000b"}'],
  ['findMcpClientByName', 'nats', '{"name":"\\u0000"}'],
  ['listConversations', 'nats', '{"agentCode":"HELP\\u0000DESK"}'],
];

/** A JSON text: ordinary values go through JSON.stringify, the rest is written as is. */
type Json = string;

const NASTY_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\ufeff',
  '__proto__',
  'constructor',
  'toString',
  'prototype',
  '../../etc/passwd',
  '%00',
  '%',
  'null',
  '{}',
  'HELPDESK',
  'CHAT',
  '00000000-0000-5000-8000-000000000000',
  '01a20000-0000-7000-8000-000000000000',
  'c'.repeat(300),
];
const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf'];

/** Stands in a payload for bytes that are not UTF-8 at all (a lone continuation byte, 0xff). */
const INVALID_UTF8 = '\u0001not-utf8\u0001';
const bytesOf = (json: Json): Buffer =>
  Buffer.concat(
    json
      .split(INVALID_UTF8)
      .flatMap((part, i) => (i === 0 ? [Buffer.from(part)] : [Buffer.from([0x80, 0xff]), Buffer.from(part)])),
  );

const deep = (depth: number, array: boolean): Json =>
  array ? `${'['.repeat(depth)}1${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

function arbitraries(conversationId: () => string) {
  const text = fc.oneof(
    { weight: 3, arbitrary: fc.string() },
    { weight: 2, arbitrary: fc.string({ unit: 'binary' }) },
    { weight: 3, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
    { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 400_000 }).map((n) => 'x'.repeat(n)) },
    { weight: 3, arbitrary: fc.constant(null).map(() => conversationId()) },
  );
  const key = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom(...PROTO_KEYS));
  const value: fc.Arbitrary<Json> = fc.letrec<{ value: Json }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      text.map((s) => JSON.stringify(s)),
      fc.oneof(fc.integer(), fc.double(), fc.boolean(), fc.constant(null)).map((v) => JSON.stringify(v)),
      fc.constantFrom('1e999', '-0', '12345678901234567890123', '1.0e-400'),
      fc.array(tie('value'), { maxLength: 4 }).map((items) => `[${items.join(',')}]`),
      fc
        .array(fc.tuple(key, tie('value')), { maxLength: 4 })
        .map((entries) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
      fc.tuple(fc.integer({ min: 100, max: 20_000 }), fc.boolean()).map(([depth, array]) => deep(depth, array)),
    ),
  })).value;

  // Valid values of the common fields, so that many inputs pass the schema but one field and reach the handlers.
  const VALID: Record<string, fc.Arbitrary<Json>> = {
    conversationId: fc.constant(null).map(() => JSON.stringify(conversationId())),
    agentCode: fc.constant('"HELPDESK"'),
    actionCode: fc.constant('"CHAT"'),
    code: fc.constantFrom('"HELPDESK"', '"CHAT"'),
    content: fc.constantFrom('"hi"', '"\\u0000"', '"\\ud800"'),
  };
  const field = (name: string) => (VALID[name] ? fc.oneof(VALID[name], value) : value);

  /** An operation's payload: its own fields (some missing, some extra), or anything at all. */
  const payload = (op: Operation): fc.Arbitrary<Json> => {
    const fields = Object.keys(op.input.shape).concat(op.kind === 'command' ? ['commandId'] : []);
    const object = fc
      .tuple(
        fc.tuple(...fields.map((f) => fc.option(field(f), { freq: 4 }).map((v) => [f, v] as const))),
        fc.array(fc.tuple(key, value), { maxLength: 3 }),
      )
      .map(([own, extra]) => {
        const entries = [...own.filter(([, v]) => v !== null), ...extra] as [string, Json][];
        return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`;
      });
    const malformed = fc.oneof(
      fc.string(),
      fc.constantFrom('{', '{"a":', '{"a":1,}', "{'a':1}", '[1,2', 'undefined', 'NaN', '{"a":1}{"b":2}', '\u0000{}'),
      fc.constantFrom(`{"content":"${INVALID_UTF8}"}`, `${INVALID_UTF8}{}`, `{"${INVALID_UTF8}":1}`),
      object.map((json) => json.slice(0, -1)),
    );
    return fc.oneof(
      { weight: 6, arbitrary: object },
      { weight: 2, arbitrary: value },
      { weight: 2, arbitrary: malformed },
    );
  };

  return { payload };
}

/** JSON.stringify, except for values nested too deep for this stack (the raw text went to the body instead). */
function stringifyOrNot(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch {
    return '[too deep]';
  }
}

/** A failure report that names the operation and the door, with the payload cut to a readable length. */
function report<T extends { op: Operation; door: string; as: string; json: Json }>(details: fc.RunDetails<[T]>): void {
  if (!details.failed || !details.counterexample) return;
  const [{ op, door, as, json }] = details.counterexample;
  const shown = json.length > 400 ? `${json.slice(0, 400)}… (${json.length} characters)` : json;
  throw new Error(
    `${op.name} over ${door} as ${as} failed (seed ${details.seed}, path ${details.counterexamplePath}): ${shown}\n${String(details.errorInstance)} ${String((details.errorInstance as Error | undefined)?.cause ?? '')}`,
  );
}

describe('fuzzing every command and query over HTTP, NATS and JSON-RPC', () => {
  let parley: ParleyUnderTest;
  let store: EventStore;
  let nc: NatsConnection;
  let conversationId: string;
  let clientKey: string;

  /** Who sends: the admin, a client that owns nothing, nobody, or an unsigned (alg none) JWT. */
  type Caller = 'admin' | 'client' | 'none' | 'garbage';
  const authorization = (as: Caller): Record<string, string> =>
    as === 'none'
      ? {}
      : {
          authorization: `Bearer ${as === 'admin' ? ADMIN_KEY : as === 'client' ? clientKey : 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJhZG1pbiJ9.'}`,
        };

  beforeAll(async () => {
    parley = await startParley('fuzz', {
      RATE_LIMIT_PER_MINUTE: '10000000',
      RATE_LIMIT_PER_IP_PER_MINUTE: '10000000',
      MAX_RUNNING_TURNS_PER_SUBJECT: '1000',
    });
    store = parley.app.get(EVENT_STORE);
    nc = await connect({ servers: parley.config.nats.url! });
    const started = await parley.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode: 'CHAT' });
    conversationId = started.body.conversationId as string;
    const key = await parley.call('POST', '/api/v1/keys', { subject: 'fuzz-client', roles: ['client'] });
    clientKey = key.body.key as string;
  }, 60_000);
  afterAll(async () => {
    await nc?.close();
    await parley?.close();
  });

  /** The event store's head once nothing has been appended for a moment (a turn accepted earlier may still run). */
  async function settledHead(): Promise<string | null> {
    let head = await store.headPosition();
    for (const deadline = Date.now() + 5_000; Date.now() < deadline;) {
      await new Promise((r) => setTimeout(r, 100));
      const now = await store.headPosition();
      if (now === head) return head;
      head = now;
    }
    return head;
  }

  /** Over HTTP: the path parameters from the payload when it has them as strings, the rest as body or query. */
  async function overHttp(op: Operation, json: Json, as: Caller): Promise<{ status: number; code?: string }> {
    const route = op.http!;
    let fields: Record<string, unknown> = {};
    try {
      const parsed: unknown = JSON.parse(json);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) fields = parsed as Record<string, unknown>;
    } catch {
      // Malformed: sent as it is, the path gets placeholders.
    }
    const rest = { ...fields };
    const path = route.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
      const given = Object.hasOwn(fields, name) ? fields[name] : undefined;
      delete rest[name];
      try {
        return encodeURIComponent(typeof given === 'string' && given !== '' ? given : conversationId);
      } catch {
        return 'lone%ED%A0%80surrogate';
      }
    });
    const carriesBody = route.method === 'post' || route.method === 'put';
    // A command's commandId goes where HTTP carries it: the Idempotency-Key header.
    const key = op.kind === 'command' && typeof fields.commandId === 'string' ? fields.commandId : undefined;
    let body: Json | Buffer = json;
    if (key !== undefined) {
      delete rest.commandId;
      body = stringifyOrNot(rest);
    }
    const idempotency = key !== undefined && /^[\x20-\x7e]*$/.test(key) ? { 'idempotency-key': key } : {};
    let url = parley.url + path;
    if (!carriesBody) {
      const query = new URLSearchParams();
      for (const [k, v] of Object.entries(rest)) query.append(k, typeof v === 'string' ? v : stringifyOrNot(v));
      if ([...query].length > 0) url += `?${query}`;
    }
    const send = () =>
      fetch(url, {
        method: route.method.toUpperCase(),
        headers: {
          ...authorization(as),
          ...(carriesBody ? { 'content-type': 'application/json' } : {}),
          ...idempotency,
        },
        body: carriesBody ? bytesOf(body) : undefined,
      });
    // A keep-alive socket the server closed after refusing an earlier body (413) fails the next
    // request before it is sent: that one request is sent again, on a new socket.
    const res = await send().catch((err: Error & { cause?: { code?: string } }) => {
      if (err.cause?.code !== 'UND_ERR_SOCKET' && err.cause?.code !== 'ECONNRESET') throw err;
      return send();
    });
    const text = await res.text();
    let code: string | undefined;
    try {
      code = (JSON.parse(text) as { error?: { code?: string } }).error?.code;
    } catch {
      code = undefined;
    }
    return { status: res.status, code };
  }

  /** Over NATS: the payload as the message, the credential in the header; a refusal's status is its code's. */
  async function overNats(op: Operation, json: Json, as: Caller): Promise<{ status: number; code?: string }> {
    const h = headers();
    for (const [name, credential] of Object.entries(authorization(as))) h.set(name, credential);
    const subject = `${parley.config.prefix}.${op.kind === 'command' ? 'cmd' : 'qry'}.${op.name}`;
    const data = bytesOf(json);
    if (data.length > nc.info!.max_payload) return { status: 413, code: 'PAYLOAD_TOO_LARGE' };
    const msg = await nc.request(subject, data, { headers: h, timeout: 20_000 });
    const reply = JSON.parse(msg.string()) as { error?: { code: keyof typeof ERROR_STATUS } };
    return reply.error ? { status: ERROR_STATUS[reply.error.code] ?? 500, code: reply.error.code } : { status: 200 };
  }

  /**
   * Over JSON-RPC (`POST /rpc`, or NATS `<prefix>.rpc`): the payload as the call's params; a
   * refusal's status is its HTTP status when the request is refused whole, else its data.code's.
   */
  async function overJsonRpc(
    op: Operation,
    json: Json,
    as: Caller,
    over: 'http' | 'nats',
  ): Promise<{ status: number; code?: string }> {
    const message = bytesOf(`{"jsonrpc":"2.0","id":1,"method":${JSON.stringify(op.name)},"params":${json}}`);
    let status = 200;
    let text: string;
    if (over === 'http') {
      const send = () =>
        fetch(`${parley.url}/rpc`, {
          method: 'POST',
          headers: { ...authorization(as), 'content-type': 'application/json' },
          body: message,
        });
      const res = await send().catch((err: Error & { cause?: { code?: string } }) => {
        if (err.cause?.code !== 'UND_ERR_SOCKET' && err.cause?.code !== 'ECONNRESET') throw err;
        return send();
      });
      status = res.status;
      text = await res.text();
    } else {
      if (message.length > nc.info!.max_payload) return { status: 413, code: 'PAYLOAD_TOO_LARGE' };
      const h = headers();
      for (const [name, credential] of Object.entries(authorization(as))) h.set(name, credential);
      text = (await nc.request(`${parley.config.prefix}.rpc`, message, { headers: h, timeout: 20_000 })).string();
    }
    const reply = JSON.parse(text) as { error?: { data: { code: keyof typeof ERROR_STATUS } } };
    const code = reply.error?.data.code;
    if (status !== 200) return { status, code };
    return code ? { status: ERROR_STATUS[code] ?? 500, code } : { status: 200 };
  }

  it(
    'answers every input below 500 and appends nothing for a refused one',
    async () => {
      const { payload } = arbitraries(() => conversationId);
      const sample = fc.constantFrom(...OPERATIONS).chain((op) =>
        fc.record({
          op: fc.constant(op),
          door: fc.constantFrom('http', 'nats', 'json-rpc http', 'json-rpc nats'),
          as: fc.constantFrom<Caller>('admin', 'admin', 'admin', 'client', 'none', 'garbage'),
          json: payload(op),
        }),
      );
      const rssBefore = process.memoryUsage().rss;
      let head = await settledHead();
      await fc.assert(
        fc.asyncProperty(sample, async ({ op, door, as, json }) => {
          const answer =
            door === 'json-rpc http' || door === 'json-rpc nats'
              ? await overJsonRpc(op, json, as, door === 'json-rpc http' ? 'http' : 'nats')
              : door === 'http' && op.http
                ? await overHttp(op, json, as)
                : await overNats(op, json, as);
          const where = `${op.name} over ${door} as ${as}: ${answer.status} ${answer.code ?? ''}`;
          expect({ where, serverError: answer.status >= 500 }).toEqual({ where, serverError: false });
          if (answer.status >= 400) expect({ where, head: await store.headPosition() }).toEqual({ where, head });
          else head = await settledHead();
        }),
        {
          seed: SEED,
          path: process.env.FUZZ_PATH,
          numRuns: RUNS,
          endOnFailure: true,
          reporter: report,
          examples: REGRESSIONS.map(([name, door, json]): [{ op: Operation; door: string; as: Caller; json: Json }] => [
            {
              op: OPERATIONS.find((op) => op.name === name)!,
              door,
              as: 'admin',
              json: json.replace('CID', conversationId),
            },
          ]),
        },
      );
      expect(process.memoryUsage().rss - rssBefore).toBeLessThan(768 * 1024 * 1024);
    },
    60_000 + RUNS * 1_000,
  );
});
