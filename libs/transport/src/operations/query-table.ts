import type { Role } from '@parley/auth';
import { availableModelsQuery, CatalogQueries } from '@parley/catalog';
import {
  defineOperation,
  listMemoriesQuery,
  memoryRef,
  ragSource,
  type Operation,
  type OperationSpec,
} from '@parley/conversation';
import {
  AuditQueries,
  byCode,
  byConversation,
  byName,
  ConversationQueries,
  eventsQuery,
  feedQuery,
  listConversationsQuery,
  countConversationsQuery,
  eventPosition,
  noInput,
  stateQuery,
  UsageQueries,
  usageQuery,
  verifyQuery,
} from '@parley/read-models';
import { MemoryQueries } from '@parley/turn';
import { z } from 'zod';

/** Query replies are the read models' views, not described in zod yet: the document says JSON, as before. */
const json = z.unknown();
const AUDITORS: readonly Role[] = ['auditor', 'admin'];
const C = '/api/v1/conversations';

/** getConversationMessages: the transcript rows (row-mappers' messageOf). */
const messagesReply = z.array(
  z.object({
    messageSequence: z.number().int(),
    llmMessageRole: z.enum(['SY', 'US', 'AS', 'TO', 'QU']),
    llmMessageContent: z.string().nullable(),
    biTokenCount: z.number().int().nullable(),
    llmToolCallId: z.string().nullable(),
    toolCalls: z.array(
      z.object({ llmToolCallId: z.string(), llmToolCallName: z.string(), llmToolCallArguments: z.string() }),
    ),
    /** The document chunks an assistant's answer drew on (seed 001 `rag_sources`); empty for other messages. */
    ragSources: z.array(ragSource),
    /** An assistant's answer parsed and valid against the action's output schema (structured output); null otherwise. */
    output: z.unknown(),
    attachments: z.array(
      z.object({ attachmentSequence: z.number().int(), llmMediaType: z.string(), attachmentUrl: z.string() }),
    ),
    turnNo: z.number().int(),
    createdAt: z.iso.datetime(),
  }),
);

/** getUsage: one row per group, keyed by the group's dimension (usage-queries' UsageRow). */
const usageReply = z.array(
  z.object({
    /** The group's key: the one dimension grouped by. */
    day: z.string().optional(),
    subject: z.string().optional(),
    agent: z.string().optional(),
    action: z.string().optional(),
    model: z.string().optional(),
    conversations: z.number(),
    turns: z.number(),
    errors: z.number(),
    modelCalls: z.number(),
    inputTokens: z.number(),
    outputTokens: z.number(),
    /** The model calls' cost plus embeddingCost. */
    estimatedCost: z.number(),
    /** Tokens of the conversations' embedding calls: retrieval, remember, recall. */
    embeddingTokens: z.number(),
    /** The embedding calls' part of estimatedCost. */
    embeddingCost: z.number(),
    latencyP50Ms: z.number().nullable(),
    latencyP95Ms: z.number().nullable(),
  }),
);

type QuerySpec<I extends z.ZodObject, H> = Omit<OperationSpec<I, H>, 'kind' | 'tag' | 'reply' | 'http'> & {
  tag?: string;
  /** The reply's schema, where one is written; JSON otherwise. */
  reply?: z.ZodType;
  path: string;
  nullIsNotFound?: string;
  segmentNames?: Readonly<Record<string, string>>;
};

/**
 * Every query accepts `minPosition` (API.md). The read models' queries wait for the projections
 * to reach it; the others (the catalog, the raw streams, long-term memories) read what is written
 * as soon as its write has returned, so they check the position's form and need not wait.
 */
const withMinPosition = <I extends z.ZodObject>(input: I): I =>
  'minPosition' in input.shape
    ? input
    : (input.extend({
        /** Read-your-writes: this query reads current data, so it answers at once. */
        minPosition: eventPosition.optional(),
      }) as unknown as I);

