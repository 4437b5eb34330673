import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Polls `check` every `everyMs` until it holds; fails with 'condition not met in time' once
 * `timeoutMs` have passed without it.
 */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(everyMs);
  }
}
