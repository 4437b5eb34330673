import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DomainError } from '@parley/core';
import { SubjectRateLimiter } from './rate-limiter';

const run = promisify(execFile);
const ROOT = join(__dirname, '../../../..');
const REDIS_URL = process.env.PARLEY_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

// One worker process: counts how many of `attempts` requests of subject "svc" the limiter lets through.
const WORKER = `
const { SubjectRateLimiter } = require('./libs/auth/src/limits/rate-limiter.ts');
const { connectedRedis } = require('./libs/platform/src/redis/redis-client.ts');
(async () => {
  const [url, prefix, attempts, limit] = process.argv.slice(1);
  const redis = await connectedRedis(url);
  const limiter = new SubjectRateLimiter({ redis, prefix, perMinute: Number(limit) });
  const result = { allowed: 0, limited: 0, retryAfterSeconds: null };
  for (let i = 0; i < Number(attempts); i++) {
    try { await limiter.consume('svc'); result.allowed++; }
    catch (err) { if (err.code !== 'RATE_LIMITED') throw err; result.limited++; result.retryAfterSeconds = err.details.retryAfterSeconds; }
  }
  await redis.quit();
  process.stdout.write(JSON.stringify(result));
})().catch((err) => { process.stderr.write(String(err && err.stack || err)); process.exit(1); });
`;

async function worker(prefix: string, attempts: number, limit: number) {
  const { stdout } = await run(
    process.execPath,
    ['-r', './tools/register.js', '-e', WORKER, REDIS_URL, prefix, String(attempts), String(limit)],
    { cwd: ROOT, timeout: 25_000 },
  );
  return JSON.parse(stdout) as { allowed: number; limited: number; retryAfterSeconds: number | null };
}

describe('SubjectRateLimiter', () => {
  it('holds one limit across two processes sharing Redis', async () => {
    const prefix = `test-${randomBytes(4).toString('hex')}`;

    const [a, b] = await Promise.all([worker(prefix, 8, 10), worker(prefix, 8, 10)]);

    expect(a.allowed + b.allowed).toBe(10);
    expect(a.limited + b.limited).toBe(6);
    const retry = a.retryAfterSeconds ?? b.retryAfterSeconds;
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
  }, 30_000);

  it('limits each subject on its own, in memory when there is no Redis', async () => {
    const limiter = new SubjectRateLimiter({ redis: null, prefix: 'mem', perMinute: 2 });
    await limiter.consume('alice');
    await limiter.consume('alice');
    await limiter.consume('bob');

    const refused = await limiter.consume('alice').catch((err: unknown) => err);

    expect(refused).toBeInstanceOf(DomainError);
    expect(refused).toMatchObject({ code: 'RATE_LIMITED', details: { limitPerMinute: 2 } });
    expect((refused as DomainError).details?.retryAfterSeconds).toBeGreaterThanOrEqual(1);
  });
});
