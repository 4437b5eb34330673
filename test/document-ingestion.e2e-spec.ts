import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Collections } from '@parley/knowledge';
import { until } from '@parley/testing';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { Pool } from 'pg';
import { ADMIN_KEY, startCommandApi, startParley, type ParleyUnderTest } from './support/parley-app';
import { testCatalog } from './support/test-catalog';

const MAX_BYTES = 65_536;

/** The test catalog plus an embedding model, a vector store and the FAQ collection. */
function catalog(simUrl: string) {
  const base = testCatalog(simUrl);
  return {
    ...base,
    models: [
      ...base.models,
      { code: 'EMB', description: 'Embeddings', llmModelName: 'sim-embed', llmProvider: 'SIM', modelType: 'embedding' },
    ],
    vectorStores: [{ code: 'KB', description: 'Knowledge base', llmEmbeddingModel: 'EMB' }],
    documentCollections: [{ code: 'FAQ', description: 'FAQ', llmVectorStore: 'KB', collectionName: 'faq' }],
  };
}

/** A real Markdown file: headings, paragraphs of several sentences, a list. */
const MARKDOWN = [
  '# Returns and refunds',
  '',
  ...Array.from({ length: 8 }, (_, p) =>
    [
      `## Section ${p + 1}`,
      '',
      Array.from(
        { length: 5 },
        (_, s) =>
          `Paragraph ${p + 1} sentence ${s + 1} explains how parcel ${p * 5 + s} is handled by the returns desk in Lisbon.`,
      ).join(' '),
      '',
    ].join('\n'),
  ),
  'Damaged goods are refunded within fourteen days of the claim.',
  '',
].join('\n');

/** A real PDF: lines of text drawn on two pages with a standard font. */
async function pdfOf(lines: string[][]): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (const pageLines of lines) {
    const page = doc.addPage();
    pageLines.forEach((line, i) => page.drawText(line, { x: 50, y: 750 - i * 18, font, size: 12 }));
  }
  return doc.save();
}

function form(file: { name: string; bytes: Uint8Array | string; type?: string }, fields: Record<string, string> = {}) {
  const body = new FormData();
  for (const [k, v] of Object.entries(fields)) body.append(k, v);
  body.append('file', new Blob([file.bytes], { type: file.type ?? 'application/octet-stream' }), file.name);
  return body;
}

