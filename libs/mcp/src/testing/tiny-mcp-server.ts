import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

type Register = (server: McpServer) => void;

/**
 * A small streamable-HTTP MCP server whose tools a test changes at runtime, and which can forget
 * its sessions (answering 404 to them, as the specification asks) without restarting.
 */
export class TinyMcpServer {
  private readonly sessions = new Map<string, { transport: StreamableHTTPServerTransport; server: McpServer }>();
  private readonly registrations: Register[] = [];
  private readonly forgotten: McpServer[] = [];
  private http!: Server;
  url = '';
  /** The method of every request and notification the server received, in order. */
  readonly received: string[] = [];

  constructor() {
    this.registrations.push((server) =>
      server.registerTool(
        'fail',
        // Claims to be idempotent: a server's hint that Parley must not act on by itself.
        {
          description: 'Always reports an error',
          inputSchema: { reason: z.string() },
          annotations: { idempotentHint: true },
        },
        async ({ reason }) => ({ isError: true, content: [{ type: 'text', text: `failed: ${reason}` }] }),
      ),
    );
    this.registrations.push((server) =>
      server.registerTool(
        'wait',
        { description: 'Answers after ms, or as soon as the client cancels', inputSchema: { ms: z.number() } },
        async ({ ms }, { signal }) => {
          await sleep(ms, undefined, { signal }).catch(() => undefined);
          return { content: [{ type: 'text', text: `waited ${ms} ms` }] };
        },
      ),
    );
  }

  async start(): Promise<this> {
    this.http = createServer((req, res) => void this.handle(req, res));
    this.http.listen(0, '127.0.0.1');
    await once(this.http, 'listening');
    this.url = `http://127.0.0.1:${(this.http.address() as { port: number }).port}/mcp`;
    return this;
  }

  /**
   * Adds a tool (answering after `delayMs`) to every open session; each session's server
   * announces tools/list_changed.
   */
  addTool(name: string, text: string, delayMs = 0): void {
    const register: Register = (server) =>
      server.registerTool(name, { description: `Answers ${text}` }, async () => {
        if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
        return { content: [{ type: 'text', text }] };
      });
    this.registrations.push(register);
    for (const { server } of this.sessions.values()) register(server);
  }

  /** Adds a tool with an output schema (`{ n: number }`) that answers `structured` as its structured content. */
  addStructuredTool(name: string, structured: Record<string, unknown>): void {
    const register: Register = (server) =>
      server.registerTool(
        name,
        { description: 'Answers structured content', outputSchema: { n: z.number() } },
        async () => ({
          content: [],
          structuredContent: structured,
        }),
      );
    this.registrations.push(register);
    for (const { server } of this.sessions.values()) register(server);
  }

  /** Drops every session id while leaving its event stream open, so only the 404 tells. */
  forgetSessions(): void {
    this.forgotten.push(...[...this.sessions.values()].map((s) => s.server));
    this.sessions.clear();
  }

  get sessionCount(): number {
    return this.sessions.size;
  }

  async stop(): Promise<void> {
    this.forgetSessions();
    await Promise.all(this.forgotten.map((server) => server.close()));
    this.http.closeAllConnections();
    await new Promise((resolve) => this.http.close(resolve));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const session = this.sessions.get(sessionId);
      if (!session) {
        res.writeHead(404).end('session not found');
        return;
      }
      await session.transport.handleRequest(req, res);
      return;
    }
    const server = new McpServer(
      { name: 'tiny', version: '1.0.0' },
      { capabilities: { tools: { listChanged: true } } },
    );
    for (const register of this.registrations) register(server);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void this.sessions.set(id, { transport, server }),
    });
    await server.connect(transport);
    const deliver = transport.onmessage!;
    transport.onmessage = (message, extra) => {
      if ('method' in message) this.received.push(message.method);
      deliver(message, extra);
    };
    await transport.handleRequest(req, res);
  }
}
