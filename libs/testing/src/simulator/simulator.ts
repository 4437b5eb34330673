import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { completionBody, streamChunks } from './chunks';
import { simEmbedding, simEmbeddingTokens } from './embeddings';
import { readBody, sendError, sendJson } from './http-io';
import { planOf } from './reply-plan';
import { Script } from './rules';
import type { Habit, RecordedRequest, SimChatRequest, SimReply, SimRule } from './simulator.types';
import { asTextToolCalls, isTextToolsModel, TEXT_TOOLS_MODEL, textToolsProblem } from './text-tools';

export interface SimulatorOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  host?: string;
  /** Delay before each streamed chunk; 0 (default) streams with no artificial delay. */
  latencyMs?: number;
  /** The habit of replies that name none (default `openai`). */
  habit?: Habit;
  rules?: SimRule[];
}

export interface Simulator {
  /** Base URL for an OpenAI client, e.g. `http://127.0.0.1:4010/v1`. */
  url: string;
  port: number;
  /** Replaces the rules (the first match answers; unmatched requests get an echo). */
  script(rules: SimRule[]): void;
  setLatency(msPerChunk: number): void;
  setHabit(habit: Habit): void;
  /** Chat-completion responses still open (a client that aborted has closed its own). */
  readonly openRequests: number;
  /** Every request received since the start or the last reset, in order. */
  readonly requests: RecordedRequest[];
  /** Forgets rules, requests and counters; back to the start options. */
  reset(): void;
  close(): Promise<void>;
}

const MODELS = ['sim-chat', 'sim-reasoner', 'sim-embed', TEXT_TOOLS_MODEL];

