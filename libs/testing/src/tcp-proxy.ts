import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';

export interface TcpProxy {
  /** The loopback port to connect to instead of the target's. */
  port: number;
  /** The network fails: every open connection is cut, and new ones are closed as they come. */
  cut(): void;
  /** Connections go through again. */
  restore(): void;
  close(): Promise<void>;
}

/**
 * A loopback TCP proxy to `targetPort` that a test can cut and restore, for a dependency that
 * goes away under the service (a database behind a failed network) while the real server runs on.
 */
export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  let open = true;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    if (!open) return void client.destroy();
    const upstream = connect(targetPort, targetHost);
    const end = () => {
      for (const s of [client, upstream]) {
        s.destroy();
        sockets.delete(s);
      }
    };
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', end).on('close', end);
    }
    client.pipe(upstream).pipe(client);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as { port: number }).port,
    cut() {
      open = false;
      for (const s of sockets) s.destroy();
    },
    restore() {
      open = true;
    },
    async close() {
      open = false;
      for (const s of sockets) s.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}
