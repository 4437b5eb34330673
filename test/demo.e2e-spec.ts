import { spawn } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..');

/** Runs `npm run demo`'s script as a newcomer would (no model configured: the simulator), to its end. */
function runDemo(): Promise<{ code: number | null; lines: string[]; stderr: string }> {
  const env = { ...process.env };
  for (const name of ['OPENAI_API_KEY', 'PARLEY_DEMO_BASE_URL', 'PARLEY_DEMO_MODEL']) delete env[name];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-r', './tools/register.js', 'tools/demo.ts'], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += String(d)));
    child.stderr.on('data', (d) => (stderr += String(d)));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, lines: stdout.split('\n'), stderr }));
  });
}

describe('npm run demo', () => {
  it('plays the scripted conversation: a streamed reply, a tool call, a question answered, usage and cost', async () => {
    const { code, lines, stderr } = await runDemo();
    expect({ code, stderr: stderr.includes('demo failed') ? stderr : '' }).toEqual({ code: 0, stderr: '' });

    const at = (line: string | RegExp) => {
      const i = lines.findIndex((l) => (typeof line === 'string' ? l === line : line.test(l)));
      if (i < 0) throw new Error(`no line ${String(line)} in:\n${lines.join('\n')}`);
      return i;
    };
    // Each reply on one line, after what the turn did before it, in the order it happened.
    const order = [
      at('you> Hello! What can you help me with?'),
      at(
        'parley> Hello! You said: "Hello! What can you help me with?". I am the Parley simulator, streaming this reply token by token.',
      ),
      at('you> Where is my order A-1001?'),
      at('  tool call  ORDER_STATUS({"orderId":"A-1001"})'),
      at(/^ {2}tool result ORDER_STATUS in \d+ ms: \{"orderId":"A-1001","status":"shipped"/),
      at('parley> Your order A-1001 has shipped; it should arrive on 2026-01-16.'),
      at('parley asks: How urgent is it? [low / high]'),
      at('you answer> high'),
      at('parley> Thank you. I have opened your ticket (priority: high).'),
      at(/^5 model calls, \d+ input \+ \d+ output tokens, estimated cost \$0\.\d{6}$/),
    ];
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(lines.filter((l) => /^ {2}turn: CO, \d+ in \/ \d+ out tokens, cost \$0\.\d{6}$/.test(l))).toHaveLength(3);
  }, 90_000);
});
