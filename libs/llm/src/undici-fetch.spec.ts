import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createSecureServer, type Http2SecureServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { bodyBytes, undiciFetch } from './undici-fetch';

describe('undiciFetch', () => {
  let server: Server;
  let url: string;
  const agent = new Agent();
  const fetch = undiciFetch(agent);
  const seen: { method?: string; headers: IncomingMessage['headers']; body: string }[] = [];
  const routes: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
    '/echo': (_req, res) => {
      res.setHeader('set-cookie', ['a=1', 'b=2']);
      res.setHeader('content-type', 'application/json');
      res.statusCode = 201;
      res.end(JSON.stringify({ ok: true }));
    },
    '/empty': (_req, res) => {
      res.statusCode = 204;
      res.end();
    },
    // Sends one line, then nothing more until the client goes away.
    '/stream': (_req, res) => {
      res.setHeader('content-type', 'text/event-stream');
      res.write('data: first\n\n');
    },
    '/never': () => undefined,
    // Its last event, then the end a moment later: a reader that stops at the last event leaves
    // the end unread.
    '/done': (_req, res) => {
      res.setHeader('content-type', 'text/event-stream');
      res.write('data: [DONE]\n\n');
      res.on('close', () => (doneFinished = res.writableFinished));
      setTimeout(() => res.end(), 30);
    },
  };
  let doneFinished: boolean | undefined;

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        seen.push({ method: req.method, headers: req.headers, body });
        routes[req.url ?? '']?.(req, res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await agent.close();
  });

  it('sends the method, headers and body, and answers with the status, every header and the body', async () => {
    const res = await fetch(`${url}/echo`, {
      method: 'post',
      headers: new Headers({ 'Content-Type': 'application/json', 'X-Trace-Id': 'abc' }),
      body: JSON.stringify({ model: 'sim-chat' }),
    });
    expect(seen.at(-1)).toMatchObject({
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-trace-id': 'abc' },
      body: '{"model":"sim-chat"}',
    });
    expect(res.status).toBe(201);
    expect(res.ok).toBe(true);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(await res.json()).toEqual({ ok: true });
  });

  it('answers a 204 with no body', async () => {
    const res = await fetch(`${url}/empty`, { method: 'DELETE' });
    expect(res.status).toBe(204);
    expect(res.body).toBeNull();
  });

  it('rejects with an AbortError when aborted before the headers arrive', async () => {
    const controller = new AbortController();
    const pending = fetch(`${url}/never`, { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('ends a body being streamed with an AbortError when aborted mid-stream', async () => {
    const controller = new AbortController();
    const res = await fetch(`${url}/stream`, { signal: controller.signal });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(Buffer.from(first.value as Uint8Array).toString()).toBe('data: first\n\n');
    controller.abort();
    await expect(reader.read()).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('reads out the rest of a body whose reader stopped early, as the SDK does at [DONE]', async () => {
    const res = await fetch(`${url}/done`, { method: 'POST', body: '{}' });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    expect(Buffer.from((await reader.read()).value as Uint8Array).toString()).toBe('data: [DONE]\n\n');
    await reader.cancel();
    // The response ends as the server sent it, on a connection kept for the next request; a body
    // destroyed at the cancel aborts the request, and the server sees it cut short.
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(doneFinished).toBe(true);
  });

  it("gives a body's bytes straight from undici (bodyBytes), and reads out the rest after [DONE] the same way", async () => {
    doneFinished = undefined;
    const res = await fetch(`${url}/done`, { method: 'POST', body: '{}' });
    const bytes = bodyBytes(res)!;
    expect(bytes).not.toBe(res.body);
    for await (const chunk of bytes) {
      expect(Buffer.from(chunk).toString()).toBe('data: [DONE]\n\n');
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(doneFinished).toBe(true);
    // Any other Response is read from its own body stream.
    const other = new Response('data: x\n\n');
    expect(bodyBytes(other)).toBe(other.body);
  });

  it('hands a body it does not send itself (a multipart form) to the platform fetch', async () => {
    const form = new FormData();
    form.append('purpose', 'batch');
    const res = await fetch(`${url}/echo`, { method: 'POST', body: form });
    expect(res.status).toBe(201);
    expect(seen.at(-1)?.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(seen.at(-1)?.body).toContain('name="purpose"');
  });

  it('rejects with the connection error when nothing listens', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    await expect(fetch(`http://127.0.0.1:${port}/`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});

describe('undiciFetch to a TLS server that offers HTTP/2', () => {
  let dir: string;
  let server: Http2SecureServer;
  let agent: Agent;
  let url: string;
  const versions: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-h2-'));
    // prettier-ignore
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
      '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1',
      '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
    ], { stdio: 'ignore' });
    const cert = readFileSync(join(dir, 'cert.pem'));
    server = createSecureServer({ key: readFileSync(join(dir, 'key.pem')), cert, allowHTTP1: true }, (req, res) => {
      versions.push(req.httpVersion);
      res.writeHead(200, { 'content-type': 'text/event-stream', 'set-cookie': ['a=1', 'b=2'] });
      res.write('data: first\n\n');
      if (req.url === '/done') res.end('data: [DONE]\n\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    agent = new Agent({ connect: { ca: cert } });
  });

  afterAll(async () => {
    await agent.close();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  // undici 8 negotiates HTTP/2 through ALPN by default: many streamed calls share one connection.
  it('speaks HTTP/2 and answers with the status, every header and the streamed body', async () => {
    const res = await undiciFetch(agent)(`${url}/done`, { method: 'POST', body: '{}' });
    expect(versions.at(-1)).toBe('2.0');
    expect(res.status).toBe(200);
    expect(res.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(await res.text()).toBe('data: first\n\ndata: [DONE]\n\n');
  });

  it('ends an HTTP/2 stream with an AbortError when aborted mid-stream', async () => {
    const controller = new AbortController();
    const res = await undiciFetch(agent)(`${url}/open`, { signal: controller.signal });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    expect(Buffer.from((await reader.read()).value as Uint8Array).toString()).toBe('data: first\n\n');
    controller.abort();
    await expect(reader.read()).rejects.toMatchObject({ name: 'AbortError' });
  });
});
