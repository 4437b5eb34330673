import { Worker } from 'node:worker_threads';
// Loaded by this thread too (4 ms, 7 MB), so the addon's library stays mapped for the life of the
// process: a graph thread that ends would otherwise unload it while its objects' finalizers may
// still run, the crash Node addons are known for in worker threads (nodejs/node#58484).
import 'usearch';

/** The HNSW parameters of a graph (usearch's connectivity, expansion_add and expansion_search). */
export interface GraphParameters {
  dimensions: number;
  m: number;
  efConstruction: number;
  efSearch: number;
}

/**
 * The thread's side: usearch indexes by graph number, cosine distance over vectors quantised to
 * int8 (a quarter of the memory, and faster to link and search than float32 at the same recall;
 * callers score the candidates exactly). Each call is answered by its number; one thread, so
 * a long add holds the others up: callers send vectors in slices.
 */
const GRAPH_THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const { Index } = require(workerData.usearch);
const graphs = new Map();
const graphOf = (n) => {
  const graph = graphs.get(n);
  if (!graph) throw new Error('no graph ' + n);
  return graph;
};
parentPort.on('message', (m) => {
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
      const found = graph.size() === 0 ? { keys: new BigUint64Array(0) } : graph.search(m.vector, m.count, 1);
      result = Array.from(found.keys, Number);
    } else if (m.op === 'drop') {
      graphs.delete(m.graph);
    }
    parentPort.postMessage({ id: m.id, result });
  } catch (err) {
    parentPort.postMessage({ id: m.id, error: err && err.message ? err.message : String(err) });
  }
});
`;

interface Pending {
  resolve(result: unknown): void;
  reject(err: Error): void;
}

/**
 * One thread holding HNSW graphs (usearch, native and multi-threaded by design; here one thread
 * of it, beside the event loop), so that linking a hundred thousand vectors never blocks a
 * request. Graphs are numbered by `create`, never reusing a number; every call resolves when the
 * thread has done it, in order. A thread that dies rejects what was pending and takes its graphs
 * with it; the next call starts a new thread, where a call on an old graph fails (callers build
 * it again). Once started, the thread keeps the process alive until `close` (the resolver's, at
 * the application's shutdown).
 */
export class GraphWorker {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private nextGraph = 1;

  create(parameters: GraphParameters): Promise<number> {
    const graph = this.nextGraph++;
    return this.call({ op: 'create', graph, ...parameters }).then(() => graph);
  }

  /** Links vectors (row i at `i × dimensions`) under keys; both arrays are moved to the thread. */
  add(graph: number, keys: BigUint64Array<ArrayBuffer>, vectors: Float32Array<ArrayBuffer>): Promise<void> {
    return this.call({ op: 'add', graph, keys, vectors }, [keys.buffer, vectors.buffer]).then(() => undefined);
  }

  remove(graph: number, keys: BigUint64Array): Promise<void> {
    return this.call({ op: 'remove', graph, keys }).then(() => undefined);
  }

  /** The keys of the `count` nearest vectors, nearest first (fewer when the graph holds fewer). */
  search(graph: number, vector: Float32Array, count: number): Promise<number[]> {
    return this.call({ op: 'search', graph, vector, count }) as Promise<number[]>;
  }

  /** Frees a graph (numbers are never reused: one of a thread that has since died is gone already). */
  drop(graph: number): void {
    if (this.worker) void this.call({ op: 'drop', graph }).catch(() => undefined);
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    for (const waiting of this.pending.values()) waiting.reject(new Error('HNSW graph thread closed'));
    this.pending.clear();
    if (worker) await worker.terminate();
  }

  private call(message: Record<string, unknown>, transfer: ArrayBuffer[] = []): Promise<unknown> {
    const worker = this.thread();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ ...message, id }, transfer);
    });
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(GRAPH_THREAD, { eval: true, workerData: { usearch: require.resolve('usearch') } });
    worker.on('message', (m: { id: number; result?: unknown; error?: string }) => {
      const waiting = this.pending.get(m.id);
      this.pending.delete(m.id);
      if (m.error !== undefined) waiting?.reject(new Error(`HNSW graph thread: ${m.error}`));
      else waiting?.resolve(m.result);
    });
    const fail = (err: Error) => {
      if (this.worker !== worker) return;
      this.worker = null;
      for (const waiting of this.pending.values()) waiting.reject(err);
      this.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`HNSW graph thread stopped (exit ${code})`)));
    this.worker = worker;
    return worker;
  }
}
