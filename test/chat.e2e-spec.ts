import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import type { EventStore } from '@parley/event-store';
import { EVENT_STORE } from '@parley/event-store';
import { until } from '@parley/testing';
import { ADMIN_KEY, startParley, type ParleyUnderTest } from './support/parley-app';
import { testCatalog } from './support/test-catalog';

/** A terminal user at `parley chat`: writes lines to its stdin, reads what it prints. */
class ChatUser {
  readonly child: ChildProcess;
  private out = '';
  private read = 0;
  /** Each piece of stdout as it came. */
  readonly chunks: string[] = [];

  constructor(url: string, flags: string[] = []) {
    this.child = spawn(
      process.execPath,
      ['-r', './tools/register.js', 'apps/cli/src/main.ts', 'chat', '--url', url, '--key', ADMIN_KEY, ...flags],
      { cwd: join(__dirname, '..'), stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, LOG_LEVEL: 'silent' } },
    );
    this.child.stdout!.on('data', (c: Buffer) => {
      this.out += String(c);
      this.chunks.push(String(c));
    });
    this.child.stderr!.on('data', (c: Buffer) => (this.out += String(c)));
  }

  get output(): string {
    return this.out;
  }

  /** Waits until `text` is printed past what was read, and returns what came up to it. */
  async sees(text: string, ms = 15_000): Promise<string> {
    const deadline = Date.now() + ms;
    for (;;) {
      const at = this.out.indexOf(text, this.read);
      if (at >= 0) {
        const seen = this.out.slice(this.read, at + text.length);
        this.read = at + text.length;
        return seen;
      }
      if (this.child.exitCode !== null || Date.now() > deadline)
        throw new Error(`"${text}" was not printed; the chat printed:\n${this.out}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Which of `chunks` holds the output's character at `offset`. */
  chunkAt(offset: number): number {
    let end = 0;
    return this.chunks.findIndex((c) => (end += c.length) > offset);
  }

  type(line: string): void {
    this.child.stdin!.write(`${line}\n`);
  }
}

describe('parley chat', () => {
  let parley: ParleyUnderTest;
  let store: EventStore;
  let user: ChatUser | undefined;
  beforeAll(async () => {
    parley = await startParley(
      'chat_cli',
      {},
      (url) => {
        const catalog = testCatalog(url);
        catalog.actions.push({
          ...catalog.actions[0],
          code: 'ORDERS',
          description: 'Orders, with questions and approvals',
          askUserQuestion: true,
          tools: ['ORDER_STATUS', 'CANCEL_ORDER'],
        } as (typeof catalog.actions)[number]);
        return catalog;
      },
      undefined,
      { latencyMs: 15 },
    );
    store = parley.app.get(EVENT_STORE);
  });
  afterAll(async () => {
    if (user && user.child.exitCode === null) {
      user.child.kill('SIGKILL');
      await once(user.child, 'exit');
    }
    await parley.close();
  });

  const typesOf = async (id: string) => (await store.readStream(`conversation-${id}`)).map((e) => e.type);

  it('runs a full turn: picks agent and action, streams, shows a tool, answers a question, asks an approval, shows the cost', async () => {
    parley.simulator.script([
      { when: { callCount: 1 }, reply: { toolCalls: [{ name: 'ORDER_STATUS', arguments: { orderId: 'A-1001' } }] } },
      {
        when: { callCount: 2 },
        reply: {
          toolCalls: [
            {
              name: 'AskUserQuestion',
              arguments: {
                questions: [{ key: 'reason', question: 'Why cancel it?', options: ['Too late', 'Changed my mind'] }],
              },
            },
          ],
        },
      },
      {
        when: { callCount: 3 },
        reply: { toolCalls: [{ name: 'CANCEL_ORDER', arguments: { orderId: 'A-1001' }, id: 'call_cancel' }] },
      },
      { reply: { text: 'Your order A-1001 is cancelled because it came too late.' } },
    ]);
    user = new ChatUser(parley.url);
    const agents = await user.sees('agent [1-');
    expect(agents).toContain('1) HELPDESK — Helpdesk');
    user.type('1');
    const actions = await user.sees('action [1-');
    expect(actions).toMatch(/\d\) ORDERS — Orders, with questions and approvals/);
    user.type('orders');
    const started = await user.sees('you> ');
    const id = /Conversation ([0-9a-f-]{36}) \(agent HELPDESK, action ORDERS\)/.exec(started)![1];

    user.type('Cancel my order A-1001, it is late');
    const tool = await user.sees('? Why cancel it?');
    expect(tool).toMatch(/\[tool\] ORDER_STATUS \{"orderId":"A-1001"\}\n\[result\] \{.*"orderId":"A-1001"/);
    await user.sees('  1) Too late\n  2) Changed my mind\nanswer [1-2 or your own answer]: ');
    user.type('1');

    const approval = await user.sees('Allow it? [y/n] ');
    expect(approval).toContain('[answers] {"reason":"Too late"}');
    expect(approval).toContain('The model wants to run CANCEL_ORDER {"orderId":"A-1001"}');
    expect(await typesOf(id)).not.toContain('ToolCallApproved');
    user.type('y');

    const end = await user.sees('you> ');
    expect(end).toMatch(/\[tool\] CANCEL_ORDER \{"orderId":"A-1001"\}\n\[result\] /);
    expect(end).toContain('parley> Your order A-1001 is cancelled because it came too late.\n');
    const cost = /\[cost \$(\d+\.\d{6}) · (\d+) in \/ (\d+) out tokens\]/.exec(end);
    expect(cost).not.toBeNull();
    expect(Number(cost![1])).toBeGreaterThan(0);
    expect(Number(cost![3])).toBeGreaterThan(0);
    // Streamed: the reply's first and last words reached the terminal in different writes.
    const from = user.output.indexOf('parley> Your order A-1001');
    const to = user.output.indexOf('came too late.', from) + 'came too late.'.length - 1;
    expect(user.chunkAt(to)).toBeGreaterThan(user.chunkAt(from));
    // The reply is printed once, from the stream, and the cost comes after it.
    expect(end.split('is cancelled because').length).toBe(2);
    expect(end.indexOf('[cost')).toBeGreaterThan(end.indexOf('came too late.'));

    const events = await store.readStream(`conversation-${id}`);
    const answered = events.find((e) => e.type === 'AnswersSubmitted')!.data as { answers: unknown };
    expect(answered.answers).toEqual({ reason: 'Too late' });
    expect(events.map((e) => e.type)).toEqual(
      expect.arrayContaining(['ToolCallApproved', 'ToolCallCompleted', 'ConversationCompleted']),
    );
    expect(parley.simulator.requests).toHaveLength(4);

    // Ctrl-C during a turn kills it through the kill route; a new conversation follows; Ctrl-C at the prompt leaves.
    parley.simulator.script([{ reply: { hang: true } }]);
    const before = parley.simulator.requests.length;
    user.type('this one hangs');
    await until(async () => parley.simulator.requests.length > before, 10_000);
    user.child.kill('SIGINT');
    const killed = await user.sees('you> ');
    expect(killed).toContain('^C: killing the turn');
    expect(killed).toContain('The turn was killed; a new conversation starts.');
    const next = /Conversation ([0-9a-f-]{36})/.exec(killed)![1];
    expect(next).not.toBe(id);
    expect(await typesOf(id)).toContain('ConversationKilled');

    user.child.kill('SIGINT');
    const [code] = await once(user.child, 'exit');
    expect(code).toBe(130);
    if (process.env.SHOW_CHAT) process.stdout.write(user.output);
  }, 60_000);
});

describe('parley chat with a turn longer than the wait', () => {
  let parley: ParleyUnderTest;
  let user: ChatUser | undefined;
  beforeAll(async () => {
    parley = await startParley('chat_cli_202', { MAX_WAIT_MS: '200' }, undefined, undefined, { latencyMs: 40 });
  });
  afterAll(async () => {
    if (user && user.child.exitCode === null) {
      user.child.kill('SIGKILL');
      await once(user.child, 'exit');
    }
    await parley.close();
  });

  it('follows the turn on the stream after the 202 and ends it with its cost', async () => {
    const text = 'This reply takes well over the wait to stream, one small chunk at a time, to the very end.';
    parley.simulator.script([{ reply: { text } }]);
    user = new ChatUser(parley.url, ['--agent', 'HELPDESK', '--action', 'CHAT']);
    await user.sees('you> ');
    user.type('Tell me something long');
    const seen = await user.sees('you> ');
    expect(seen).toContain(`parley> ${text}\n(the turn outlived the wait: followed on the stream)\n[cost $`);
    const cost = /\[cost \$(\d+\.\d{6}) · (\d+) in \/ (\d+) out tokens\]/.exec(seen);
    expect(Number(cost![1])).toBeGreaterThan(0);
    expect(seen.indexOf('[cost')).toBeGreaterThan(seen.indexOf('the very end.'));
    user.child.stdin!.end();
    const [code] = await once(user.child, 'exit');
    expect(code).toBe(0);
  }, 30_000);
});
