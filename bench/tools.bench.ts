/**
 * What Parley adds to a tool call. The same cheap call, one at a time, through Parley and through
 * a bare client, in alternating rounds so both see the same machine:
 *
 * - MCP: server-everything's `echo` through Parley's `McpPool.callTool` and through the whole
 *   path a turn takes (`ToolExecutor.execute`: arguments validated against the tool's schema,
 *   timeout and abort signals, `McpToolExecutor`, the pool, the output limit), against the bare
 *   `@modelcontextprotocol/sdk` `Client.callTool`. Over streamable HTTP all three reach the same
 *   server-everything process (`streamableHttp` mode on a free loopback port), each with its own
 *   session. Over stdio a client owns the server it spawns, so the bare client and Parley's pool
 *   each spawn the same command (`node server-everything/dist/index.js stdio`): two processes,
 *   alike. The pool's and the executor's calls share the pool's one.
 * - HTTP tool: `ToolExecutor.execute` of an `http` tool (POST of the arguments as JSON, through
 *   `HttpToolExecutor` and its guarded fetch, the allow-list naming the server's 127.0.0.1:port)
 *   against a bare `fetch` of the same request, `res.json()` read; the server is a loopback
 *   echo in a process of its own (bench/echo-server-process.ts).
 *
 * One scenario at a time; within it the order of the clients is reversed every other round. Each
 * executor call gets an abort signal of its own, as each turn has. The catalog behind the executors is the in-memory one of libs/tools' tests, so a catalog
 * lookup costs nothing here. Every stdio spawn of server-everything in this process is counted
 * (the SDK spawns through `child_process.spawn`): the pool must start one, whatever the number
 * of calls. The run fails if it started another, or if a server process outlives the end.
 *
 * p50 and p95 are over every measured call of a client, calls/s over its rounds' wall time; CPU
 * is this process's per call (`process.cpuUsage()`), the median of the rounds: the servers' CPU
 * is in neither column, and the difference is what Parley's own code costs whatever the load.
 * Sizes: BENCH_ROUNDS (10), BENCH_CALLS per client per round (600), BENCH_WARMUP calls per client
 * first (300). Run with `npm run bench:tools`; results are recorded in bench/README.md.
 */
import childProcess, { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ToolDefinition } from '../libs/core/src';
import { McpPool } from '../libs/mcp/src';
import { EVERYTHING_BIN, everythingChildren, freePort, killProcess, startEverythingHttp } from '../libs/testing/src';
import { ToolExecutor } from '../libs/tools/src';
import { httpToolConfigSchema, type HttpToolConfig } from '../libs/tools/src/tool-config';
import { callContext, toolDef, toolsTestApp } from '../libs/tools/src/testing/tools-test-app';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const CALLS = Number(process.env.BENCH_CALLS ?? 600);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 300);

const MESSAGE = 'bench';
const ECHOED = `Echo: ${MESSAGE}`;

const EVERYTHING_STDIO = [EVERYTHING_BIN, 'stdio'];

/** server-everything processes spawned over stdio from this process, by whichever client. */
let stdioSpawns = 0;
const spawn = childProcess.spawn as (...args: unknown[]) => ChildProcess;
(childProcess as { spawn: unknown }).spawn = (...args: unknown[]) => {
  const argv = args[1];
  if (Array.isArray(argv) && argv.includes(EVERYTHING_BIN) && argv.at(-1) === 'stdio') stdioSpawns++;
  return spawn(...args);
};

interface Contender {
  scenario: 'stdio' | 'streamable HTTP' | 'HTTP tool';
  client: string;
  call(): Promise<void>;
  latencies: number[];
  wallMs: number;
  /** This process's CPU per call in each round, ms. */
  cpuMs: number[];
}

const contender = (scenario: Contender['scenario'], client: string, call: () => Promise<void>): Contender => ({
  scenario,
  client,
  call,
  latencies: [],
  wallMs: 0,
  cpuMs: [],
});

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`${what} did not answer as expected`);
}

