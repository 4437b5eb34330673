import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  type CallToolResult,
  type ElicitRequestFormParams,
  type ServerNotification,
  type ServerRequest,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '@parley/auth';
import { COMMANDS, type Operation } from '@parley/conversation';
import { DomainError, errorBody } from '@parley/core';
import type { LiveDeltas } from '@parley/read-models';
import { z } from 'zod';
import { payloadSchema } from '../operations/payload';
import { QUERIES } from '../operations/query-table';

/** How an MCP request reaches the one operation table: JsonRpcDispatcher.invoke, as the caller. */
export type Invoke = (name: string, params: Record<string, unknown>, principal: Principal) => Promise<unknown>;

export interface ParleyMcpDeps {
  invoke: Invoke;
  live: LiveDeltas;
  /** The principal of the request being handled (from the transport's authInfo). */
  principalOf(extra: Extra): Principal;
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** Tools named `action_<CODE>` run the catalog action CODE. */
export const ACTION_TOOL_PREFIX = 'action_';
export const TRANSCRIPT = /^parley:\/\/conversations\/([0-9a-fA-F-]{36})\/(transcript|events)$/;
const RESOURCES_PAGE = 50;

const actionInput = z.strictObject({
  content: z.string().refine((s) => s.trim().length > 0, { message: 'must not be empty' }),
  agentCode: z.string().min(1).max(8).optional(),
  conversationId: z.uuid().optional(),
});
const answerInput = z.strictObject({
  conversationId: z.uuid(),
  answers: z.record(z.string().min(1).max(128), z.string().max(10_000)),
});
const approveInput = z.strictObject({ conversationId: z.uuid(), toolCallId: z.string().min(1).max(255) });

const jsonSchemaOf = (schema: z.ZodType): Tool['inputSchema'] => {
  const { $schema: _s, ...json } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  return { ...json, type: 'object' } as Tool['inputSchema'];
};

const allowed = (op: Operation, principal: Principal) =>
  !op.roles || op.roles.some((role) => principal.roles.includes(role));
const commandOf = (name: string) => COMMANDS.find((op) => op.name === name)!;

/** What a turn-running command answers: the TurnReply (done) or only where to follow it (still running). */
interface TurnBody {
  conversationId: string;
  status: string;
  position: string;
  reply?: string | null;
  usage?: unknown;
  pendingQuestion?: {
    toolCallId: string;
    questions: { key: string; question: string; options?: string[] }[];
    expiresAt: string;
  };
  pendingApprovals?: { toolCallId: string; name: string; arguments: string }[];
  error?: { code: string; message: string };
}

/**
 * Parley as an MCP server for one connection (one session): tools, resources and their handlers,
 * all derived from the operation table and run through JSON-RPC's dispatcher as the principal of
 * each request, so roles, rate limits, input checks and ownership are those of every other door.
 */
export function createParleyMcpServer(deps: ParleyMcpDeps): Server {
  const server = new Server(
    { name: 'parley', version: '0.1.0' },
    {
      capabilities: { tools: { listChanged: false }, resources: { listChanged: false }, logging: {} },
      instructions:
        'Parley runs LLM conversations. Each action_<CODE> tool runs a catalog action: it starts a conversation ' +
        '(or continues one given conversationId) and returns the reply. The other tools are read queries.',
    },
  );
  const invoke = (name: string, params: Record<string, unknown>, extra: Extra) =>
    deps.invoke(name, params, deps.principalOf(extra));

  // Parley sends no log notifications (its logs are its own); the level is taken and has no effect.
  server.setRequestHandler(SetLevelRequestSchema, () => ({}));

  server.setRequestHandler(ListToolsRequestSchema, async (_request, extra) => {
    const principal = deps.principalOf(extra);
    const tools: Tool[] = [];
    if (allowed(commandOf('startConversation'), principal)) {
      const actions = (await invoke('getAllActions', {}, extra)) as { code: string; description?: string | null }[];
      for (const action of actions)
        tools.push({
          name: `${ACTION_TOOL_PREFIX}${action.code}`,
          title: `Run action ${action.code}`,
          description:
            `${action.description ?? action.code}. Starts a conversation running this action (agentCode needed) ` +
            'or continues one (conversationId), sends `content` and returns the reply.',
          inputSchema: jsonSchemaOf(actionInput),
        });
      tools.push({
        name: 'answer',
        description:
          'Answer the question a conversation waits on (status WA), then wait for the turn and return the reply.',
        inputSchema: jsonSchemaOf(answerInput),
      });
      tools.push({
        name: 'approve',
        description: 'Approve a tool call waiting for approval, then wait for the turn and return the reply.',
        inputSchema: jsonSchemaOf(approveInput),
      });
    }
    for (const op of QUERIES)
      if (allowed(op, principal))
        tools.push({
          name: op.name,
          description: op.summary,
          inputSchema: jsonSchemaOf(payloadSchema(op)),
          annotations: { readOnlyHint: true },
        });
    return { tools };
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args = {} } = request.params;
    const known =
      name.startsWith(ACTION_TOOL_PREFIX) ||
      name === 'answer' ||
      name === 'approve' ||
      QUERIES.some((op) => op.name === name);
    if (!known) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: there is no tool '${name}'.`);
    try {
      if (name.startsWith(ACTION_TOOL_PREFIX))
        return await runAction(name.slice(ACTION_TOOL_PREFIX.length), args, extra);
      if (name === 'answer') {
        const input = parse(answerInput, args);
        return await runTurn(input.conversationId, () => invoke('submitAnswers', input, extra), extra);
      }
      if (name === 'approve') {
        const input = parse(approveInput, args);
        return await runTurn(input.conversationId, () => invoke('approveToolCall', input, extra), extra);
      }
      const result = await invoke(name, args, extra);
      return {
        content: [{ type: 'text', text: JSON.stringify(result) }],
        structuredContent: { result },
      };
    } catch (err) {
      if (err instanceof DomainError) return errorResult(err);
      throw err;
    }
  });

  async function runAction(actionCode: string, args: Record<string, unknown>, extra: Extra): Promise<CallToolResult> {
    const input = parse(actionInput, args);
    let conversationId = input.conversationId;
    if (!conversationId) {
      if (!input.agentCode)
        throw DomainError.validation(
          [
            {
              path: 'agentCode',
              message: 'is needed to start a conversation (or pass conversationId to continue one)',
            },
          ],
          'agentCode is needed to start a conversation.',
        );
      const started = (await invoke('startConversation', { agentCode: input.agentCode, actionCode }, extra)) as {
        conversationId: string;
      };
      conversationId = started.conversationId;
    }
    const id = conversationId;
    return runTurn(id, () => invoke('sendMessage', { conversationId: id, content: input.content }, extra), extra);
  }

  /**
   * Runs a turn-running command and waits: progress notifications from the live deltas while it
   * runs (when the request carries a progressToken), the kill command when the request is
   * cancelled, and a question asked through elicitation when the client declared it.
   */
  async function runTurn(
    conversationId: string,
    command: () => Promise<unknown>,
    extra: Extra,
  ): Promise<CallToolResult> {
    const progressToken = extra._meta?.progressToken;
    let progress = 0;
    const notify = (message: string) => {
      if (progressToken === undefined) return;
      progress += 1;
      void extra
        .sendNotification({ method: 'notifications/progress', params: { progressToken, progress, message } })
        .catch(() => undefined);
    };
    const unsubscribe =
      progressToken === undefined
        ? () => undefined
        : deps.live.subscribe(conversationId, (d) => d.text && notify(d.text));
    const kill = () =>
      void invoke('killConversation', { conversationId, reason: 'MCP request cancelled' }, extra).catch(
        () => undefined,
      );
    extra.signal.addEventListener('abort', kill, { once: true });
    try {
      notify('turn started');
      let body = (await command()) as TurnBody;
      while (body.status === 'WA' && body.pendingQuestion && server.getClientCapabilities()?.elicitation) {
        // A client that declines, cancels or does not answer in time gets the question as the result.
        const asked = await server
          .elicitInput(elicitationOf(body.pendingQuestion), { signal: extra.signal })
          .catch((err: unknown) => {
            if (extra.signal.aborted) throw err;
            return null;
          });
        if (asked?.action !== 'accept' || !asked.content) break;
        const answers = Object.fromEntries(Object.entries(asked.content).map(([k, v]) => [k, String(v)]));
        notify('question answered');
        body = (await invoke('submitAnswers', { conversationId, answers }, extra)) as TurnBody;
      }
      return turnResult(body);
    } finally {
      extra.signal.removeEventListener('abort', kill);
      unsubscribe();
    }
  }

  server.setRequestHandler(ListResourcesRequestSchema, async (request, extra) => {
    const page = (await invoke(
      'listConversations',
      { limit: RESOURCES_PAGE, ...(request.params?.cursor ? { cursor: request.params.cursor } : {}) },
      extra,
    ).catch(asMcpError)) as {
      items: { conversationUuid: string; llmProcessStatus?: string }[];
      nextCursor: string | null;
    };
    return {
      resources: page.items.flatMap(({ conversationUuid: id, llmProcessStatus: status }) => [
        {
          uri: `parley://conversations/${id}/transcript`,
          name: `conversation ${id} transcript`,
          description: `The messages of conversation ${id}${status ? ` (status ${status})` : ''}`,
          mimeType: 'text/plain',
        },
        {
          uri: `parley://conversations/${id}/events`,
          name: `conversation ${id} events`,
          description: `The event stream of conversation ${id}`,
          mimeType: 'application/json',
        },
      ]),
      ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
    };
  });

  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [
      {
        uriTemplate: 'parley://conversations/{conversationId}/transcript',
        name: 'conversation transcript',
        description: 'The messages of a conversation, one per paragraph: role, then text',
        mimeType: 'text/plain',
      },
      {
        uriTemplate: 'parley://conversations/{conversationId}/events',
        name: 'conversation events',
        description: 'The events of a conversation (the first 1000), with their metadata',
        mimeType: 'application/json',
      },
    ],
  }));

  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    const { uri } = request.params;
    const match = TRANSCRIPT.exec(uri);
    if (!match) throw new McpError(-32002, `Resource not found: '${uri}' is not a Parley resource.`, { uri });
    const [, conversationId, kind] = match;
    if (kind === 'events') {
      const events = await invoke('getEvents', { conversationId, limit: 1000 }, extra).catch(asMcpError);
      return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(events) }] };
    }
    const messages = (await invoke('getConversationMessages', { conversationId }, extra).catch(asMcpError)) as {
      llmMessageRole: string;
      llmMessageContent: string | null;
    }[];
    const text = messages
      .map((m) => `${ROLE_NAMES[m.llmMessageRole] ?? m.llmMessageRole}: ${m.llmMessageContent ?? ''}`)
      .join('\n\n');
    return { contents: [{ uri, mimeType: 'text/plain', text }] };
  });

  return server;
}

