/**
 * The HTTP tool's far end for bench/tools.bench.ts: a loopback server in a process of its own
 * that answers every request with its body as JSON. Sends its port to the parent and exits when
 * the parent disconnects.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    res.writeHead(200, { 'content-type': 'application/json' }).end(body.length ? body : '{}');
  });
});
server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
process.on('disconnect', () => process.exit(0));
