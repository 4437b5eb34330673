import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { All, Controller, Get, Inject, Post, Req, Res, type BeforeApplicationShutdown } from '@nestjs/common';
import { Authenticator, Public, type Principal } from '@parley/auth';
import { DomainError } from '@parley/core';
import { LIVE_DELTAS, type LiveDeltas } from '@parley/read-models';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';
import { randomUUID } from 'node:crypto';
import { JsonRpcDispatcher } from '../json-rpc/json-rpc';
import { createParleyMcpServer } from './parley-mcp-server';

/** Open MCP sessions (both transports) a process holds at most, and one subject at most. */
export const MAX_MCP_SESSIONS = 1_000;
export const MAX_MCP_SESSIONS_PER_SUBJECT = 50;
/** A session with no request for this long is closed (its client may open another). */
export const MCP_SESSION_IDLE_MS = 30 * 60_000;

interface Session {
  transport: Transport & { close(): Promise<void> };
  subject: string;
  lastSeen: number;
}

const principalKey = 'parley.principal';
const authInfoOf = (principal: Principal, authorization: string): AuthInfo => ({
  token: authorization.replace(/^Bearer\s+/i, ''),
  clientId: principal.subject,
  scopes: principal.roles,
  extra: { [principalKey]: principal },
});

const notFound = () => new DomainError('NOT_FOUND', 'No such MCP session: it ended, expired or is not yours.');

/**
 * Parley as an MCP server over HTTP, on the raw request and response (the SDK's transports write
 * them): streamable HTTP on `/mcp` (POST messages, GET the server's SSE stream, DELETE the
 * session) and the legacy SSE transport on `GET /mcp/sse` with its `POST /mcp/messages`. Every
 * request carries the bearer credential of every route (401 without); a session belongs to the
 * subject that opened it, and each request runs as its own principal.
 */
@Controller('mcp')
export class McpController implements BeforeApplicationShutdown {
  private readonly sessions = new Map<string, Session>();
  private readonly sweep: NodeJS.Timeout;

  constructor(
    @Inject(JsonRpcDispatcher) private readonly dispatcher: JsonRpcDispatcher,
    @Inject(Authenticator) private readonly authenticator: Authenticator,
    @Inject(LIVE_DELTAS) private readonly live: LiveDeltas,
  ) {
    this.sweep = setInterval(() => this.closeIdle(), 60_000);
    this.sweep.unref();
  }

  @All()
  @Public()
  async streamable(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const { principal, authorization } = await this.authenticate(request);
    const id = request.headers['mcp-session-id'];
    let session: Session | undefined;
    if (typeof id === 'string') session = this.sessionOf(id, principal);
    else if (request.method === 'POST' && isInitializeRequest(request.body))
      session = await this.openStreamable(principal);
    else
      throw DomainError.validation(
        [{ path: 'mcp-session-id', message: 'is required after initialize' }],
        'Bad request: send initialize first, then the Mcp-Session-Id header it answers.',
      );
    reply.hijack();
    const raw = request.raw as IncomingMessage & { auth?: AuthInfo };
    raw.auth = authInfoOf(principal, authorization);
    await (session.transport as StreamableHTTPServerTransport).handleRequest(raw, reply.raw, request.body);
  }

  @Get('sse')
  @Public()
  async sse(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const { principal } = await this.authenticate(request);
    this.assertRoom(principal);
    reply.hijack();
    const transport = new SSEServerTransport('/mcp/messages', reply.raw);
    const session: Session = { transport, subject: principal.subject, lastSeen: Date.now() };
    this.sessions.set(transport.sessionId, session);
    transport.onclose = () => this.sessions.delete(transport.sessionId);
    await this.serverFor().connect(transport);
  }

  @Post('messages')
  @Public()
  async messages(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const { principal, authorization } = await this.authenticate(request);
    const id = (request.query as Record<string, unknown>).sessionId;
    const session = typeof id === 'string' ? this.sessionOf(id, principal) : undefined;
    if (!session || !(session.transport instanceof SSEServerTransport)) throw notFound();
    reply.hijack();
    const raw = request.raw as IncomingMessage & { auth?: AuthInfo };
    raw.auth = authInfoOf(principal, authorization);
    await session.transport.handlePostMessage(raw, reply.raw, request.body);
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.sweep);
    const open = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.allSettled(open.map((s) => s.transport.close()));
  }

  private async authenticate(request: FastifyRequest): Promise<{ principal: Principal; authorization: string }> {
    const authorization = request.headers.authorization;
    const principal = await this.authenticator.authenticate(authorization);
    return { principal, authorization: authorization ?? '' };
  }

  private sessionOf(id: string, principal: Principal): Session {
    const session = this.sessions.get(id);
    // Another subject's session is as unknown as an ended one.
    if (!session || session.subject !== principal.subject) throw notFound();
    session.lastSeen = Date.now();
    return session;
  }

  private async openStreamable(principal: Principal): Promise<Session> {
    this.assertRoom(principal);
    const session: Session = {
      transport: null as never,
      subject: principal.subject,
      lastSeen: Date.now(),
    };
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void this.sessions.set(id, session),
      onsessionclosed: (id) => void this.sessions.delete(id),
    });
    transport.onclose = () => transport.sessionId && this.sessions.delete(transport.sessionId);
    session.transport = transport;
    await this.serverFor().connect(transport);
    return session;
  }

  private serverFor() {
    return createParleyMcpServer({
      live: this.live,
      invoke: (name, params, principal) =>
        this.dispatcher.invoke(name, params, { principal, authorization: undefined }),
      principalOf: (extra) => {
        const principal = extra.authInfo?.extra?.[principalKey] as Principal | undefined;
        if (!principal) throw new DomainError('UNAUTHENTICATED', 'The MCP request carries no credential.');
        return principal;
      },
    });
  }

  private assertRoom(principal: Principal): void {
    const mine = [...this.sessions.values()].filter((s) => s.subject === principal.subject).length;
    if (this.sessions.size >= MAX_MCP_SESSIONS || mine >= MAX_MCP_SESSIONS_PER_SUBJECT)
      throw new DomainError(
        'RATE_LIMITED',
        `Too many open MCP sessions (at most ${MAX_MCP_SESSIONS_PER_SUBJECT} per caller, ${MAX_MCP_SESSIONS} in all): end one with DELETE /mcp.`,
      );
  }

  private closeIdle(): void {
    const before = Date.now() - MCP_SESSION_IDLE_MS;
    for (const [id, session] of this.sessions)
      if (session.lastSeen < before) {
        this.sessions.delete(id);
        void session.transport.close().catch(() => undefined);
      }
  }
}
