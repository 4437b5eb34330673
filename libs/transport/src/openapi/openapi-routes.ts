import { createKeyRequest } from '@parley/auth';
import { CATALOG_DESCRIPTORS } from '@parley/catalog';
import {
  addToolRepositoryRequest,
  changeToolRepositoryRequest,
  lifecycleRequest,
  repositoryIdSchema,
  sendMessageRequest,
  startConversationRequest,
  submitAnswersRequest,
  toolCallDecisionRequest,
} from '@parley/conversation';
import {
  byCode,
  byConversation,
  byName,
  eventsQuery,
  feedQuery,
  listConversationsQuery,
  stateQuery,
  usageQuery,
  verifyQuery,
} from '@parley/read-models';
import { z } from 'zod';
import { streamQuery } from '../sse/stream.controller';
import { commandReply, turnReply } from './replies.schemas';

export type ReplyKind = 'command' | 'turn' | 'json' | 'none' | 'text' | 'html' | 'events';

/** One operation of the document: its input schemas are the ones the route validates with. */
export interface RouteDoc {
  method: 'get' | 'post' | 'put' | 'delete';
  /** OpenAPI style: `/api/v1/conversations/{conversationId}`. */
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  /** Path parameters and query string together, as the controllers validate them. */
  params?: z.ZodObject;
  body?: { name: string; schema: z.ZodType; contentTypes?: readonly string[] };
  status: number;
  reply: ReplyKind;
  public?: boolean;
  /** Takes an `Idempotency-Key` header. */
  idempotent?: boolean;
}

const conversation = z.strictObject({ conversationId: z.uuid() });
const toolCall = conversation.extend({ toolCallId: z.string().min(1).max(200) });
const repository = conversation.extend({ repositoryId: repositoryIdSchema });
const collection = z.enum(CATALOG_DESCRIPTORS.map((d) => d.route) as [string, ...string[]]);
const catalogEntity = z.strictObject({ collection, key: z.string().min(1) });

/** Catalog rows are checked per entity by CatalogService; here, a bundle is lists of rows by entity name. */
const catalogRow = z.record(z.string(), z.unknown());
const catalogBundle = z.strictObject(
  Object.fromEntries(CATALOG_DESCRIPTORS.map((d) => [d.kind, z.array(catalogRow).optional()])),
);
/** The ACL routes take providers and models only (CatalogAccess); a grantee is a subject or `role:<name>`. */
const sharedEntity = z.strictObject({ collection: z.enum(['providers', 'models']), key: z.string().min(1) });
const grant = sharedEntity.extend({ grantee: z.string().min(1).max(200) });
const shareRequest = z.strictObject({ permission: z.enum(['read', 'manage']) });

const C = '/api/v1/conversations';
const command = (
  path: string,
  operationId: string,
  summary: string,
  body: { name: string; schema: z.ZodType },
  reply: 'command' | 'turn',
  params: z.ZodObject = conversation,
  status = 200,
): RouteDoc => ({
  method: 'post',
  path: `${C}/{conversationId}${path}`,
  operationId,
  tag: 'commands',
  summary,
  params,
  body,
  status,
  reply,
  idempotent: true,
});
const query = (
  path: string,
  operationId: string,
  summary: string,
  params?: z.ZodObject,
  tag = 'queries',
): RouteDoc => ({
  method: 'get',
  path,
  operationId,
  tag,
  summary,
  ...(params ? { params } : {}),
  status: 200,
  reply: 'json',
});
const lifecycle = { name: 'LifecycleRequest', schema: lifecycleRequest };
const decision = { name: 'ToolCallDecisionRequest', schema: toolCallDecisionRequest };