describe('Document ingestion: routes, jobs, chunks (simulator embeddings, PostgreSQL, Redis)', () => {
  let parley: ParleyUnderTest;
  let pool: Pool;
  let clientKey: string;
  let dir: string;

  const upload = async (body: FormData, query = '', key = ADMIN_KEY) => {
    const res = await fetch(`${parley.url}/api/v1/collections/FAQ/documents${query}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body,
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const document = async (id: string) => (await parley.call('GET', `/api/v1/collections/FAQ/documents/${id}`)).body;
  const settled = async (id: string) => {
    await until(async () => ['ready', 'failed'].includes((await document(id)).status), 20_000, 50);
    return document(id);
  };
  const chunkRows = async (id: string) =>
    (
      await pool.query<{ id: string; text: string; tokens: number; metadata: Record<string, unknown> }>(
        `select id, text, tokens, metadata from kn_chunks where collection = 'faq' and document_id = $1
         order by (metadata->>'chunkIndex')::int`,
        [id],
      )
    ).rows;
  /** What a refused request must leave as it was. */
  const snapshot = async () => ({
    listed: (await parley.call('GET', '/api/v1/collections/FAQ/documents')).body,
    texts: (await pool.query('select count(*)::int as n from kn_document_texts')).rows[0].n,
    chunks: (await pool.query('select count(*)::int as n from kn_chunks')).rows[0].n,
  });

  beforeAll(async () => {
    parley = await startParley(
      'ingestion',
      {
        INGEST_MAX_BYTES: String(MAX_BYTES),
        CHUNK_TOKENS: '64',
        CHUNK_OVERLAP: '8',
        LLM_RETRY_COUNT: '0',
        LLM_BREAKER_COOLDOWN_MS: '10',
      },
      catalog,
    );
    pool = new Pool({ connectionString: parley.db.url, max: 2 });
    const created = await parley.call('POST', '/api/v1/keys', { subject: 'alice', roles: ['client'] });
    clientKey = created.body.key;
    dir = await mkdtemp(join(tmpdir(), 'parley-docs-'));
  });
  afterAll(async () => {
    await pool.end();
    await parley.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('ingests a real Markdown upload as a queued job: 202, then ready with its chunks embedded, searchable and counted', async () => {
    const res = await upload(
      form({ name: 'returns.md', bytes: MARKDOWN, type: 'text/markdown' }, { metadata: '{"lang":"en","year":2026}' }),
    );
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({
      collection: 'FAQ',
      documentId: expect.any(String),
      title: 'returns.md',
      status: 'queued',
      sourceName: 'returns.md',
      mediaType: 'text/markdown',
      bytes: Buffer.byteLength(MARKDOWN),
      ingestedBy: 'admin',
    });
    const id = res.body.documentId as string;
    const doc = await settled(id);
    expect(doc).toMatchObject({ status: 'ready', error: null });
    expect(doc.chunkCount).toBeGreaterThan(4);

    const rows = await chunkRows(id);
    expect(rows.map((r) => r.id)).toEqual(rows.map((_, i) => `${id}#${i}`));
    for (const [i, r] of rows.entries()) {
      expect(r.metadata).toEqual({ lang: 'en', year: 2026, title: 'returns.md', chunkIndex: i });
      expect(r.tokens).toBeLessThanOrEqual(64);
    }
    expect(doc.tokenCount).toBe(rows.reduce((n, r) => n + r.tokens, 0));
    expect(rows.map((r) => r.text).join(' ')).toContain('Damaged goods are refunded within fourteen days');

    const found = await parley.app.get(Collections).search('FAQ', 'damaged goods refunded within fourteen days');
    expect(found.hits[0].chunk).toMatchObject({ documentId: id, metadata: { title: 'returns.md' } });
    expect(found.hits[0].chunk.text).toContain('Damaged goods');

    const listed = await parley.call('GET', '/api/v1/collections/FAQ/documents', undefined, {
      authorization: `Bearer ${clientKey}`,
    });
    expect(listed.status).toBe(200);
    expect(listed.body.documents.map((d: { documentId: string }) => d.documentId)).toContain(id);
    const counts = await parley.call('GET', '/api/v1/collections/FAQ');
    expect(counts.body.counts.chunks).toBe(listed.body.counts.chunks);
    expect(counts.body.counts.documents).toBe(listed.body.documents.length);
  });

  it('ingests a real PDF made here, waiting for it with ?wait=true', async () => {
    const bytes = await pdfOf([
      ['Parley PDF handbook.', 'The warehouse in Porto ships orders every weekday morning.'],
      ['Page two says invoices are emailed after dispatch.'],
    ]);
    const res = await upload(
      form({ name: 'handbook.pdf', bytes, type: 'application/pdf' }, { documentId: 'handbook', title: 'Handbook' }),
      '?wait=true',
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      documentId: 'handbook',
      title: 'Handbook',
      status: 'ready',
      mediaType: 'application/pdf',
    });
    const text = (await chunkRows('handbook')).map((r) => r.text).join(' ');
    expect(text).toContain('The warehouse in Porto ships orders every weekday morning.');
    expect(text).toContain('invoices are emailed after dispatch');
  });

  it('re-ingesting a documentId replaces its chunks: same ids overwritten, those past the new count removed', async () => {
    const long = Array.from({ length: 40 }, (_, i) => `Policy line ${i} covers warranty case ${i * 3}.`).join(' ');
    const first = await parley.call('POST', '/api/v1/collections/FAQ/documents?wait=true', {
      documentId: 'policy',
      title: 'Policy',
      text: long,
      metadata: { v: 1 },
    });
    expect(first.status).toBe(200);
    expect(first.body.mediaType).toBe('text/plain');
    const before = await chunkRows('policy');
    expect(before.length).toBeGreaterThan(2);

    const second = await parley.call('POST', '/api/v1/collections/FAQ/documents?wait=true', {
      documentId: 'policy',
      title: 'Policy v2',
      text: 'Warranty claims now go through the online form.',
      metadata: { v: 2 },
    });
    expect(second.body).toMatchObject({ status: 'ready', chunkCount: 1, title: 'Policy v2' });
    expect(await chunkRows('policy')).toEqual([
      expect.objectContaining({
        id: 'policy#0',
        text: 'Warranty claims now go through the online form.',
        metadata: { v: 2, title: 'Policy v2', chunkIndex: 0 },
      }),
    ]);
    expect((await pool.query(`select count(*)::int as n from kn_document_texts`)).rows[0].n).toBe(0);
  });

  it('refuses each bad file with a clear error naming it, and leaves the collection as it was', async () => {
    const before = await snapshot();
    const blank = await pdfOf([[]]);
    const cases: [FormData, number, string, RegExp][] = [
      [form({ name: 'empty.md', bytes: '' }), 400, 'VALIDATION_FAILED', /empty\.md.*empty/],
      [form({ name: 'blank.txt', bytes: ' \n\n \t' }), 400, 'VALIDATION_FAILED', /blank\.txt.*no text/],
      [
        form({ name: 'notes.docx', bytes: 'PK\u0003\u0004' }),
        400,
        'VALIDATION_FAILED',
        /notes\.docx.*not a supported type/,
      ],
      [form({ name: 'huge.txt', bytes: 'a '.repeat(MAX_BYTES) }), 413, 'PAYLOAD_TOO_LARGE', /huge\.txt/],
      [
        form({ name: 'broken.pdf', bytes: '%PDF-1.4\nthis is not a pdf' }),
        400,
        'VALIDATION_FAILED',
        /broken\.pdf.*not a readable PDF/,
      ],
      [form({ name: 'scan.pdf', bytes: blank }), 400, 'VALIDATION_FAILED', /scan\.pdf.*no text/],
      [
        form({ name: 'latin1.txt', bytes: new Uint8Array([0x63, 0x61, 0x66, 0xe9]) }),
        400,
        'VALIDATION_FAILED',
        /latin1\.txt.*UTF-8/,
      ],
    ];
    for (const [body, status, code, message] of cases) {
      const res = await upload(body);
      expect({ status: res.status, code: res.body.error.code }).toEqual({ status, code });
      expect(res.body.error.message).toMatch(message);
    }
    // JSON: field paths, the size limit, an unknown collection.
    const bad = await parley.call('POST', '/api/v1/collections/FAQ/documents', {
      documentId: 'no spaces/allowed',
      text: '',
      metadata: { nested: { a: 1 }, chunkIndex: 3 },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.problems.map((p: { path: string }) => p.path).sort()).toEqual(
      ['documentId', 'metadata.chunkIndex', 'metadata.nested', 'text', 'title'].sort(),
    );
    const large = await parley.call('POST', '/api/v1/collections/FAQ/documents', {
      title: 'Big',
      text: 'b'.repeat(MAX_BYTES + 1),
    });
    expect(large.status).toBe(413);
    const unknown = await parley.call('POST', '/api/v1/collections/NOPE/documents', { title: 'T', text: 'Some text.' });
    expect(unknown.status).toBe(404);
    expect((await parley.call('GET', '/api/v1/collections/NOPE/documents')).status).toBe(404);
    // Writing documents is for admins.
    const asClient = await upload(form({ name: 'a.txt', bytes: 'Some text.' }), '', clientKey);
    expect(asClient.status).toBe(403);
    expect(await snapshot()).toEqual(before);
  });

  it('a job that keeps failing (provider down) is retried, then the document is failed with its error and keeps its chunks', async () => {
    const first = await parley.call('POST', '/api/v1/collections/FAQ/documents?wait=true', {
      documentId: 'kept',
      title: 'Kept',
      text: 'The first version stays searchable.',
    });
    expect(first.body.status).toBe('ready');
    const embeddingCalls = () => parley.simulator.requests.filter((r) => r.path === '/v1/embeddings').length;
    const callsBefore = embeddingCalls();
    parley.simulator.script([{ reply: { fail: { status: 503, message: 'embeddings are down' } } }]);
    try {
      const res = await parley.call('POST', '/api/v1/collections/FAQ/documents', {
        documentId: 'kept',
        title: 'Kept v2',
        text: 'The second version never gets embedded.',
      });
      expect(res.status).toBe(202);
      const doc = await settled('kept');
      expect(doc).toMatchObject({ status: 'failed', chunkCount: 1 });
      expect(doc.error).toMatch(/down|503/);
      expect(embeddingCalls() - callsBefore).toBeGreaterThanOrEqual(2);
    } finally {
      parley.simulator.script([]);
    }
    expect((await chunkRows('kept')).map((r) => r.text)).toEqual(['The first version stays searchable.']);
  }, 60_000);

  it("a server without the worker queues the job in Redis, where another app's worker fetches and runs it", async () => {
    const front = await startCommandApi(parley.config);
    try {
      const res = await front.call('POST', '/api/v1/collections/FAQ/documents?wait=true&timeoutMs=15000', {
        documentId: 'elsewhere',
        title: 'Elsewhere',
        text: 'Ingested by the worker of another process.',
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: 'ready', chunkCount: 1 });
    } finally {
      await front.close();
    }
    expect((await chunkRows('elsewhere')).map((r) => r.id)).toEqual(['elsewhere#0']);
  });

  it('DELETE removes the chunks and the row; 404 after', async () => {
    await parley.call('POST', '/api/v1/collections/FAQ/documents?wait=true', {
      documentId: 'gone',
      title: 'Gone',
      text: 'Bye.',
    });
    expect(await chunkRows('gone')).toHaveLength(1);
    const removed = await parley.call('DELETE', '/api/v1/collections/FAQ/documents/gone');
    expect(removed.status).toBe(204);
    expect(await chunkRows('gone')).toEqual([]);
    expect((await parley.call('GET', '/api/v1/collections/FAQ/documents/gone')).status).toBe(404);
    expect((await parley.call('DELETE', '/api/v1/collections/FAQ/documents/gone')).status).toBe(404);
  });

  it('deleting a collection from the catalog removes its documents and chunks, also those a running job writes; recreated, it starts empty', async () => {
    const catalogPath = '/api/v1/catalog/document-collections';
    const collection = { code: 'GONE', description: 'Gone soon', llmVectorStore: 'KB', collectionName: 'gone' };
    // TWIN keeps its chunks under FAQ's name: deleting it leaves FAQ's chunks alone.
    const twin = { code: 'TWIN', description: 'Shares faq', llmVectorStore: 'KB', collectionName: 'faq' };
    for (const c of [collection, twin]) expect((await parley.call('POST', catalogPath, c)).status).toBe(201);
    const add = (code: string, documentId: string, text: string, query = '?wait=true') =>
      parley.call('POST', `/api/v1/collections/${code}/documents${query}`, { documentId, title: documentId, text });
    const rowsOf = async (name: string) =>
      (await pool.query<{ n: number }>(`select count(*)::int as n from kn_chunks where collection = $1`, [name]))
        .rows[0].n;
    const registered = async (code: string) =>
      (
        await pool.query<{ n: number }>(
          `select (select count(*) from kn_documents where collection = $1)::int
                + (select count(*) from kn_document_texts where collection = $1)::int as n`,
          [code],
        )
      ).rows[0].n;
    for (const id of ['one', 'two'])
      expect(
        (await add('GONE', id, `Document ${id} of the doomed collection. It has two sentences.`)).body,
      ).toMatchObject({
        status: 'ready',
      });
    expect((await add('TWIN', 'twin-doc', 'A document ingested through the twin.')).body.status).toBe('ready');
    const faqChunks = await rowsOf('faq');
    expect(await rowsOf('gone')).toBe(2);

    // Referenced by an action, the collection cannot go, and keeps everything.
    const action = {
      code: 'USESGONE',
      description: 'Reads GONE',
      llmModel: 'SIM-CHAT',
      llmConfiguration: 'TEST',
      llmMemoryStrategy: 'FULL',
      llmActionPrompt: 'Answer.',
      documents: ['GONE'],
    };
    expect((await parley.call('POST', '/api/v1/catalog/actions', action)).status).toBe(201);
    const refused = await parley.call('DELETE', `${catalogPath}/GONE`);
    expect(refused.status).toBe(409);
    expect(await rowsOf('gone')).toBe(2);
    expect((await parley.call('GET', '/api/v1/collections/GONE')).body.counts).toMatchObject({
      documents: 2,
      chunks: 2,
    });
    expect((await parley.call('DELETE', '/api/v1/catalog/actions/USESGONE')).status).toBe(204);

    // A document whose job is embedding while the collection goes: its chunks land after the
    // delete, and the job removes them; a queued one never runs.
    parley.simulator.setLatency(700);
    try {
      const embeddingsBefore = parley.simulator.requests.filter((r) => r.path.endsWith('/embeddings')).length;
      expect((await add('GONE', 'late', 'Written while the collection is deleted.', '')).status).toBe(202);
      expect((await add('GONE', 'later', 'Queued behind it.', '')).status).toBe(202);
      await until(
        async () => parley.simulator.requests.filter((r) => r.path.endsWith('/embeddings')).length > embeddingsBefore,
        10_000,
        20,
      );
      const removed = await parley.call('DELETE', `${catalogPath}/GONE`);
      expect(removed.status).toBe(204);
      expect(await registered('GONE')).toBe(0);
      // Give the running jobs time to end: their chunks must not stay.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
    } finally {
      parley.simulator.setLatency(0);
    }
    expect(await rowsOf('gone')).toBe(0);
    expect(await registered('GONE')).toBe(0);
    // Gone from the catalog, it takes no document (even while a process still has its settings cached).
    const refusedDocument = await add('GONE', 'three', 'Too late.');
    expect(refusedDocument.status).toBe(404);
    expect(refusedDocument.body.error.code).toBe('NOT_FOUND');
    expect(await registered('GONE')).toBe(0);

    // Created again with the same code and name: empty.
    expect((await parley.call('POST', catalogPath, collection)).status).toBe(201);
    expect((await parley.call('GET', '/api/v1/collections/GONE/documents')).body).toMatchObject({
      counts: { documents: 0, chunks: 0, tokens: 0 },
      documents: [],
    });
    expect((await parley.app.get(Collections).search('GONE', 'Document one of the doomed collection')).hits).toEqual(
      [],
    );

    // TWIN shared FAQ's name: only its own document's chunks went.
    expect((await parley.call('DELETE', `${catalogPath}/TWIN`)).status).toBe(204);
    expect(await rowsOf('faq')).toBe(faqChunks - 1);
    expect(await chunkRows('twin-doc')).toEqual([]);
  });

  it('refuses to move a collection that holds documents (collectionName, llmVectorStore): 409 naming the fields, nothing changed; empty, it moves', async () => {
    const catalogPath = '/api/v1/catalog/document-collections';
    const moving = { code: 'MOVING', description: 'Moves', llmVectorStore: 'KB', collectionName: 'moving' };
    expect((await parley.call('POST', catalogPath, moving)).status).toBe(201);
    const added = await parley.call('POST', '/api/v1/collections/MOVING/documents?wait=true', {
      documentId: 'kept',
      title: 'Kept',
      text: 'A document that keeps its collection where it is.',
    });
    expect(added.body.status).toBe('ready');

    const put = await parley.call('PUT', `${catalogPath}/MOVING`, { ...moving, collectionName: 'elsewhere' });
    expect(put.status).toBe(409);
    expect(put.body.error).toMatchObject({
      code: 'CONFLICT',
      details: { key: 'MOVING', fields: ['collectionName'], documents: 1 },
    });
    const applied = await parley.call('POST', '/api/v1/catalog/apply', {
      documentCollections: [{ ...moving, collectionName: 'elsewhere', description: 'Moved by apply' }],
    });
    expect(applied.status).toBe(409);
    expect((await parley.call('GET', `${catalogPath}/MOVING`)).body).toMatchObject({
      collectionName: 'moving',
      description: 'Moves',
    });
    expect((await parley.app.get(Collections).search('MOVING', 'keeps its collection')).hits.length).toBeGreaterThan(0);
    // Other fields change freely.
    expect((await parley.call('PUT', `${catalogPath}/MOVING`, { ...moving, description: 'Still here' })).status).toBe(
      200,
    );

    // Once its documents are gone, it moves.
    expect((await parley.call('DELETE', '/api/v1/collections/MOVING/documents/kept')).status).toBe(204);
    expect((await parley.call('PUT', `${catalogPath}/MOVING`, { ...moving, collectionName: 'elsewhere' })).status).toBe(
      200,
    );
  });

  it('parley docs add uploads each file with a progress bar, exits 1 when one fails; docs list and rm', async () => {
    await writeFile(join(dir, 'guide.md'), MARKDOWN);
    await writeFile(join(dir, 'sheet.pdf'), await pdfOf([['Opening hours are nine to five.']]));
    await writeFile(join(dir, 'slides.pptx'), 'not supported');
    const cli = (...args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        execFile(
          process.execPath,
          ['-r', './tools/register.js', 'apps/cli/src/main.ts', 'docs', ...args],
          {
            cwd: join(__dirname, '..'),
            env: { PATH: process.env.PATH, PARLEY_URL: parley.url, PARLEY_API_KEY: ADMIN_KEY },
          },
          (err, stdout, stderr) => resolve({ code: err ? Number(err.code) : 0, stdout, stderr }),
        );
      });
    const added = await cli('add', 'FAQ', join(dir, 'guide.md'), join(dir, 'sheet.pdf'), join(dir, 'slides.pptx'));
    expect(added.code).toBe(1);
    expect(added.stdout).toMatch(/2 of 3 files ingested into FAQ, \d+ chunks/);
    expect(added.stderr).toMatch(/ingesting .* 3\/3 files \| \d+ chunks/);
    expect(added.stderr).toMatch(/failed: .*slides\.pptx: VALIDATION_FAILED: .*not a supported type/);
    expect(await document('guide.md')).toMatchObject({ status: 'ready', title: 'guide.md' });
    expect(await document('sheet.pdf')).toMatchObject({ status: 'ready' });

    const listed = await cli('list', 'FAQ');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^guide\.md\tready\t\d+ chunks/m);
    const removed = await cli('rm', 'FAQ', 'sheet.pdf');
    expect(removed).toMatchObject({ code: 0, stdout: 'removed sheet.pdf from FAQ\n' });
    expect(await chunkRows('sheet.pdf')).toEqual([]);
  }, 90_000);
});
