import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Client } from 'pg';
import type { PeerReply, PeerRequest } from './langgraph-process';

const ADMIN_URL = process.env.PARLEY_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface LangGraphPeer {
  /** Its process, whose CPU is the peer's. */
  pid: number;
  /** `onMeasuring`: called when its warm-up is over and the measured turns begin. */
  ask(request: PeerRequest, onMeasuring?: () => void): Promise<PeerReply>;
  /** Ends the process and drops its database. */
  close(): Promise<void>;
}

/**
 * LangGraph.js + PostgresSaver (bench/peers/langgraph-process.ts) in a child process, against
 * the simulator at `simulatorUrl`, its checkpoints in a fresh database of its own on the
 * benchmarks' PostgreSQL (dropped by `close`).
 */
export async function startLangGraphPeer(simulatorUrl: string): Promise<LangGraphPeer> {
  const name = `parley_bench_langgraph_${randomBytes(4).toString('hex')}`;
  const admin = new Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`create database "${name}"`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const child = fork(join(__dirname, 'langgraph-process.ts'), [], {
    execArgv: ['-r', './tools/register.js'],
    env: { ...process.env, PEER_SIMULATOR_URL: simulatorUrl, PEER_DATABASE_URL: url.href },
  });
  const waiting = new Map<number, { done(reply: PeerReply): void; onMeasuring?: () => void }>();
  let next = 1;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      if (child.connected) child.disconnect();
      await exited;
      await admin.query(`drop database if exists "${name}" with (force)`);
      await admin.end();
    })());
  return new Promise((resolve, reject) => {
    const fail = (err: Error) => void close().finally(() => reject(err));
    child.once('error', fail);
    child.once('exit', (code) => {
      for (const asked of waiting.values()) asked.done({ id: 0, error: `the LangGraph peer exited (${code})` });
      fail(new Error(`the LangGraph peer exited (${code})`));
    });
    child.on('message', (reply: PeerReply) => {
      if (reply.id === 0)
        return resolve({
          pid: child.pid!,
          ask: (request, onMeasuring) =>
            new Promise((done, failed) => {
              const id = next++;
              waiting.set(id, { done: (r) => (r.error ? failed(new Error(r.error)) : done(r)), onMeasuring });
              child.send({ id, ...request });
            }),
          close,
        });
      const asked = waiting.get(reply.id);
      if (reply.measuring) return asked?.onMeasuring?.();
      asked?.done(reply);
      waiting.delete(reply.id);
    });
  });
}
