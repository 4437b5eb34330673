/**
 * The turn benchmark's load: a client service in a process of its own, as it would be in
 * production, so its HTTP client's CPU does not share the server's event loop. It drives Parley
 * over loopback HTTP with an API key, and replays the baseline (the bare `openai` SDK straight
 * to the simulator) from the same process. Answers the parent's IPC requests (`ClientRequest`).
 */
import OpenAI from 'openai';
import { setTimeout as sleep } from 'node:timers/promises';

export type ClientRequest =
  | { kind: 'create'; url: string; key: string; count: number; actionCode: string }
  | {
      kind: 'turns';
      url: string;
      /** Set: lane i sends to `urls[i % urls.length]` instead of `url` (several command APIs). */
      urls?: string[];
      key: string;
      /** One list of conversation ids per concurrent loop. */
      lanes: string[][];
      content: string;
      turnsPerConversation: number;
      paced: boolean;
    }
  | {
      kind: 'replay';
      baseURL: string;
      requests: Record<string, unknown>[];
      concurrency: number;
      count: number;
      paced: boolean;
    };

export interface ClientReply {
  id: number;
  error?: string;
  ids?: string[];
  /** Milliseconds of each measured turn. */
  times?: number[];
  /** Sent before the final reply: the warm-up is over and the measured turns begin. */
  measuring?: boolean;
  /** CPU milliseconds this process spent on the measured part. */
  cpuMs?: number;
}

/** A person's pause before the next message: 1–3 s when paced. */
const think = (paced: boolean) => (paced ? sleep(1000 + Math.random() * 2000) : Promise.resolve());

async function post(url: string, key: string, path: string, body: unknown) {
  const res = await fetch(`${url}/api/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { conversationId: string; status: string };
  if (res.status >= 300 || (json.status && !['NS', 'CO'].includes(json.status)))
    throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

async function measured(run: () => Promise<number[]>): Promise<{ times: number[]; cpuMs: number }> {
  const cpu = process.cpuUsage();
  const times = await run();
  const used = process.cpuUsage(cpu);
  return { times, cpuMs: (used.user + used.system) / 1000 };
}

async function handle(request: ClientRequest, measuring: () => void): Promise<Omit<ClientReply, 'id'>> {
  switch (request.kind) {
    case 'create': {
      const ids: string[] = [];
      for (let i = 0; i < request.count; i++)
        ids.push(
          (
            await post(request.url, request.key, '/conversations', {
              agentCode: 'HELPDESK',
              actionCode: request.actionCode,
            })
          ).conversationId,
        );
      return { ids };
    }
    case 'turns': {
      const { url, urls, key, lanes, content, turnsPerConversation, paced } = request;
      const urlOf = (lane: number) => (urls ? urls[lane % urls.length] : url);
      // Warm-up: one turn per conversation (JIT, pooled connections, the server's caches).
      await Promise.all(
        lanes.flatMap((lane, i) => lane.map((id) => post(urlOf(i), key, `/conversations/${id}/messages`, { content }))),
      );
      measuring();
      return measured(async () => {
        const times: number[] = [];
        await Promise.all(
          lanes.map(async (lane, i) => {
            const url = urlOf(i);
            for (const id of lane)
              for (let t = 0; t < turnsPerConversation; t++) {
                await think(paced);
                const started = performance.now();
                await post(url, key, `/conversations/${id}/messages`, { content });
                times.push(performance.now() - started);
              }
          }),
        );
        return times;
      });
    }
    case 'replay':
      return replay(request);
  }
}

/**
 * The baseline: `requests` (one turn's model calls, in order) sent straight to the simulator
 * with the bare openai SDK, streamed to the end, from `concurrency` loops until `count` turns
 * are done, after one warm-up turn per loop.
 */
async function replay(request: Extract<ClientRequest, { kind: 'replay' }>) {
  const client = new OpenAI({ baseURL: request.baseURL, apiKey: 'sk-bench', maxRetries: 0 });
  const once = async () => {
    for (const body of request.requests) {
      const stream = await client.chat.completions.create({
        ...(body as unknown as OpenAI.ChatCompletionCreateParamsStreaming),
        stream: true,
      });
      for await (const _chunk of stream);
    }
  };
  await Promise.all(Array.from({ length: request.concurrency }, once));
  return measured(async () => {
    const times: number[] = [];
    let left = request.count;
    await Promise.all(
      Array.from({ length: request.concurrency }, async () => {
        while (left-- > 0) {
          await think(request.paced);
          const started = performance.now();
          await once();
          times.push(performance.now() - started);
        }
      }),
    );
    return times;
  });
}

process.on('message', (message: ClientRequest & { id: number }) => {
  handle(message, () => process.send!({ id: message.id, measuring: true })).then(
    (reply) => process.send!({ id: message.id, ...reply }),
    (err: unknown) => process.send!({ id: message.id, error: (err as Error).stack ?? String(err) }),
  );
});
process.once('disconnect', () => process.exit(0));
process.send!({ id: 0 });