/** An OpenAI chat-completions server on plain node:http whose replies follow a script. */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const script = new Script();
  const requests: RecordedRequest[] = [];
  const stop = new AbortController();
  let latencyMs = options.latencyMs ?? 0;
  let habit: Habit = options.habit ?? 'openai';
  let callCount = 0;
  let requestCount = 0;
  let open = 0;
  script.replace(options.rules ?? []);

  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    const record: RecordedRequest = {
      method: req.method ?? 'GET',
      path: (req.url ?? '/').split('?')[0].replace(/\/+$/, ''),
      headers: req.headers,
      body: null,
      receivedAt: Date.now(),
      id: `sim-${++requestCount}`,
    };
    res.setHeader('x-request-id', record.id);
    res.once('finish', () => (record.durationMs = performance.now() - started));
    const raw = await readBody(req);
    const { path } = record;
    requests.push(record);
    if (req.method === 'GET' && path === '/v1/models') {
      return sendJson(res, 200, {
        object: 'list',
        data: MODELS.map((id) => ({ id, object: 'model', created: 0, owned_by: 'parley-simulator' })),
      });
    }
    if (req.method === 'POST' && path === '/v1/embeddings') return embeddings(res, raw, record);
    if (req.method !== 'POST' || path !== '/v1/chat/completions') {
      return sendError(res, 404, `No route for ${req.method} ${path}.`);
    }
    let body: SimChatRequest;
    try {
      body = JSON.parse(raw) as SimChatRequest;
    } catch {
      return sendError(res, 400, 'The request body is not JSON.');
    }
    record.body = body;
    if (!Array.isArray(body.messages)) return sendError(res, 400, "'messages' is required.");
    callCount += 1;
    open += 1;
    res.once('close', () => (open -= 1));
    const { reply } = script.reply(body, callCount);
    if (isTextToolsModel(String(body.model))) {
      const problem = textToolsProblem(body, reply);
      if (problem) return sendError(res, 400, problem);
      return respond(res, body, asTextToolCalls(reply), callCount);
    }
    await respond(res, body, reply, callCount);
  }

  /** `/v1/embeddings`: deterministic hashed n-gram vectors (see embeddings.ts); rules' failures apply. */
  async function embeddings(res: ServerResponse, raw: string, record: RecordedRequest): Promise<void> {
    let body: { model?: unknown; input?: unknown; dimensions?: unknown; encoding_format?: unknown };
    try {
      body = JSON.parse(raw) as typeof body;
    } catch {
      return sendError(res, 400, 'The request body is not JSON.');
    }
    record.body = body as unknown as SimChatRequest;
    const inputs = typeof body.input === 'string' ? [body.input] : body.input;
    if (!Array.isArray(inputs) || inputs.length === 0 || !inputs.every((i) => typeof i === 'string')) {
      return sendError(res, 400, "'input' must be a string or a non-empty array of strings.");
    }
    const dims = body.dimensions === undefined ? undefined : Number(body.dimensions);
    if (dims !== undefined && (!Number.isInteger(dims) || dims < 1 || dims > 4096)) {
      return sendError(res, 400, "'dimensions' must be an integer from 1 to 4096.");
    }
    callCount += 1;
    const { reply } = script.reply({ model: String(body.model ?? ''), messages: [] } as SimChatRequest, callCount);
    if (reply.fail || reply.hang) return respond(res, { messages: [] } as unknown as SimChatRequest, reply, callCount);
    await pause(latencyMs);
    const tokens = (inputs as string[]).reduce((n, text) => n + simEmbeddingTokens(text), 0);
    const base64 = body.encoding_format === 'base64';
    return sendJson(res, 200, {
      object: 'list',
      model: String(body.model ?? 'sim-embed'),
      data: (inputs as string[]).map((text, index) => {
        const vector = simEmbedding(text, dims);
        return {
          object: 'embedding',
          index,
          embedding: base64 ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector,
        };
      }),
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    });
  }

  async function respond(res: ServerResponse, body: SimChatRequest, reply: SimReply, n: number): Promise<void> {
    if (reply.hang) return;
    if (reply.fail) {
      const { status, retryAfterMs, message, code } = reply.fail;
      const headers: Record<string, string> = {};
      if (retryAfterMs !== undefined) {
        headers['retry-after-ms'] = String(retryAfterMs);
        headers['retry-after'] = String(Math.ceil(retryAfterMs / 1000));
      }
      return sendError(res, status, message ?? `Simulated failure ${status}.`, headers, code);
    }
    const plan = planOf(body, reply, n, habit);
    if (!body.stream) {
      if (reply.cutAfterChunks !== undefined) return void res.socket?.destroy();
      await pause(latencyMs);
      return sendJson(res, 200, completionBody(plan));
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    res.flushHeaders();
    const chunks = streamChunks(plan);
    for (const [i, chunk] of chunks.entries()) {
      if (i === reply.cutAfterChunks) return void res.socket?.destroy();
      if (i === reply.stallAfterChunks) return;
      if (i === reply.errorAfterChunks) {
        const error = {
          message: 'The server failed mid-reply.',
          type: 'server_error',
          param: null,
          code: 'server_error',
        };
        return void res.end(`data: ${JSON.stringify({ error })}\n\n`);
      }
      await pause(latencyMs);
      if (res.destroyed) return;
      res.write(`data: ${JSON.stringify(chunk)}\n\n`);
    }
    if (reply.cutAfterChunks === chunks.length) return void res.socket?.destroy();
    res.end('data: [DONE]\n\n');
  }

  async function pause(ms: number): Promise<void> {
    if (ms > 0) await sleep(ms, undefined, { signal: stop.signal }).catch(() => undefined);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve);
  });
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}/v1`,
    port,
    script: (rules) => script.replace(rules),
    get openRequests() {
      return open;
    },
    setLatency: (ms) => void (latencyMs = ms),
    setHabit: (h) => void (habit = h),
    requests,
    reset() {
      script.replace(options.rules ?? []);
      requests.length = 0;
      callCount = 0;
      latencyMs = options.latencyMs ?? 0;
      habit = options.habit ?? 'openai';
    },
    close: () =>
      new Promise<void>((resolve) => {
        stop.abort();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
