import { Client } from 'pg';
import type { Browser, Page } from 'playwright-core';
import { ADMIN_KEY, startParley, type ParleyUnderTest } from '../support/parley-app';
import { testCatalog } from '../support/test-catalog';
import { launchBrowser, openPage, screenshot, seriousViolations, signIn, tabTo } from './browser';

jest.setTimeout(60_000);

const LONG_REPLY = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');

/**
 * The dashboard as a person uses it: Chromium (playwright-core) against the running server and
 * the model simulator, under the server's own Content-Security-Policy.
 */
describe('the dashboard at /ui, in a browser', () => {
  let parley: ParleyUnderTest;
  let browser: Browser;
  let page: Page;
  let problems: string[];
  let clientKey: string;

  const start = async (actionCode: string) => {
    const res = await parley.call('POST', '/api/v1/conversations', { agentCode: 'HELPDESK', actionCode });
    expect(res.status).toBe(201);
    return res.body.conversationId as string;
  };
  const send = (id: string, content: string, wait = true) =>
    parley.call('POST', `/api/v1/conversations/${id}/messages`, { content, wait });
  const open = async (id: string) => {
    await page.goto(`${parley.url}/ui/conversations/${id}`);
    await page.getByRole('log', { name: 'Timeline' }).waitFor();
  };
  const expectAccessible = async () => expect(await seriousViolations(page)).toEqual([]);

  beforeAll(async () => {
    parley = await startParley('ui', {}, testCatalog, undefined, { latencyMs: 25 });
    browser = await launchBrowser();
    ({ page, problems } = await openPage(browser));
    const created = await parley.call('POST', '/api/v1/keys', { subject: 'shop', roles: ['client'] });
    clientKey = created.body.key;
  });
  afterAll(async () => {
    await browser?.close();
    await parley?.close();
  });
  beforeEach(() => parley.simulator.reset());
  afterEach(() => expect(problems.splice(0)).toEqual([]));

  it('signs in with an API key kept in sessionStorage, and lists conversations with their counts', async () => {
    for (const text of ['hello', 'again']) await send(await start('CHAT'), text);
    await page.goto(`${parley.url}/ui/`);
    await expectAccessible();
    await signIn(page, parley.url, ADMIN_KEY);
    expect(
      await page.evaluate(() => [(globalThis as any).sessionStorage.length, (globalThis as any).localStorage.length]),
    ).toEqual([1, 0]);
    await page.getByTestId('conversations').locator('tbody tr').nth(1).waitFor();
    await page.locator('[data-testid=counts] [data-status=CO]').waitFor();
    expect(await page.locator('[data-testid=counts] [data-status=CO] strong').textContent()).toBe('2');
    await expectAccessible();
    // The filters go to the API: a subject nobody has finds nothing, and clearing them finds all again.
    await page.getByLabel('Subject').fill('nobody-at-all');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('No conversation matches.').waitFor();
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.getByTestId('conversations').locator('tbody tr').nth(1).waitFor();
    // A conversation started elsewhere shows up without a reload.
    const fresh = await start('CHAT');
    await page.locator(`[data-testid=conversations] tr[data-id="${fresh}"]`).waitFor({ timeout: 10_000 });
    await page.locator('[data-testid=counts] [data-status=NS]').waitFor();
    await screenshot(page, 'conversations');
  });

  it('watches a reply stream into the timeline while the model writes it', async () => {
    parley.simulator.script([{ reply: { text: LONG_REPLY } }]);
    const id = await start('CHAT');
    await open(id);
    expect((await send(id, 'tell me a story', false)).status).toBe(202);
    const seen = new Set<string>();
    const assistant = page.locator('[data-kind=message].assistant');
    for (const deadline = Date.now() + 20_000; Date.now() < deadline && (await assistant.count()) === 0;) {
      // Read without waiting: the streaming row goes away once the reply is recorded.
      const live = await page.evaluate(
        () => (globalThis as any).document.querySelector('[data-testid=live-text]')?.textContent as string | undefined,
      );
      if (live) seen.add(live);
      await page.waitForTimeout(30);
    }
    await expect(assistant.textContent()).resolves.toContain('word39');
    // The text grew in place, part by part, before the reply was recorded.
    const partial = [...seen].filter((t) => t.length > 0 && t.length < LONG_REPLY.length);
    expect(partial.length).toBeGreaterThanOrEqual(2);
    expect(partial.every((t) => LONG_REPLY.startsWith(t))).toBe(true);
    await page.locator('[data-kind=model]').first().waitFor();
    expect(await page.locator('[data-kind=model]').first().textContent()).toMatch(/attempt 1: ok .* in \/ .* out/);
    await page.getByTestId('status').filter({ hasText: 'completed' }).waitFor();
    await expectAccessible();
    await screenshot(page, 'conversation');
  });

  it('shows a failed turn with its failed attempt and code, and kills the conversation', async () => {
    parley.simulator.script([{ reply: { fail: { status: 400, message: 'the prompt is malformed' } } }]);
    const id = await start('CHAT');
    expect((await send(id, 'break, please')).body.status).toBe('FA');
    await open(id);
    await page.locator('[data-kind=failure]').waitFor();
    expect(await page.locator('[data-kind=failure]').textContent()).toContain('LLM_RUNTIME_ERROR');
    expect(await page.locator('[data-kind=model] .attempt.failed').first().textContent()).toMatch(/failed/);
    await page.getByTestId('status').filter({ hasText: 'failed' }).waitFor();
    await expectAccessible();
    // An admin ends it from the page; the stream shows the kill and the header its status.
    await page.getByRole('button', { name: 'Kill' }).click();
    await page.locator('[data-kind=marker]', { hasText: 'Killed' }).waitFor();
    await page.getByTestId('status').filter({ hasText: 'killed' }).waitFor();
  });

  it('answers a pending question through the form built from it, by keyboard only', async () => {
    parley.simulator.script([
      {
        when: { noToolResult: true },
        reply: {
          toolCalls: [
            {
              name: 'AskUserQuestion',
              arguments: {
                questions: [
                  { key: 'size', question: 'Which size?', options: ['S', 'M', 'L'], required: true },
                  { key: 'note', question: 'Anything else?', required: false },
                ],
              },
            },
          ],
        },
      },
      { when: { toolResult: { name: 'AskUserQuestion' } }, reply: { text: 'Noted your size.' } },
    ]);
    const id = await start('ANSWER');
    expect((await send(id, 'I want a shirt')).body.status).toBe('WA');
    await open(id);
    const size = page.getByLabel('Which size?');
    await size.waitFor();
    expect(await page.locator('.answers .required').count()).toBe(1);
    expect(await size.locator('option').allTextContents()).toEqual(['Choose…', 'S', 'M', 'L']);
    await expectAccessible();
    await tabTo(page, '#answer-size');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Tab');
    await page.keyboard.type('gift wrap');
    await page.keyboard.press('Enter');
    await page.locator('[data-kind=message].assistant', { hasText: 'Noted your size.' }).waitFor();
    expect(await page.locator('[data-kind=question]').textContent()).toContain('Which size? → M');
    const answered = await parley.call('GET', `/api/v1/conversations/${id}/events?limit=100`);
    const submitted = answered.body.find((e: any) => e.type === 'AnswersSubmitted');
    expect(submitted.data.answers).toEqual({ size: 'M', note: 'gift wrap' });
    await screenshot(page, 'answer');
  });

  it('approves a tool call by keyboard only, and shows it run', async () => {
    parley.simulator.script([
      {
        when: { noToolResult: true },
        reply: { toolCalls: [{ name: 'CANCEL_ORDER', arguments: { orderId: 'A-7' }, id: 'call-cancel' }] },
      },
      { when: { toolResult: { name: 'CANCEL_ORDER' } }, reply: { text: 'Order A-7 is cancelled.' } },
    ]);
    const id = await start('CANCEL');
    expect((await send(id, 'cancel A-7')).body.status).toBe('WA');
    await open(id);
    await page.getByRole('button', { name: 'Approve CANCEL_ORDER' }).waitFor();
    await expectAccessible();
    await tabTo(page, 'button.approve');
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.textContent)).toBe(
      'Approve CANCEL_ORDER',
    );
    await page.keyboard.press('Enter');
    await page.locator('[data-kind=message].assistant', { hasText: 'Order A-7 is cancelled.' }).waitFor();
    const tool = page.locator('[data-kind=tool]');
    await expect(tool.textContent()).resolves.toMatch(/CANCEL_ORDER\s*ok · \d+ ms · approved/);
    await page.getByTestId('status').filter({ hasText: 'completed' }).waitFor();
    await screenshot(page, 'approval');
  });

  it('draws the usage chart from the recorded usage', async () => {
    const usage = async () => (await parley.call('GET', '/api/v1/usage?groupBy=agent')).body;
    // The last turns' final events may still be projecting: wait until no turn runs and the usage holds still.
    let expected = await usage();
    let settled = false;
    for (const deadline = Date.now() + 30_000; !settled && Date.now() < deadline;) {
      await page.waitForTimeout(300);
      const [now, counts] = [await usage(), (await parley.call('GET', '/api/v1/conversations/counts')).body];
      settled = JSON.stringify(now) === JSON.stringify(expected) && !counts.byStatus.RU && now[0]?.conversations === 7;
      expected = now;
    }
    // Said plainly when the read models never caught up, rather than as a chart that never came.
    expect(expected).toEqual([expect.objectContaining({ agent: 'HELPDESK', conversations: 7 })]);
    await page.goto(`${parley.url}/ui/usage`);
    await page.getByLabel('Group by').selectOption('agent');
    const chart = page.getByTestId('usage-chart');
    await page.waitForFunction(() =>
      (globalThis as any).document.querySelector('[data-testid=usage-chart][data-group=agent] canvas'),
    );
    const points = JSON.parse((await chart.getAttribute('data-points'))!);
    expect(points.labels).toEqual(['HELPDESK']);
    expect(points.series.inputTokens).toEqual([expected[0].inputTokens]);
    expect(points.series.outputTokens).toEqual([expected[0].outputTokens]);
    expect(expected[0].inputTokens).toBeGreaterThan(0);
    expect(points.series.turns).toEqual([expected[0].turns]);
    expect(points.series.latencyP95Ms).toEqual([expected[0].latencyP95Ms]);
    await page.getByLabel('Group by').selectOption('subject');
    await page.waitForFunction(() =>
      (globalThis as any).document.querySelector('[data-testid=usage-chart][data-group=subject] canvas'),
    );
    expect(JSON.parse((await chart.getAttribute('data-points'))!).labels).toEqual(['admin']);
    await page.getByLabel('Chart').selectOption('latency');
    await expectAccessible();
    await page.getByLabel('Group by').selectOption('day');
    await page.waitForFunction(() =>
      (globalThis as any).document.querySelector('[data-testid=usage-chart][data-group=day] canvas'),
    );
    const byDay = JSON.parse((await chart.getAttribute('data-points'))!);
    expect(byDay.series.inputTokens.reduce((a: number, b: number) => a + b, 0)).toBe(expected[0].inputTokens);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download CSV' }).click(),
    ]);
    const csv = await streamText(await download.createReadStream());
    expect(csv.split('\n')[0]).toMatch(/^day,.*inputTokens,outputTokens,estimatedCost/);
    await expectAccessible();
    await screenshot(page, 'usage');
  });

  it('shows that the hash chain holds, then names the revision of an event changed in the database', async () => {
    const id = await start('CHAT');
    await send(id, 'remember this');
    await open(id);
    await page.getByRole('button', { name: 'Verify' }).click();
    await expect(page.getByTestId('verify').textContent()).resolves.toMatch(/holds: \d+ events checked/);
    const [exported] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export JSONL' }).click(),
    ]);
    expect(exported.suggestedFilename()).toBe(`conversation-${id}.jsonl`);
    const lines = (await streamText(await exported.createReadStream()))
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    const stored = (await parley.call('GET', `/api/v1/conversations/${id}/events?limit=1000`)).body;
    expect(lines.map((e: any) => [e.revision, e.type, e.hash])).toEqual(
      stored.map((e: any) => [e.revision, e.type, e.hash]),
    );
    const db = new Client({ connectionString: parley.db.url });
    await db.connect();
    const forged = await db
      .query(
        `update es_events set data = jsonb_set(data, '{content}', '"forged"') where global_position =
           (select min(global_position) from es_events where stream_id = $1 and event_type = 'MessageRecorded')
         returning revision`,
        [`conversation-${id}`],
      )
      .then(({ rows }) => Number(rows[0].revision))
      .finally(() => db.end());
    await page.getByRole('button', { name: 'Verify' }).click();
    expect(forged).toBeGreaterThan(0);
    await page.getByText(`The hash chain breaks at revision ${forged}`).waitFor();
    await screenshot(page, 'verify');
  });

  it('shows the health of the service, and refuses it to a client without the role', async () => {
    await page.goto(`${parley.url}/ui/health`);
    await page.getByTestId('health').waitFor();
    expect(await page.getByRole('row', { name: /postgres/ }).textContent()).toContain('ok');
    // The simulator's provider has answered every turn above: its breaker is closed.
    expect(await page.getByRole('row', { name: 'SIM' }).textContent()).toContain('closed');
    await expectAccessible();
    await screenshot(page, 'health');
    await page.goto(`${parley.url}/ui/catalog`);
    await page.getByTestId('catalog').waitFor();
    await page.getByRole('heading', { name: 'Apply a bundle' }).waitFor();
    await page.getByLabel('YAML bundle').fill('agentTypes:\n  - { code: HUMN, description: Human in the loop }\n');
    await page.getByRole('button', { name: 'Dry run' }).click();
    await expect(page.getByTestId('diff').textContent()).resolves.toContain('HUMN');
    expect((await parley.call('GET', '/api/v1/catalog/agent-types/HUMN')).status).toBe(404);
    await expectAccessible();
    await screenshot(page, 'catalog-diff');
    await page.getByRole('button', { name: 'Confirm and apply' }).click();
    await page.getByText('Applied.').waitFor();
    expect((await parley.call('GET', '/api/v1/catalog/agent-types/HUMN')).body).toMatchObject({ code: 'HUMN' });

    const client = await openPage(browser);
    try {
      await signIn(client.page, parley.url, clientKey);
      await client.page.goto(`${parley.url}/ui/health`);
      await expect(client.page.getByTestId('refused').textContent()).resolves.toContain('FORBIDDEN');
      await screenshot(client.page, 'health-refused');
      await client.page.goto(`${parley.url}/ui/catalog`);
      await client.page.getByTestId('catalog').waitFor();
      expect(await client.page.getByRole('heading', { name: 'Apply a bundle' }).count()).toBe(0);
      expect(client.problems).toEqual([]);
    } finally {
      await client.page.context().close();
    }
  });
});

async function streamText(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}
