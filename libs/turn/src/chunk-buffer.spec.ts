import type { ConversationEvent } from '@parley/domain';
import { setTimeout as sleep } from 'node:timers/promises';
import { ChunkBuffer } from './chunk-buffer';
import { startTurn, useTurnStore } from './turn.test-kit';

const call = { turnNo: 1, callNo: 1, attempt: 1 };
const modelCallStarted: ConversationEvent = {
  type: 'ModelCallStarted',
  data: { ...call, model: 'sim-chat', provider: 'SIM' },
};

/** A small window, so the timings below stay short: 50 ms, or 64 characters. */
const WINDOW = { firstMs: 50, windowMs: 50, maxWindowMs: 50, maxChars: 64 };

const chunksOf = (batch: { text: string; reasoning: string; count: number }): ConversationEvent => ({
  type: 'ChunksReceived',
  data: { ...call, ...batch },
});

describe('ChunkBuffer', () => {
  const store = useTurnStore('chunk_buffer');

  /** A running turn's context on a fresh conversation, and how many appends the turn made. */
  async function runningTurn() {
    const { id, ctx } = await startTurn(store());
    const appends = { count: 0 };
    const append = ctx.append.bind(ctx);
    ctx.append = (events) => {
      appends.count++;
      return append(events);
    };
    const stored = async () => (await store().readStream(`conversation-${id}`)).slice(3);
    return { ctx, appends, stored };
  }

  const batches = (events: { type: string; data: unknown }[]) =>
    events.filter((e) => e.type === 'ChunksReceived').map((e) => e.data as { text: string; count: number });

  it('cuts batches by size and hands a fast stream to the outcome without an append of its own', async () => {
    const { ctx, appends, stored } = await runningTurn();
    const buffer = new ChunkBuffer(ctx, chunksOf, modelCallStarted, WINDOW);
    for (let i = 0; i < 40; i++) buffer.add('text', 'abcd'); // 160 characters: two full batches and a part

    const events = buffer.drain();

    expect(events.map((e) => e.type)).toEqual([
      'ModelCallStarted',
      'ChunksReceived',
      'ChunksReceived',
      'ChunksReceived',
    ]);
    expect(batches(events).map((b) => b.count)).toEqual([16, 16, 8]);
    expect(batches(events).map((b) => b.text.length)).toEqual([64, 64, 32]);
    await sleep(80); // past every flush timer: nothing was due any more
    expect(appends.count).toBe(0);
    expect(await stored()).toEqual([]);
  });

  it('counts reasoning toward the size of a batch', async () => {
    const { ctx } = await runningTurn();
    const buffer = new ChunkBuffer(ctx, chunksOf, modelCallStarted, WINDOW);
    buffer.add('reasoning', 'r'.repeat(40));
    buffer.add('text', 't'.repeat(30));
    buffer.add('text', 'more');
    const events = buffer.drain();
    expect(batches(events).map((b) => b.count)).toEqual([2, 1]);
  });

  it('stores a closed batch within a few milliseconds, with the open one, in one append', async () => {
    const { ctx, appends, stored } = await runningTurn();
    const buffer = new ChunkBuffer(ctx, chunksOf, modelCallStarted, WINDOW);
    for (let i = 0; i < 20; i++) buffer.add(i % 10 === 0 ? 'reasoning' : 'text', 'xxxx');

    await sleep(40); // well under the 50 ms of an open batch, well over the closed one's 5 ms

    expect(appends.count).toBe(1);
    const events = await stored();
    expect(events.map((e) => e.type)).toEqual(['ModelCallStarted', 'ChunksReceived', 'ChunksReceived']);
    expect(batches(events).map((b) => b.count)).toEqual([16, 4]);
    expect(buffer.drain()).toEqual([]);
  });

  it('stores a slow stream one window after the first delta of each batch', async () => {
    const { ctx, appends, stored } = await runningTurn();
    const buffer = new ChunkBuffer(ctx, chunksOf, modelCallStarted, WINDOW);
    buffer.add('text', 'Hel');
    buffer.add('text', 'lo');
    await sleep(15);
    expect(appends.count).toBe(0);

    await sleep(100);
    expect(appends.count).toBe(1);
    expect((await stored()).map((e) => e.type)).toEqual(['ModelCallStarted', 'ChunksReceived']);
    buffer.add('text', ' there');
    await sleep(100);
    const events = await stored();
    expect(batches(events).map((b) => b.text)).toEqual(['Hello', ' there']);
    expect(events.filter((e) => e.type === 'ModelCallStarted')).toHaveLength(1);
  });

  it('stores the first batch of a slow stream soon, then lets each wait twice as long as the one before, up to the longest window', async () => {
    const { ctx, stored } = await runningTurn();
    const buffer = new ChunkBuffer(ctx, chunksOf, modelCallStarted, {
      firstMs: 20,
      windowMs: 40,
      maxWindowMs: 100,
      maxChars: 1000,
    });
    const started = Date.now();
    const storedAt: number[] = [];
    const append = ctx.append.bind(ctx);
    ctx.append = (events) => {
      storedAt.push(Date.now() - started);
      return append(events);
    };
    // A delta every 10 ms or so for 600 ms.
    while (Date.now() - started < 600) {
      buffer.add('text', 'x');
      await sleep(10);
    }
    // Windows of 20, 40, 80, then 100 ms (capped): stored near 20, 60, 140, 240, 340, 440 and 540 ms.
    const gaps = storedAt.slice(1).map((t, i) => t - storedAt[i]);
    expect(storedAt[0]).toBeLessThan(80);
    expect(gaps[0]).toBeGreaterThanOrEqual(35);
    expect(gaps[1]).toBeGreaterThanOrEqual(70);
    expect(gaps.slice(2).every((g) => g >= 90)).toBe(true);
    expect(storedAt.length).toBeGreaterThanOrEqual(3);
    expect(storedAt.length).toBeLessThanOrEqual(7);
    expect(batches(await stored()).length).toBe(storedAt.length);
    buffer.drain();
  });

  it('keeps the start of a call that streamed nothing for its outcome, and drops an abandoned attempt', async () => {
    const { ctx, appends } = await runningTurn();
    const buffer = new ChunkBuffer(ctx, chunksOf, modelCallStarted, WINDOW);
    await buffer.flush();
    expect(appends.count).toBe(0);
    expect(buffer.drain().map((e) => e.type)).toEqual(['ModelCallStarted']);

    const retried = new ChunkBuffer(
      ctx,
      (b) => ({ type: 'ChunksReceived', data: { ...call, attempt: 2, ...b } }),
      modelCallStarted,
      WINDOW,
    );
    retried.add('text', 'partial');
    retried.discard();
    await sleep(80);
    expect(appends.count).toBe(0);
    expect(retried.drain()).toEqual([]);
  });
});
