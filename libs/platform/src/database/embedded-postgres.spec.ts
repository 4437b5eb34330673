import { startEmbeddedPostgresForTest } from '@parley/testing';
import { Client } from 'pg';

const show = async (url: string, setting: string): Promise<string> => {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<Record<string, string>>(`show ${setting}`)).rows[0][setting];
  } finally {
    await client.end();
  }
};

describe('the embedded PostgreSQL (PGlite)', () => {
  it('takes its shared_buffers from EMBEDDED_SHARED_BUFFERS_MB, PostgreSQL’s 128 MB when unset', async () => {
    for (const [options, expected] of [
      [{ sharedBuffersMb: 48 }, '48MB'],
      [{}, '128MB'],
    ] as const) {
      const pg = await startEmbeddedPostgresForTest(options);
      try {
        expect(await show(pg.url, 'shared_buffers')).toBe(expected);
      } finally {
        await pg.stop();
      }
    }
  }, 60_000);
});