/** Every route of design/API.md. A test checks that each one is mounted by the all-in-one server. */
export const ROUTES: readonly RouteDoc[] = [
  {
    method: 'post',
    path: C,
    operationId: 'startConversation',
    tag: 'commands',
    summary: 'Start a conversation in which an agent runs an action',
    body: { name: 'StartConversationRequest', schema: startConversationRequest },
    status: 201,
    reply: 'command',
    idempotent: true,
  },
  command(
    '/messages',
    'sendMessage',
    'Send a message (with attachments) and run a turn',
    { name: 'SendMessageRequest', schema: sendMessageRequest },
    'turn',
  ),
  command(
    '/answers',
    'submitAnswers',
    'Answer the pending question and continue the turn',
    { name: 'SubmitAnswersRequest', schema: submitAnswersRequest },
    'turn',
  ),
  command(
    '/tool-calls/{toolCallId}/approve',
    'approveToolCall',
    'Approve a tool call waiting for approval',
    decision,
    'turn',
    toolCall,
  ),
  command(
    '/tool-calls/{toolCallId}/reject',
    'rejectToolCall',
    'Reject a tool call waiting for approval',
    decision,
    'turn',
    toolCall,
  ),
  command('/terminate', 'terminateConversation', 'Terminate the conversation', lifecycle, 'command'),
  command('/kill', 'killConversation', 'Kill the conversation, a running turn included (admin)', lifecycle, 'command'),
  command('/pause', 'pauseConversation', 'Pause the conversation (admin)', lifecycle, 'command'),
  command('/resume', 'resumeConversation', 'Resume a paused conversation (admin)', lifecycle, 'turn'),
  command('/recover', 'recoverConversation', 'Recover a failed or stuck conversation (admin)', lifecycle, 'turn'),
  command(
    '/tool-repositories',
    'addToolRepository',
    'Add a tool repository to the conversation',
    { name: 'AddToolRepositoryRequest', schema: addToolRepositoryRequest },
    'command',
    conversation,
    201,
  ),
  {
    ...command(
      '/tool-repositories/{repositoryId}',
      'changeToolRepository',
      'Change a tool repository',
      { name: 'ChangeToolRepositoryRequest', schema: changeToolRepositoryRequest },
      'command',
      repository,
    ),
    method: 'put',
  },
  {
    method: 'delete',
    path: `${C}/{conversationId}/tool-repositories/{repositoryId}`,
    operationId: 'removeToolRepository',
    tag: 'commands',
    summary: 'Remove a tool repository',
    params: repository,
    status: 200,
    reply: 'command',
    idempotent: true,
  },
  query('/api/v1/actions', 'getAllActions', 'Every action'),
  query('/api/v1/actions/{code}', 'findActionByCode', 'An action by its code', byCode),
  query('/api/v1/agents/{code}', 'findAgentByCode', 'An agent by its code', byCode),
  query('/api/v1/tools/{code}', 'findToolByCode', 'A tool by its code', byCode),
  query('/api/v1/mcp-clients/{name}', 'findMcpClientByName', 'An MCP client by its name', byName),
  query(
    C,
    'listConversations',
    'Conversations by status, agent, action and time, cursor-paged',
    listConversationsQuery,
  ),
  query(`${C}/{conversationId}`, 'findConversation', 'A conversation', byConversation),
  query(`${C}/{conversationId}/messages`, 'getConversationMessages', 'The messages of a conversation', byConversation),
  query(
    `${C}/{conversationId}/pending-question`,
    'getPendingQuestions',
    'The question the conversation waits on',
    byConversation,
  ),
  query(
    `${C}/{conversationId}/pending-approvals`,
    'getPendingApprovals',
    'Tool calls waiting for approval',
    byConversation,
  ),
  query(`${C}/{conversationId}/tool-calls`, 'getToolCalls', 'The tool calls of a conversation', byConversation),
  query(`${C}/{conversationId}/model-calls`, 'getModelCalls', 'The model calls of a conversation', byConversation),
  query('/api/v1/usage', 'getUsage', 'Tokens and cost grouped by day, agent, action or model', usageQuery),
  query(`${C}/{conversationId}/events`, 'getEvents', 'The raw event stream with metadata', eventsQuery, 'auditors'),
  query(`${C}/{conversationId}/state`, 'getState', 'The folded state at a revision', stateQuery, 'auditors'),
  query(
    `${C}/{conversationId}/verify`,
    'verifyConversation',
    "Re-check the stream's hash chain",
    verifyQuery,
    'auditors',
  ),
  query('/api/v1/events', 'getGlobalFeed', 'The global event feed', feedQuery, 'auditors'),
  {
    ...query(
      `${C}/{conversationId}/stream`,
      'streamConversation',
      'Server-Sent Events: new events and live text deltas',
      streamQuery,
      'live',
    ),
    reply: 'events',
  },
  {
    method: 'post',
    path: '/api/v1/catalog/apply',
    operationId: 'applyCatalog',
    tag: 'catalog',
    summary: 'Apply a YAML or JSON bundle of catalog entities (dryRun returns the diff)',
    params: z.strictObject({ dryRun: z.enum(['true', 'false']).optional() }),
    body: {
      name: 'CatalogBundle',
      schema: catalogBundle,
      contentTypes: ['application/json', 'application/yaml', 'text/yaml'],
    },
    status: 200,
    reply: 'json',
  },
  query(
    '/api/v1/catalog/{collection}',
    'listCatalogEntities',
    'Every entity of a collection',
    z.strictObject({ collection }),
    'catalog',
  ),
  query('/api/v1/catalog/{collection}/{key}', 'getCatalogEntity', 'An entity by its key', catalogEntity, 'catalog'),
  {
    method: 'post',
    path: '/api/v1/catalog/{collection}',
    operationId: 'createCatalogEntity',
    tag: 'catalog',
    summary: 'Create an entity',
    params: z.strictObject({ collection }),
    body: { name: 'CatalogEntity', schema: catalogRow },
    status: 201,
    reply: 'json',
  },
  {
    method: 'put',
    path: '/api/v1/catalog/{collection}/{key}',
    operationId: 'replaceCatalogEntity',
    tag: 'catalog',
    summary: 'Replace an entity',
    params: catalogEntity,
    body: { name: 'CatalogEntity', schema: catalogRow },
    status: 200,
    reply: 'json',
  },
  {
    method: 'delete',
    path: '/api/v1/catalog/{collection}/{key}',
    operationId: 'deleteCatalogEntity',
    tag: 'catalog',
    summary: 'Delete an entity that nothing references',
    params: catalogEntity,
    status: 204,
    reply: 'none',
  },
  query(
    '/api/v1/catalog/{collection}/{key}/acl',
    'getCatalogAcl',
    'Who a provider or model is shared with',
    sharedEntity,
    'catalog',
  ),
  {
    method: 'put',
    path: '/api/v1/catalog/{collection}/{key}/acl/{grantee}',
    operationId: 'shareCatalogEntity',
    tag: 'catalog',
    summary: 'Share a provider or model with a subject or role:<name>; answers the new ACL',
    params: grant,
    body: { name: 'ShareRequest', schema: shareRequest },
    status: 200,
    reply: 'json',
  },
  {
    method: 'delete',
    path: '/api/v1/catalog/{collection}/{key}/acl/{grantee}',
    operationId: 'unshareCatalogEntity',
    tag: 'catalog',
    summary: 'Take a share back',
    params: grant,
    status: 204,
    reply: 'none',
  },
  {
    method: 'post',
    path: '/api/v1/keys',
    operationId: 'createApiKey',
    tag: 'keys',
    summary: 'Create an API key (shown once, in this answer)',
    body: { name: 'CreateApiKeyRequest', schema: createKeyRequest },
    status: 201,
    reply: 'json',
  },
  query('/api/v1/keys', 'listApiKeys', 'Every API key (digests never leave)', undefined, 'keys'),
  {
    method: 'delete',
    path: '/api/v1/keys/{id}',
    operationId: 'revokeApiKey',
    tag: 'keys',
    summary: 'Revoke an API key',
    params: z.strictObject({ id: z.string().min(1) }),
    status: 200,
    reply: 'json',
  },
  { ...query('/health', 'health', 'Liveness', undefined, 'operations'), public: true },
  { ...query('/health/ready', 'ready', 'Readiness: PostgreSQL, Redis, NATS', undefined, 'operations'), public: true },
  { ...query('/metrics', 'metrics', 'Prometheus metrics', undefined, 'operations'), public: true, reply: 'text' },
  { ...query('/docs', 'docs', 'This document in Swagger UI', undefined, 'operations'), public: true, reply: 'html' },
  { ...query('/docs-json', 'openApiDocument', 'This document', undefined, 'operations'), public: true },
];

export const REPLY_SCHEMAS = { CommandReply: commandReply, TurnReply: turnReply } as const;