function startEchoServer(): Promise<{ url: string; child: ChildProcess }> {
  const child = fork(join(__dirname, 'echo-server-process.ts'), [], { execArgv: ['-r', './tools/register.js'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the echo server exited (${code})`)));
    child.once('message', (m: { port: number }) => resolve({ url: `http://127.0.0.1:${m.port}/echo`, child }));
  });
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
}

/** A difference in ms, signed; a rounded -0 reads +0.000. */
const signed = (ms: number) => {
  const rounded = Number(ms.toFixed(3));
  return `${rounded >= 0 ? '+' : ''}${rounded.toFixed(3)}`;
};

function table(contenders: Contender[]): string {
  const rows = contenders.map((c) => {
    const sorted = [...c.latencies].sort((a, b) => a - b);
    const cpu = quantile(
      [...c.cpuMs].sort((a, b) => a - b),
      0.5,
    );
    const rate = (c.latencies.length / c.wallMs) * 1000;
    return { c, p50: quantile(sorted, 0.5), p95: quantile(sorted, 0.95), rate, cpu };
  });
  const lines = [
    '| scenario | client | calls | p50 ms | p95 ms | calls/s | p50 vs bare | p95 vs bare | calls/s vs bare | added p50 ms | CPU ms/call | added CPU ms/call |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const row of rows) {
    const bare = rows.find((r) => r.c.scenario === row.c.scenario)!;
    const isBare = bare === row;
    const ratio = (a: number, b: number) => (isBare ? '1.00' : (a / b).toFixed(2));
    lines.push(
      `| ${row.c.scenario} | ${row.c.client} | ${row.c.latencies.length.toLocaleString('en-US')} | ` +
        `${row.p50.toFixed(3)} | ${row.p95.toFixed(3)} | ${Math.round(row.rate).toLocaleString('en-US')} | ` +
        `${ratio(row.p50, bare.p50)} | ${ratio(row.p95, bare.p95)} | ${ratio(row.rate, bare.rate)} | ` +
        `${isBare ? '—' : signed(row.p50 - bare.p50)} | ${row.cpu.toFixed(3)} | ${isBare ? '—' : signed(row.cpu - bare.cpu)} |`,
    );
  }
  return lines.join('\n');
}

/**
 * One scenario at a time, its clients in A-B-C then C-B-A order, so that each follows the
 * others about as often as itself (and inherits their garbage as often).
 */
async function measure(contenders: Contender[]): Promise<void> {
  for (const scenario of new Set(contenders.map((c) => c.scenario))) {
    const group = contenders.filter((c) => c.scenario === scenario);
    for (const c of group) for (let i = 0; i < WARMUP; i++) await c.call();
    for (let round = 0; round < ROUNDS; round++) {
      for (const c of round % 2 === 0 ? group : [...group].reverse()) {
        const cpu = process.cpuUsage();
        const started = performance.now();
        for (let i = 0; i < CALLS; i++) {
          const before = performance.now();
          await c.call();
          c.latencies.push(performance.now() - before);
        }
        c.wallMs += performance.now() - started;
        const used = process.cpuUsage(cpu);
        c.cpuMs.push((used.user + used.system) / 1000 / CALLS);
      }
    }
  }
}

/** Waits until this process has no server-everything child left; returns how many remain. */
async function childrenLeft(ms = 5_000): Promise<number> {
  const until = Date.now() + ms;
  while (everythingChildren().length > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  return everythingChildren().length;
}

type Closer = () => Promise<unknown>;

/** server-everything in streamable HTTP mode and the echo server; `url`s of both. */
async function startServers(closers: Closer[]): Promise<{ mcpUrl: string; echoUrl: string }> {
  const port = await freePort();
  const everything = await startEverythingHttp('streamableHttp', port);
  closers.push(() => killProcess(everything));
  const echo = await startEchoServer();
  closers.push(() => killProcess(echo.child));
  return { mcpUrl: `http://127.0.0.1:${port}/mcp`, echoUrl: echo.url };
}

async function bareMcpClient(
  transport: StdioClientTransport | StreamableHTTPClientTransport,
  closers: Closer[],
): Promise<Client> {
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(transport);
  closers.push(() => client.close());
  return client;
}

/** ToolsModule as the app wires it, its catalog naming the two MCP clients and the HTTP tool. */
async function parley(mcpUrl: string, echoUrl: string, closers: Closer[]) {
  const { app, catalog } = await toolsTestApp({ env: { TOOL_HTTP_ALLOWED_HOSTS: new URL(echoUrl).host } });
  closers.push(() => app.close());
  catalog.mcpClients.set('stdio', {
    name: 'stdio',
    transport: 'ST',
    command: process.execPath,
    args: EVERYTHING_STDIO,
  });
  catalog.mcpClients.set('http', { name: 'http', transport: 'SH', url: mcpUrl });
  catalog.tools.set(
    'ECHO',
    httpToolConfigSchema.parse({ kind: 'http', url: echoUrl, request: { auth: 'none' } }) as HttpToolConfig,
  );
  const pool = app.get(McpPool);
  const executor = app.get(ToolExecutor);
  // The echo tool as a turn's snapshot holds it: the server's own schema.
  const echoDef = async (client: string) => (await pool.listTools(client)).find((t) => t.ref === `${client}/echo`)!;
  return { pool, executor, stdioEcho: await echoDef('stdio'), httpEcho: await echoDef('http') };
}

const ARGS = JSON.stringify({ message: MESSAGE });

async function contenders(closers: Closer[]): Promise<{ all: Contender[]; bareSpawns: number }> {
  const { mcpUrl, echoUrl } = await startServers(closers);
  const bareStdio = await bareMcpClient(
    new StdioClientTransport({ command: process.execPath, args: EVERYTHING_STDIO, stderr: 'ignore' }),
    closers,
  );
  const bareSpawns = stdioSpawns;
  const bareHttp = await bareMcpClient(new StreamableHTTPClientTransport(new URL(mcpUrl)), closers);
  const { pool, executor, stdioEcho, httpEcho } = await parley(mcpUrl, echoUrl, closers);
  const httpTool = toolDef({
    name: 'echo_json',
    kind: 'http',
    ref: 'ECHO',
    parameters: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
  });
  const bareCall = (client: Client) => async () => {
    const result = await client.callTool({ name: 'echo', arguments: { message: MESSAGE } });
    check((result.content as { text?: string }[])[0]?.text === ECHOED, 'the bare client');
  };
  const poolCall = (client: 'stdio' | 'http') => async () => {
    const result = await pool.callTool(client, 'echo', { message: MESSAGE }, { timeoutMs: 30_000 });
    check(result.content === ECHOED, 'the pool');
  };
  const executorCall = (def: ToolDefinition, expected: string) => async () => {
    // A turn's context: an abort signal of its own, the default tool timeout and output limit.
    const ctx = callContext({ signal: new AbortController().signal, timeoutMs: 30_000, maxOutputBytes: 65_536 });
    const outcome = await executor.execute(def, ARGS, ctx);
    check(outcome.ok && outcome.output === expected, `the executor (${def.kind})`);
  };
  const bareFetch = async () => {
    const res = await fetch(echoUrl, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/json' },
      body: ARGS,
    });
    check(((await res.json()) as { message?: string }).message === MESSAGE, 'the bare fetch');
  };
  const all = [
    contender('stdio', 'bare SDK `Client.callTool`', bareCall(bareStdio)),
    contender('stdio', 'Parley `McpPool.callTool`', poolCall('stdio')),
    contender('stdio', 'Parley `ToolExecutor.execute`', executorCall(stdioEcho, ECHOED)),
    contender('streamable HTTP', 'bare SDK `Client.callTool`', bareCall(bareHttp)),
    contender('streamable HTTP', 'Parley `McpPool.callTool`', poolCall('http')),
    contender('streamable HTTP', 'Parley `ToolExecutor.execute`', executorCall(httpEcho, ECHOED)),
    contender('HTTP tool', 'bare `fetch`', bareFetch),
    contender(
      'HTTP tool',
      'Parley `ToolExecutor.execute`',
      executorCall(httpTool, JSON.stringify({ message: MESSAGE }, null, 2)),
    ),
  ];
  return { all, bareSpawns };
}

async function main(): Promise<void> {
  Logger.overrideLogger(['error']);
  const closers: Closer[] = [];
  try {
    const { all, bareSpawns } = await contenders(closers);
    await measure(all);
    const poolSpawns = stdioSpawns - bareSpawns;
    const poolCalls = all
      .filter((c) => c.scenario === 'stdio' && c.client.startsWith('Parley'))
      .reduce((n, c) => n + c.latencies.length + WARMUP, 0);
    process.stdout.write(`\n${table(all)}\n\n`);
    process.stdout.write(
      `server-everything processes started over stdio by Parley's pool: ${poolSpawns} for ` +
        `${poolCalls.toLocaleString('en-US')} calls (the bare client started ${bareSpawns} of its own)\n`,
    );
    if (poolSpawns !== 1) throw new Error(`the pool started ${poolSpawns} stdio processes; one was expected`);
  } finally {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    const left = await childrenLeft();
    process.stdout.write(`server-everything processes left after close: ${left}\n`);
    if (left > 0) {
      for (const pid of everythingChildren()) process.kill(pid, 'SIGKILL');
      process.exitCode = 1;
    }
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