const ROLE_NAMES: Record<string, string> = { SY: 'system', US: 'user', AS: 'assistant', TO: 'tool', QU: 'question' };

function parse<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw DomainError.validation(
    parsed.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message })),
    'Invalid arguments.',
  );
}

/** A Parley error as a tool's error result: the message to read, Parley's error body as structured content. */
function errorResult(err: DomainError): CallToolResult {
  const body = errorBody(err);
  const problems = (err.details?.problems as { path: string; message: string }[] | undefined) ?? [];
  const where = problems.map((p) => `${p.path || '(arguments)'}: ${p.message}`).join('; ');
  return {
    isError: true,
    content: [{ type: 'text', text: `${err.code}: ${err.message}${where ? ` (${where})` : ''}` }],
    structuredContent: body as unknown as Record<string, unknown>,
  };
}

/** Outside a tool call (resources), a Parley error is a JSON-RPC error: not found -32002, bad input -32602. */
function asMcpError(err: unknown): never {
  if (!(err instanceof DomainError)) throw err;
  const code =
    err.code === 'NOT_FOUND' || err.code === 'FORBIDDEN'
      ? -32002
      : err.code === 'VALIDATION_FAILED'
        ? ErrorCode.InvalidParams
        : ErrorCode.InternalError;
  throw new McpError(code, err.message, errorBody(err).error);
}

