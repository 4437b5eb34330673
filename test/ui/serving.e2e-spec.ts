import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adminKeyFileOf } from '@parley/auth';
import { startParley, type ParleyUnderTest } from '../support/parley-app';

const get = (url: string, headers: Record<string, string> = {}) => fetch(url, { headers });

/** How the server hands out the dashboard's files, and who may read the development key. */
describe('the dashboard files at /ui', () => {
  let parley: ParleyUnderTest;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'parley-ui-'));
    await writeFile(adminKeyFileOf(dataDir), 'pk_dev_first_run_key\n', { mode: 0o600 });
    parley = await startParley('ui_serving', { NODE_ENV: 'development', PARLEY_DATA_DIR: dataDir });
  });
  afterAll(async () => {
    await parley?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('serves the page under a strict CSP, its hashed assets cached for good, and itself for every page path', async () => {
    const index = await get(`${parley.url}/ui`);
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(index.headers.get('cache-control')).toBe('no-cache');
    const csp = index.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-eval');
    const html = await index.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    const script = /src="(\/ui\/assets\/[^"]+\.js)"/.exec(html)![1];
    const asset = await get(parley.url + script);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');

    const page = await get(`${parley.url}/ui/conversations/01a21d56-3408-70a9-84bb-72469474f138`);
    expect(page.status).toBe(200);
    expect(await page.text()).toBe(html);
    const missing = await get(`${parley.url}/ui/assets/nope-123.js`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as any).error.code).toBe('NOT_FOUND');
    expect((await get(`${parley.url}/ui/..%2F..%2Fpackage.json`)).status).toBe(404);
  });

  it('offers the first run key in development to this machine only, never through a proxy', async () => {
    const local = await get(`${parley.url}/ui/dev-key`);
    expect(local.status).toBe(200);
    expect((await local.json()) as unknown).toEqual({ key: 'pk_dev_first_run_key' });
    for (const proxied of <Record<string, string>[]>[
      { 'x-forwarded-for': '203.0.113.9' },
      { forwarded: 'for=203.0.113.9' },
      { 'x-real-ip': '203.0.113.9' },
      { via: '1.1 proxy' },
    ])
      expect((await get(`${parley.url}/ui/dev-key`, proxied)).status).toBe(404);
  });

  it('never offers a key outside development', async () => {
    const production = await startParley('ui_serving_prod', { NODE_ENV: 'test', PARLEY_DATA_DIR: dataDir });
    try {
      expect((await get(`${production.url}/ui/dev-key`)).status).toBe(404);
    } finally {
      await production.close();
    }
  });

  it('tells a key who it is, and gives the status page to auditors and admins only', async () => {
    expect((await parley.call('GET', '/api/v1/whoami')).body).toEqual({ subject: 'admin', roles: ['admin'] });
    const status = await parley.call('GET', '/api/v1/status');
    expect(status.status).toBe(200);
    expect(status.body.dependencies).toMatchObject({ postgres: 'ok', redis: 'ok', nats: 'ok' });
    expect(status.body.queueDepth).toEqual(expect.objectContaining({}));
    expect(typeof status.body.runningTurns).toBe('number');
    const client = (await parley.call('POST', '/api/v1/keys', { subject: 'shop', roles: ['client'] })).body.key;
    const auth = { authorization: `Bearer ${client}` };
    expect((await parley.call('GET', '/api/v1/whoami', undefined, auth)).body).toEqual({
      subject: 'shop',
      roles: ['client'],
    });
    const refused = await parley.call('GET', '/api/v1/status', undefined, auth);
    expect([refused.status, refused.body.error.code]).toEqual([403, 'FORBIDDEN']);
    expect((await fetch(`${parley.url}/api/v1/status`)).status).toBe(401);
  });
});
