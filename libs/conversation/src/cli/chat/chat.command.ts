import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { adminKeyFileOf } from '@parley/auth';
import { httpTransport, ParleyClient } from '@parley/client';
import { loadConfig } from '@parley/config';
import type { Command } from 'commander';
import { ChatSession, type ChatIO } from './chat-session';

interface ChatFlags {
  url?: string;
  key?: string;
  keyFile?: string;
  agent?: string;
  action?: string;
}

/**
 * `parley chat`: an interactive chat with a running Parley over HTTP and SSE, through @parley/client. The terminal side
 * is only this: readline lines in (queued, so piped input is never lost), text out, Ctrl-C.
 */
export function registerChatCommand(program: Command): void {
  program
    .command('chat')
    .description('chat with an agent of a running Parley: streamed replies, tools, questions, approvals')
    .option('--url <url>', 'the Parley to talk to (default: http://localhost:<PORT>)')
    .option('--key <key>', 'an API key (default: the development key in <PARLEY_DATA_DIR>/admin.key)')
    .option('--key-file <file>', 'read the API key from this file')
    .option('--agent <code>', 'the agent (default: pick from a list)')
    .option('--action <code>', 'the action (default: pick from a list)')
    .action(async (flags: ChatFlags) => {
      const { url, key } = await connection(flags);
      const io = terminal();
      const session = new ChatSession(new ParleyClient(httpTransport({ url, apiKey: key })), io, flags);
      const onSigint = () => {
        session.interrupt();
        // Leaving: a command still waiting for its turn must not hold the terminal.
        if (session.isEnded) setTimeout(() => process.exit(130), 500).unref();
      };
      io.readline.on('SIGINT', onSigint);
      process.on('SIGINT', onSigint);
      try {
        await session.run();
      } finally {
        process.off('SIGINT', onSigint);
        io.readline.close();
      }
      if (session.isEnded) process.exitCode = 130;
    });
}

/**
 * Where a command line client finds a running Parley: `--url` (default http://localhost:<PORT>),
 * and its key from `--key`, `--key-file`, or the development key file `<PARLEY_DATA_DIR>/admin.key`.
 */
export async function connection(flags: {
  url?: string;
  key?: string;
  keyFile?: string;
}): Promise<{ url: string; key: string }> {
  const needsConfig = !flags.url || (!flags.key && !flags.keyFile);
  const config = needsConfig ? loadConfig() : null;
  const url = (flags.url ?? `http://localhost:${config!.http.port}`).replace(/\/+$/, '');
  if (flags.key) return { url, key: flags.key };
  const file = flags.keyFile ?? adminKeyFileOf(config!.database.dataDir);
  const key = await readFile(file, 'utf8').then(
    (text) => text.trim(),
    () => {
      throw new Error(`No API key: pass --key or --key-file, or start Parley once (npm start) to create ${file}`);
    },
  );
  return { url, key };
}

function terminal(): ChatIO & { readline: ReturnType<typeof createInterface> } {
  const readline = createInterface({ input: process.stdin, output: process.stdout, terminal: process.stdin.isTTY });
  const lines: string[] = [];
  let waiting: ((line: string | null) => void) | null = null;
  let closed = false;
  // Piped input is not echoed: the answer is written after its prompt, so the screen reads as a transcript.
  const echo = !process.stdin.isTTY;
  readline.on('line', (line) => {
    if (waiting) {
      const wake = waiting;
      waiting = null;
      if (echo) process.stdout.write(`${line}\n`);
      wake(line);
    } else lines.push(line);
  });
  readline.on('close', () => {
    closed = true;
    waiting?.(null);
    waiting = null;
  });
  return {
    readline,
    write: (text) => void process.stdout.write(text),
    ask: (prompt) => {
      process.stdout.write(prompt);
      if (lines.length > 0) {
        // Typed ahead: the answer shows after the prompt it answers.
        const line = lines.shift()!;
        process.stdout.write(`${line}\n`);
        return Promise.resolve(line);
      }
      if (closed) return Promise.resolve(null);
      return new Promise((resolve) => (waiting = resolve));
    },
  };
}
