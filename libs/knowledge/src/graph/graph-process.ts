import { spawn, type ChildProcess } from 'node:child_process';

/** The HNSW parameters of a graph (usearch's connectivity, expansion_add and expansion_search). */
export interface GraphParameters {
  dimensions: number;
  m: number;
  efConstruction: number;
  efSearch: number;
}

/**
 * The process's side: usearch indexes by graph number, cosine distance over vectors quantised to
 * int8 (a quarter of the memory, and faster to link and search than float32 at the same recall;
 * callers score the candidates exactly). Each call is answered by its number, in order: a long
 * add holds the others up, so callers send vectors in slices. It ends when its parent goes.
 */
const GRAPH_PROCESS = `
const { Index } = require(process.argv[1]);
const graphs = new Map();
const graphOf = (n) => {
  const graph = graphs.get(n);
  if (!graph) throw new Error('no graph ' + n);
  return graph;
};
process.on('message', (m) => {
  try {
    let result = null;
    if (m.op === 'create') {
      graphs.set(m.graph, new Index({
        dimensions: m.dimensions, metric: 'cos', quantization: 'i8',
        connectivity: m.m, expansion_add: m.efConstruction, expansion_search: m.efSearch,
      }));
    } else if (m.op === 'add') {
      graphOf(m.graph).add(m.keys, m.vectors, 1);
    } else if (m.op === 'remove') {
      graphOf(m.graph).remove(m.keys);
    } else if (m.op === 'search') {
      const graph = graphOf(m.graph);
      const found = graph.size() === 0 ? { keys: [] } : graph.search(m.vector, m.count, 1);
      result = Array.from(found.keys, Number);
    } else if (m.op === 'drop') {
      graphs.delete(m.graph);
    }
    process.send({ id: m.id, result });
  } catch (err) {
    process.send({ id: m.id, error: err && err.message ? err.message : String(err) });
  }
});
process.on('disconnect', () => process.exit(0));
`;

/** How long `close` waits for the process to end after its channel closed, before killing it. */
const CLOSE_WAIT_MS = 2_000;

interface Pending {
  resolve(result: unknown): void;
  reject(err: Error): void;
}

/**
 * A child process holding HNSW graphs (usearch, a native addon), so that linking a hundred
 * thousand vectors never blocks a request, and a fault in native code costs the graphs, never
 * the server. Messages go over Node's IPC channel with the structured-clone serialisation, so
 * typed arrays cross as such. Graphs are numbered by `create`, never reusing a number; every call
 * resolves when the process has done it, in order. A process that ends rejects what was pending
 * and takes its graphs with it; the next call starts a new one, where a call on an old graph
 * fails (callers build it again). Once started, the process lives until `close` (the resolver's,
 * at the application's shutdown) or until this one ends.
 */
export class GraphProcess {
  private child: ChildProcess | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private nextGraph = 1;

  /** The process's id while it runs (null before the first graph and after it ended). */
  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  create(parameters: GraphParameters): Promise<number> {
    const graph = this.nextGraph++;
    return this.call({ op: 'create', graph, ...parameters }).then(() => graph);
  }

  /** Links vectors (row i at `i × dimensions`) under keys. */
  add(graph: number, keys: BigUint64Array, vectors: Float32Array): Promise<void> {
    return this.call({ op: 'add', graph, keys, vectors }).then(() => undefined);
  }

  remove(graph: number, keys: BigUint64Array): Promise<void> {
    return this.call({ op: 'remove', graph, keys }).then(() => undefined);
  }

  /** The keys of the `count` nearest vectors, nearest first (fewer when the graph holds fewer). */
  search(graph: number, vector: Float32Array, count: number): Promise<number[]> {
    return this.call({ op: 'search', graph, vector, count }) as Promise<number[]>;
  }

  /** Frees a graph (numbers are never reused: one of a process that has since ended is gone already). */
  drop(graph: number): void {
    if (this.child) void this.call({ op: 'drop', graph }).catch(() => undefined);
  }

  async close(): Promise<void> {
    const child = this.child;
    this.child = null;
    this.failAll(new Error('HNSW graph process closed'));
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const ended = new Promise((resolve) => child.once('exit', resolve));
    child.disconnect();
    const timer = setTimeout(() => child.kill('SIGKILL'), CLOSE_WAIT_MS);
    await ended;
    clearTimeout(timer);
  }

  private call(message: Record<string, unknown>): Promise<unknown> {
    const child = this.process();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      child.send({ ...message, id });
    });
  }

  private failAll(err: Error): void {
    for (const waiting of this.pending.values()) waiting.reject(err);
    this.pending.clear();
  }

  private process(): ChildProcess {
    if (this.child) return this.child;
    const child = spawn(process.execPath, ['-e', GRAPH_PROCESS, require.resolve('usearch')], {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      serialization: 'advanced',
    });
    child.on('message', (m: { id: number; result?: unknown; error?: string }) => {
      const waiting = this.pending.get(m.id);
      this.pending.delete(m.id);
      if (m.error !== undefined) waiting?.reject(new Error(`HNSW graph process: ${m.error}`));
      else waiting?.resolve(m.result);
    });
    const fail = (err: Error) => {
      if (this.child !== child) return;
      this.child = null;
      this.failAll(err);
    };
    child.on('error', fail);
    child.on('exit', (code, signal) => fail(new Error(`HNSW graph process ended (${signal ?? `exit ${code}`})`)));
    this.child = child;
    return child;
  }
}
