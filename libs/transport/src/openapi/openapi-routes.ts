import { createKeyRequest } from '@parley/auth';
import { budgetLedgerQuery, budgetParams, CATALOG_DESCRIPTORS } from '@parley/catalog';
import { z } from 'zod';
import { streamQuery } from '../sse/stream.controller';

export type ReplyKind = 'json' | 'none' | 'text' | 'html' | 'events';

/** One route of the document: its input schemas are the ones the route validates with. */
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
  /** A kind of content, or the schema of the JSON answered. */
  reply: ReplyKind | z.ZodType;
  /** Starts a turn: 202 with a CommandReply while the turn goes on. */
  turn?: boolean;
  public?: boolean;
  /** Takes an `Idempotency-Key` header. */
  idempotent?: boolean;
  /** Answers JSON-RPC: errors are JSON-RPC error responses, and 204 for notifications only. */
  jsonRpc?: boolean;
}

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

/** A document collection's code, and one of its documents. */
const documentCollection = z.strictObject({ code: z.string().min(1).max(8) });
const document = documentCollection.extend({ id: z.string().min(1).max(200) });
const metadataValue = z.union([z.string(), z.number(), z.boolean(), z.null()]);
/** The JSON form; a multipart upload sends `file` (.txt, .md, .html, .pdf) and these fields but `text` (metadata as JSON). */
const documentRequest = z.strictObject({
  documentId: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._:@-]{0,199}$/)
    .optional(),
  title: z.string().min(1).max(500),
  text: z.string().min(1),
  metadata: z.record(z.string(), metadataValue).optional(),
});

const get = (path: string, operationId: string, summary: string, tag: string, params?: z.ZodObject): RouteDoc => ({
  method: 'get',
  path,
  operationId,
  tag,
  summary,
  ...(params ? { params } : {}),
  status: 200,
  reply: 'json',
});

/**
 * The routes outside the command and query tables (those are OPERATION_ROUTES), listed here:
 * the SSE stream and the operational routes, which only HTTP can serve; the catalog
 * administration, whose bodies are an entity row whose schema depends on the path's collection,
 * or a YAML bundle, so they have no one input object; and the API keys, kept HTTP and CLI only
 * because a table entry would make minting keys a NATS method and a future MCP tool as well.
 * Every route in the document is checked to be mounted by the all-in-one server.
 */
export const ROUTES: readonly RouteDoc[] = [
  {
    ...get(
      '/api/v1/conversations/{conversationId}/stream',
      'streamConversation',
      'Server-Sent Events: new events and live text deltas',
      'live',
      streamQuery,
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
  get(
    '/api/v1/catalog/{collection}',
    'listCatalogEntities',
    'Every entity of a collection (a client: the providers or models it may use)',
    'catalog',
    z.strictObject({ collection }),
  ),
  get(
    '/api/v1/catalog/{collection}/{key}',
    'getCatalogEntity',
    'An entity by its key (a client: a provider or model it may use)',
    'catalog',
    catalogEntity,
  ),
  {
    method: 'post',
    path: '/api/v1/catalog/{collection}',
    operationId: 'createCatalogEntity',
    tag: 'catalog',
    summary: 'Create an entity (a client: a provider or model it then owns, private)',
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
    summary: 'Replace an entity (a client: a provider or model it may manage)',
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
    summary: 'Delete an entity that nothing references (a client: a provider or model it may manage)',
    params: catalogEntity,
    status: 204,
    reply: 'none',
  },
  get(
    '/api/v1/catalog/{collection}/{key}/acl',
    'getCatalogAcl',
    'Who a provider or model is shared with',
    'catalog',
    sharedEntity,
  ),
  {
    method: 'put',
    path: '/api/v1/catalog/{collection}/{key}/acl/{grantee}',
    operationId: 'shareCatalogEntity',
    tag: 'catalog',
    summary: 'Share a provider or model with a subject (admins: or role:<name>); answers the new ACL',
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
    path: '/api/v1/collections/{code}/documents',
    operationId: 'addDocument',
    tag: 'knowledge',
    summary:
      'Add (or, with a known documentId, replace) a document: JSON, or a multipart upload of one .txt, .md, .html or .pdf file. 202 once queued; wait=true waits for its ingestion',
    params: documentCollection.extend({
      wait: z.enum(['true', 'false']).optional(),
      timeoutMs: z.string().regex(/^\d+$/).optional(),
    }),
    body: {
      name: 'DocumentRequest',
      schema: documentRequest,
      contentTypes: ['application/json', 'multipart/form-data'],
    },
    status: 202,
    reply: 'json',
  },
  get(
    '/api/v1/collections/{code}/documents',
    'listDocuments',
    "A collection's documents with their status, chunk and token counts, and its totals",
    'knowledge',
    documentCollection,
  ),
  get(
    '/api/v1/collections/{code}/documents/{id}',
    'getDocument',
    'A document and its ingestion status',
    'knowledge',
    document,
  ),
  {
    method: 'delete',
    path: '/api/v1/collections/{code}/documents/{id}',
    operationId: 'deleteDocument',
    tag: 'knowledge',
    summary: 'Remove a document and its chunks',
    params: document,
    status: 204,
    reply: 'none',
  },
  get(
    '/api/v1/collections/{code}',
    'getCollectionCounts',
    "A collection's document, chunk and token counts",
    'knowledge',
    documentCollection,
  ),
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
  get('/api/v1/keys', 'listApiKeys', 'Every API key (digests never leave)', 'keys'),
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
  get('/api/v1/whoami', 'whoami', "The caller's subject and roles", 'operations'),
  get(
    '/api/v1/status',
    'getStatus',
    'Dependencies, projection lag, queue depth, running turns and breakers (auditors, admins)',
    'operations',
  ),
  get(
    '/api/v1/budgets/{code}',
    'getBudgetStanding',
    "A spend budget's current UTC period: cap, spent and what running calls hold (admins and auditors)",
    'budgets',
    budgetParams,
  ),
  get(
    '/api/v1/budgets/{code}/ledger',
    'getBudgetLedger',
    "A spend budget's reservations and settlements, newest first; `before` pages on (admins and auditors)",
    'budgets',
    budgetLedgerQuery,
  ),
  { ...get('/health', 'health', 'Liveness', 'operations'), public: true },
  { ...get('/health/ready', 'ready', 'Readiness: PostgreSQL, Redis, NATS', 'operations'), public: true },
  { ...get('/metrics', 'metrics', 'Prometheus metrics', 'operations'), public: true, reply: 'text' },
  { ...get('/docs', 'docs', 'This document in Swagger UI', 'operations'), public: true, reply: 'html' },
  { ...get('/docs-json', 'openApiDocument', 'This document', 'operations'), public: true },
];
