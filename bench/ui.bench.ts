/**
 * Dashboard benchmark, measured in Chromium: the conversations page's first page with 10,000
 * conversations in the read models, and the timeline of a 2,000-event conversation (render, then
 * a scroll through it watched for long tasks). The all-in-one server without the turn worker
 * runs in this process on a fresh database (dropped at the end); events are appended straight
 * through the event store and projected as in production. Run with `npm run bench:ui`.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- the functions given to page.evaluate run in the
   browser, whose globals this Node program has no types for. */
import 'reflect-metadata';
import { randomBytes, randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { AppModule } from '../apps/server/src/app.module';
import { streamIdOf, type ConversationEvent } from '../libs/domain/src';
import { EVENT_STORE, type EventStore } from '../libs/event-store/src';
import { createLogger } from '../libs/observability/src';
import { ProjectionsService } from '../libs/read-models/src';
import { conversationScript, createScratchDatabase, snapshotFixture, toAppend } from '../libs/testing/src';
import { createHttpApp } from '../libs/transport/src';
import { launchBrowser, openPage, signIn } from '../test/ui/browser';
import { ensureUiBuilt } from '../tools/ui-build';
import { benchConfig } from './turn-bench-support';

const ADMIN_URL = process.env.PARLEY_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const ADMIN_KEY = `pk_bench_${randomBytes(16).toString('hex')}`;
const CONVERSATIONS = Number(process.env.BENCH_UI_CONVERSATIONS ?? 10_000);
const TIMELINE_EVENTS = Number(process.env.BENCH_UI_EVENTS ?? 2_000);
const LOADS = 5;

type Row = [string, string, string, string];
const rows: Row[] = [];
const row = (r: Row) => {
  rows.push(r);
  process.stdout.write(`${r.join(' | ')}\n`);
};

/** One turn of a long conversation: a question, a tool step, a reply (11 events). */
function turn(t: number): ConversationEvent[] {
  const call = (callNo: number) => ({ turnNo: t, callNo, attempt: 1 });
  const done = (callNo: number, finishReason: 'ST' | 'TC') =>
    ({
      type: 'ModelCallCompleted',
      data: {
        ...call(callNo),
        finishReason,
        responseModel: 'sim-chat',
        inputTokens: 200 + t,
        outputTokens: 40,
        usageEstimated: false,
        cost: 0.0002,
        latencyMs: 300,
      },
    }) as const;
  const seq = t * 10;
  return [
    {
      type: 'MessageRecorded',
      data: { sequence: seq, role: 'US', content: `Question ${t}?`, turnNo: t, tokenCount: 3 },
    },
    { type: 'TurnStarted', data: { turnNo: t } },
    { type: 'ModelCallStarted', data: { ...call(1), model: 'sim-chat', provider: 'SIM' } },
    { type: 'ChunksReceived', data: { ...call(1), text: '', reasoning: `thinking about ${t}`, count: 2 } },
    done(1, 'TC'),
    {
      type: 'ToolCallStarted',
      data: { turnNo: t, toolCallId: `c${t}`, name: 'order_status', arguments: `{"orderId":${t}}`, kind: 'in_process' },
    },
    {
      type: 'ToolCallCompleted',
      data: {
        turnNo: t,
        sequence: seq + 1,
        toolCallId: `c${t}`,
        name: 'order_status',
        output: '{"status":"shipped"}',
        truncated: false,
        durationMs: 12,
      },
    },
    { type: 'ModelCallStarted', data: { ...call(2), model: 'sim-chat', provider: 'SIM' } },
    done(2, 'ST'),
    {
      type: 'MessageRecorded',
      data: {
        sequence: seq + 2,
        role: 'AS',
        content: `Answer ${t}: `.padEnd(40 + (t % 7) * 30, 'lorem '),
        turnNo: t,
        tokenCount: 20,
      },
    },
    {
      type: 'ConversationCompleted',
      data: { turnNo: t, finishReason: 'ST', reply: `Answer ${t}`, responseModel: 'sim-chat' },
    },
  ] as ConversationEvent[];
}

async function seed(store: EventStore): Promise<{ longId: string; last: string; turns: number }> {
  const snapshot = snapshotFixture();
  let last = '';
  const ids = Array.from({ length: CONVERSATIONS }, () => randomUUID());
  for (let i = 0; i < ids.length; i += 50)
    await Promise.all(
      ids.slice(i, i + 50).map(async (id, j) => {
        const events = conversationScript(id, {
          owner: `subject-${(i + j) % 40}`,
          agentCode: 'HELPDESK',
          actionCode: ['ANSWER', 'TICKET', 'CHAT'][(i + j) % 3],
          snapshot,
        }).slice(0, 2);
        last = (await store.append(streamIdOf(id), toAppend(events), { expected: 'no_stream' })).position;
      }),
    );
  const longId = randomUUID();
  const [started] = conversationScript(longId, { owner: 'admin', snapshot });
  const events: ConversationEvent[] = [started];
  let turns = 0;
  while (events.length < TIMELINE_EVENTS) events.push(...turn(++turns));
  for (let i = 0; i < events.length; i += 500)
    last = (await store.append(streamIdOf(longId), toAppend(events.slice(i, i + 500)))).position;
  return { longId, last, turns };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function conversationsPage(page: Page, url: string): Promise<void> {
  const times: number[] = [];
  for (let i = 0; i < LOADS; i++) {
    const started = Date.now();
    await page.goto(`${url}/ui/`);
    await page.locator('[data-testid=conversations] tbody tr').nth(49).waitFor();
    times.push(Date.now() - started);
  }
  const total = await page.locator('[data-testid=counts] button').first().textContent();
  row([
    `conversations page, first page of 50 (${total?.trim()})`,
    '≤ 1,000 ms',
    `median ${median(times)} ms, max ${Math.max(...times)} ms (${LOADS} loads: ${times.join(', ')})`,
    Math.max(...times) <= 1000 ? 'met' : 'NOT met',
  ]);
}

async function timeline(page: Page, url: string, id: string, events: number, turns: number): Promise<void> {
  const renders: number[] = [];
  let longest = { render: 0, scroll: 0, scrollTasks: 0 };
  for (let i = 0; i < 3; i++) {
    const started = Date.now();
    await page.goto(`${url}/ui/conversations/${id}`);
    // Rendered: the last turn's completion is drawn (the list follows the newest item).
    await page.waitForFunction(
      (text) => (globalThis as any).document.querySelector('[role=log]')?.textContent.includes(text),
      `Turn ${turns} completed`,
      { polling: 'raf' },
    );
    renders.push(Date.now() - started);
    const cdp = process.env.BENCH_UI_TRACE ? await page.context().newCDPSession(page) : null;
    if (cdp) {
      await cdp.send('Profiler.enable');
      await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
      await cdp.send('Profiler.start');
    }
    const tasks = await page.evaluate(async () => {
      const g = globalThis as any;
      const log = g.document.querySelector('[role=log]');
      const seen: number[] = [];
      const observer = new g.PerformanceObserver((list: any) => {
        for (const e of list.getEntries()) {
          seen.push(e.duration);
          g.console.log(`longtask ${e.duration.toFixed(0)} ms at +${(e.startTime - t0).toFixed(0)} ms`);
        }
      });
      observer.observe({ type: 'longtask' });
      const renderTasks = (g.performance.getEntriesByType?.('longtask') ?? []).map((e: any) => e.duration);
      const t0 = g.performance.now();
      log.scrollTop = 0;
      await new Promise((r) => g.requestAnimationFrame(r));
      g.console.log(`top reached at +${(g.performance.now() - t0).toFixed(0)} ms`);
      for (let y = 0; y <= log.scrollHeight; y += 350) {
        log.scrollTop = y;
        await new Promise((r) => g.requestAnimationFrame(r));
      }
      g.console.log(`bottom reached at +${(g.performance.now() - t0).toFixed(0)} ms`);
      await new Promise((r) => setTimeout(r, 200));
      observer.disconnect();
      return { scroll: seen, render: renderTasks };
    });
    if (cdp) {
      const { profile } = (await cdp.send('Profiler.stop')) as any;
      const self = new Map<string, number>();
      const dt = new Map<number, number>();
      profile.samples.forEach((id: number, i: number) => dt.set(id, (dt.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
      for (const n of profile.nodes) {
        const key = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').pop()}:${n.callFrame.lineNumber}`;
        self.set(key, (self.get(key) ?? 0) + (dt.get(n.id) ?? 0) / 1000);
      }
      const top = [...self].sort((a, b) => b[1] - a[1]).slice(0, 15);
      for (const [k, v] of top) process.stdout.write(`  [profile] ${v.toFixed(0)} ms ${k}\n`);
    }
    longest = {
      render: Math.max(longest.render, ...tasks.render, 0),
      scroll: Math.max(longest.scroll, ...tasks.scroll, 0),
      scrollTasks: Math.max(longest.scrollTasks, tasks.scroll.length),
    };
  }
  const count = await page.locator('[role=log]').getAttribute('data-count');
  row([
    `timeline of ${events}+ events (${turns} turns, ${count} items), rendered`,
    '≤ 1,000 ms',
    `median ${median(renders)} ms, max ${Math.max(...renders)} ms (3 loads: ${renders.join(', ')})`,
    Math.max(...renders) <= 1000 ? 'met' : 'NOT met',
  ]);
  row([
    'timeline scrolled top to bottom (350 px a frame), longest task',
    '≤ 100 ms',
    `${longest.scroll.toFixed(0)} ms (${longest.scrollTasks} long tasks > 50 ms in the worst scroll)`,
    longest.scroll <= 100 ? 'met' : 'NOT met',
  ]);
}

async function main(): Promise<void> {
  ensureUiBuilt((line) => process.stderr.write(`${line}\n`));
  const db = await createScratchDatabase('bench_ui', ADMIN_URL);
  const config = benchConfig(ADMIN_KEY, { DATABASE_URL: db.url });
  const app = await createHttpApp(
    AppModule.forRoot(config, { worker: false }),
    config,
    createLogger({ level: 'silent' }),
  );
  const browser = await launchBrowser();
  try {
    await app.listen(0, '127.0.0.1');
    const url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
    const seeding = Date.now();
    const { longId, last, turns } = await seed(app.get<EventStore>(EVENT_STORE));
    if (!(await app.get(ProjectionsService).waitForPosition(last, 300_000)))
      throw new Error('the projections did not catch up');
    process.stdout.write(
      `seeded ${CONVERSATIONS} conversations and one of ${TIMELINE_EVENTS}+ events in ${Date.now() - seeding} ms\n`,
    );
    const { page } = await openPage(browser);
    if (process.env.BENCH_UI_TRACE) page.on('console', (m) => process.stdout.write(`  [page] ${m.text()}\n`));
    await signIn(page, url, ADMIN_KEY);
    row(['scenario', 'target', 'result', 'met?']);
    row(['---', '---', '---', '---']);
    await conversationsPage(page, url);
    await timeline(page, url, longId, TIMELINE_EVENTS, turns);
    process.stdout.write(`\n| ${rows.map((r) => r.join(' | ')).join(' |\n| ')} |\n`);
  } finally {
    await browser.close();
    await app.close();
    await db.drop();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