function elicitationOf(pending: NonNullable<TurnBody['pendingQuestion']>): ElicitRequestFormParams {
  return {
    mode: 'form',
    message: pending.questions.map((q) => q.question).join('\n'),
    requestedSchema: {
      type: 'object',
      properties: Object.fromEntries(
        pending.questions.map((q) => [
          q.key,
          q.options && q.options.length > 0
            ? { type: 'string' as const, title: q.question, enum: q.options }
            : { type: 'string' as const, title: q.question },
        ]),
      ),
      required: pending.questions.map((q) => q.key),
    },
  };
}

/** A turn's outcome as a tool result: the reply text, or what the conversation waits on and how to go on. */
function turnResult(body: TurnBody): CallToolResult {
  const structured = body as unknown as Record<string, unknown>;
  if (body.status === 'WA' && body.pendingQuestion) {
    const questions = body.pendingQuestion.questions
      .map((q) => `- ${q.key}: ${q.question}${q.options?.length ? ` (one of: ${q.options.join(', ')})` : ''}`)
      .join('\n');
    return {
      content: [
        {
          type: 'text',
          text: `The model asks:\n${questions}\nAnswer with the 'answer' tool: {"conversationId": "${body.conversationId}", "answers": {<key>: <answer>}}.`,
        },
      ],
      structuredContent: structured,
    };
  }
  if (body.pendingApprovals && body.pendingApprovals.length > 0) {
    const calls = body.pendingApprovals.map((c) => `- ${c.toolCallId}: ${c.name}(${c.arguments})`).join('\n');
    return {
      content: [
        {
          type: 'text',
          text: `Tool calls wait for approval:\n${calls}\nApprove one with the 'approve' tool: {"conversationId": "${body.conversationId}", "toolCallId": ...}.`,
        },
      ],
      structuredContent: structured,
    };
  }
  if (body.usage === undefined)
    return {
      content: [
        {
          type: 'text',
          text: `The turn goes on (status ${body.status}); read conversation ${body.conversationId} later with findConversation.`,
        },
      ],
      structuredContent: structured,
    };
  return {
    ...(body.status === 'FA' ? { isError: true } : {}),
    content: [{ type: 'text', text: body.reply ?? body.error?.message ?? '' }],
    structuredContent: structured,
  };
}