/** A query: GET on `path`, its input from the path and the query string; NATS `<prefix>.qry.<name>`. */
const query = <I extends z.ZodObject, H>({ path, nullIsNotFound, segmentNames, ...spec }: QuerySpec<I, H>): Operation =>
  defineOperation<I, H>({
    kind: 'query',
    tag: 'queries',
    reply: json,
    ...spec,
    input: withMinPosition(spec.input),
    http: {
      method: 'get',
      path,
      status: 200,
      ...(nullIsNotFound ? { nullIsNotFound } : {}),
      ...(segmentNames ? { segmentNames } : {}),
    },
  });

/**
 * Every query, once: seed 000's SYS_LLM_QueryApi (null where the seed returns null: 404 over
 * HTTP, `{result: null}` elsewhere), conversation lists, usage and the auditors' reads. They
 * join handlers of three libraries (catalog, read models, the event store's audit), so they live
 * here, beside the front doors derived from them. The handlers check ownership themselves.
 */
export const QUERIES: readonly Operation[] = [
  query({
    name: 'getAllActions',
    summary: 'Every action',
    input: noInput,
    handler: CatalogQueries,
    run: (catalog, _input, { caller }) => catalog.getAllActions(caller),
    path: '/api/v1/actions',
  }),
  query({
    name: 'getAvailableActions',
    summary: 'The actions the caller may start a conversation on (their model and provider usable by it)',
    input: noInput,
    handler: CatalogQueries,
    run: (catalog, _input, { caller }) => catalog.availableActions(caller),
    path: '/api/v1/actions/available',
  }),
  query({
    name: 'getAvailableModels',
    summary: 'Active models of a type (default inference) on active providers the caller may use (seed 001)',
    input: availableModelsQuery,
    handler: CatalogQueries,
    run: (catalog, { modelType }, { caller }) => catalog.availableModels(caller, modelType),
    path: '/api/v1/models/available',
  }),
  query({
    name: 'getAvailableProviders',
    summary: 'Active providers the caller may use: owned, instance-wide or shared with it',
    input: noInput,
    handler: CatalogQueries,
    run: (catalog, _input, { caller }) => catalog.availableProviders(caller),
    path: '/api/v1/providers/available',
  }),
  query({
    name: 'findActionByCode',
    summary: 'An action by its code',
    input: byCode,
    handler: CatalogQueries,
    run: (catalog, { code }, { caller }) => catalog.findActionByCode(caller, code),
    path: '/api/v1/actions/{code}',
    nullIsNotFound: 'Action',
  }),
  query({
    name: 'findAgentByCode',
    summary: 'An agent by its code',
    input: byCode,
    handler: CatalogQueries,
    run: (catalog, { code }, { caller }) => catalog.findAgentByCode(caller, code),
    path: '/api/v1/agents/{code}',
    nullIsNotFound: 'Agent',
  }),
  query({
    name: 'findToolByCode',
    summary: 'A tool by its code',
    input: byCode,
    handler: CatalogQueries,
    run: (catalog, { code }, { caller }) => catalog.findToolByCode(caller, code),
    path: '/api/v1/tools/{code}',
    nullIsNotFound: 'Tool',
  }),
  query({
    name: 'findMcpClientByName',
    summary: 'An MCP client by its name',
    input: byName,
    handler: CatalogQueries,
    run: (catalog, { name }, { caller }) => catalog.findMcpClientByName(caller, name),
    path: '/api/v1/mcp-clients/{name}',
    nullIsNotFound: 'MCP client',
  }),
  query({
    name: 'listConversations',
    summary: 'Conversations by status, agent, action, subject, text and time, cursor-paged',
    input: listConversationsQuery,
    handler: ConversationQueries,
    run: (conversations, input, { caller }) => conversations.listConversations(caller, input),
    path: C,
  }),
  query({
    name: 'countConversations',
    summary: 'How many conversations of each status the list filters find',
    input: countConversationsQuery,
    handler: ConversationQueries,
    run: (conversations, input, { caller }) => conversations.countConversations(caller, input),
    path: `${C}/counts`,
  }),
  query({
    name: 'findConversation',
    summary: 'A conversation',
    input: byConversation,
    handler: ConversationQueries,
    run: (conversations, input, { caller }) => conversations.findConversation(caller, input),
    path: `${C}/{conversationId}`,
    nullIsNotFound: 'Conversation',
  }),
  query({
    name: 'getConversationMessages',
    summary: 'The messages of a conversation',
    input: byConversation,
    handler: ConversationQueries,
    run: (conversations, input, { caller }) => conversations.getConversationMessages(caller, input),
    reply: messagesReply,
    path: `${C}/{conversationId}/messages`,
  }),
  query({
    name: 'getPendingQuestions',
    summary: 'The question the conversation waits on',
    input: byConversation,
    handler: ConversationQueries,
    run: (conversations, input, { caller }) => conversations.getPendingQuestions(caller, input),
    path: `${C}/{conversationId}/pending-question`,
    nullIsNotFound: 'Pending question of conversation',
  }),
  query({
    name: 'getPendingApprovals',
    summary: 'Tool calls waiting for approval',
    input: byConversation,
    handler: ConversationQueries,
    run: (conversations, input, { caller }) => conversations.getPendingApprovals(caller, input),
    path: `${C}/{conversationId}/pending-approvals`,
  }),
  query({
    name: 'getToolCalls',
    summary: 'The tool calls of a conversation',
    input: byConversation,
    handler: ConversationQueries,
    run: (conversations, input, { caller }) => conversations.getToolCalls(caller, input),
    path: `${C}/{conversationId}/tool-calls`,
  }),
  query({
    name: 'getModelCalls',
    summary: 'The model calls of a conversation',
    input: byConversation,
    handler: ConversationQueries,
    run: (conversations, input, { caller }) => conversations.getModelCalls(caller, input),
    path: `${C}/{conversationId}/model-calls`,
  }),
  query({
    name: 'getUsage',
    summary: 'Usage, cost, errors and latency grouped by day, subject, agent, action or model (a client: its own)',
    input: usageQuery,
    roles: ['client', ...AUDITORS],
    handler: UsageQueries,
    run: (usage, input, { caller }) => usage.getUsage(caller, input),
    reply: usageReply,
    path: '/api/v1/usage',
  }),
  query({
    name: 'listMemories',
    summary: "The caller's long-term memories, newest first, or the closest to `q` (admins may name an owner)",
    tag: 'memories',
    input: listMemoriesQuery,
    roles: ['client', ...AUDITORS],
    handler: MemoryQueries,
    run: (memories, input, { caller }) => memories.list(caller, input),
    path: '/api/v1/memories',
  }),
  query({
    name: 'getMemory',
    summary: 'One long-term memory of the caller',
    tag: 'memories',
    input: memoryRef,
    roles: ['client', ...AUDITORS],
    handler: MemoryQueries,
    run: (memories, input, { caller }) => memories.get(caller, input),
    path: '/api/v1/memories/{memoryId}',
    segmentNames: { memoryId: 'id' },
    nullIsNotFound: 'Memory',
  }),
  query({
    name: 'getEvents',
    summary: 'The raw event stream with metadata',
    tag: 'auditors',
    input: eventsQuery,
    handler: AuditQueries,
    run: (audit, input, { caller }) => audit.getEvents(caller, input),
    path: `${C}/{conversationId}/events`,
  }),
  query({
    name: 'getState',
    summary: 'The folded state at a revision',
    tag: 'auditors',
    input: stateQuery,
    handler: AuditQueries,
    run: (audit, input, { caller }) => audit.getState(caller, input),
    path: `${C}/{conversationId}/state`,
  }),
  query({
    name: 'verifyConversation',
    summary: "Re-check the stream's hash chain",
    tag: 'auditors',
    input: verifyQuery,
    roles: AUDITORS,
    handler: AuditQueries,
    run: (audit, { conversationId }, { caller }) => audit.verify(caller, conversationId),
    path: `${C}/{conversationId}/verify`,
  }),
  query({
    name: 'getGlobalFeed',
    summary: 'The global event feed',
    tag: 'auditors',
    input: feedQuery,
    roles: AUDITORS,
    handler: AuditQueries,
    run: (audit, input, { caller }) => audit.getGlobalFeed(caller, input),
    path: '/api/v1/events',
  }),
];
