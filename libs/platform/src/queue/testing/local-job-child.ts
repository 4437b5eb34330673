import { Redis } from 'ioredis';
import { BullMqJobQueue } from '../bullmq-job-queue';

/**
 * A process that starts a job of its own and never finishes it, for the test that kills it:
 *   node -r ./tools/register.js libs/platform/src/queue/testing/local-job-child.ts <prefix> <lockMs> <jobId>
 * Prints "started" once the job runs here and the queue holds its delayed copy.
 */
async function main(): Promise<void> {
  const [prefix, lockMs, jobId] = process.argv.slice(2);
  const connection = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
  const queue = new BullMqJobQueue(connection, { prefix, lockDurationMs: Number(lockMs) });
  await queue.process('turns', () => new Promise<void>(() => undefined), { concurrency: 4 });
  // Resolves once the queue holds the job, which by then runs here.
  await queue.enqueue('turns', jobId, {}, { preferLocal: true });
  process.stdout.write('started\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
