import { z } from 'zod';

/**
 * Every setting Parley reads, in one schema. Each entry names the environment variable it
 * comes from. Its `describe` text is what README.md's configuration table says about it
 * (`npm run docs:config` rewrites the table); the validators' messages are what a boot error
 * says about a bad value.
 */
const bool = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no'], { message: 'expected true or false' })
    .optional()
    .transform((v) => (v === undefined ? fallback : ['true', '1', 'yes'].includes(v)));

const int = (fallback: number, min = 0) =>
  z.coerce
    .number({ message: 'expected a whole number' })
    .int({ message: 'expected a whole number' })
    .min(min, { message: `expected a whole number of at least ${min}` })
    .default(fallback);

const optionalInt = (min = 1) =>
  z.coerce
    .number({ message: 'expected a whole number' })
    .int({ message: 'expected a whole number' })
    .min(min, { message: `expected a whole number of at least ${min}` })
    .optional();

const url = (protocols: string[]) =>
  z
    .string()
    .refine(
      (v) => {
        try {
          return protocols.includes(new URL(v).protocol.replace(/:$/, ''));
        } catch {
          return false;
        }
      },
      { message: `expected a URL starting with ${protocols.map((p) => `${p}://`).join(' or ')}` },
    )
    .optional();

const key256 = z.string().refine((v) => Buffer.from(v, 'base64').length === 32 || /^[0-9a-f]{64}$/i.test(v), {
  message: 'expected a 256-bit key: 64 hex characters or 44 base64 characters',
});

export const envSchema = z.object({
  NODE_ENV: z
    .enum(['development', 'production', 'test'])
    .default('development')
    .describe('`development`, `production` or `test`; `production` refuses to start without `PARLEY_ENCRYPTION_KEY`.'),
  PORT: int(3000, 0).describe(
    'HTTP port. The worker and the projector serve only `/health`, `/health/ready` and `/metrics` on it.',
  ),
  HOST: z.string().min(1).default('0.0.0.0').describe('Address the HTTP server listens on.'),
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
    .default('info')
    .describe('Log level: `fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`.'),

  DATABASE_URL: url(['postgres', 'postgresql']).describe(
    'PostgreSQL (`postgres://…`) of the event store, the catalog and the read models; it must hold every migration (`npm run migrate`). Unset: the all-in-one server runs an embedded PostgreSQL (PGlite) under `PARLEY_DATA_DIR`; the other deployables refuse to start.',
  ),
  DATABASE_POOL_SIZE: int(10, 1).describe(
    "Connections of a process's `pg` pool; TypeORM's pool gets half as many (at least 2). Always 1 on the embedded database.",
  ),
  DATABASE_ACQUIRE_TIMEOUT_MS: int(5_000, 100).describe(
    'Longest a request waits for a free connection of the `pg` pool; then it is answered 503 `SERVICE_UNAVAILABLE` instead of hanging.',
  ),
  DATABASE_STATEMENT_TIMEOUT_MS: int(30_000, 100).describe(
    "PostgreSQL's `statement_timeout` on the pool's connections: a statement running longer is cancelled (503 `SERVICE_UNAVAILABLE`). Migrations run without it.",
  ),
  PARLEY_DATA_DIR: z
    .string()
    .min(1)
    .default('.parley')
    .describe(
      'Directory of the embedded database, of `postgres.url` (its address, which `parley` commands read) and of the development encryption key.',
    ),
  EMBEDDED_SHARED_BUFFERS_MB: int(128, 16).describe(
    "`shared_buffers` of the embedded database (PGlite), in MB. Where the pages searched most (a collection's HNSW index: about 1.3 KB a 256-dimension chunk at `VECTOR_HNSW_M` 16) outgrow it, each search reads them back from PGlite's file system: 30,000 chunks searched at p50 45 ms with 24 MB against 27 ms with 256 MB (bench/history.md).",
  ),
  REDIS_URL: url(['redis', 'rediss']).describe(
    'Redis (`redis://` or `rediss://`) for the turn and timer queues, rate limits and running-turn slots. Unset: an in-process queue and per-process limits.',
  ),
  NATS_URL: url(['nats', 'tls']).describe(
    'NATS (`nats://` or `tls://`) for the NATS front door, live deltas, emitter tools and integration events (JetStream). Unset: NATS is off.',
  ),
  NATS_USER: z
    .string()
    .min(1)
    .optional()
    .describe(
      "Parley's NATS user, with `NATS_PASSWORD` (instead of `user:password@` in `NATS_URL`). See `deploy/nats/nats-server.conf`.",
    ),
  NATS_PASSWORD: z.string().min(1).optional().describe('Password of `NATS_USER`.'),
  NATS_NKEY_SEED: z
    .string()
    .regex(/^SU[A-Z2-7]{56}$/, { message: 'expected an NKey user seed (SU…, 58 characters)' })
    .optional()
    .describe("Parley's NATS NKey user seed (`SU…`): the server knows the user by its public key."),
  NATS_CREDS: z
    .string()
    .min(1)
    .optional()
    .describe(
      "Path of Parley's NATS credentials file (`.creds`: user JWT and NKey seed) for a server in operator mode.",
    ),
  NATS_TLS_CA: z
    .string()
    .min(1)
    .optional()
    .describe("Path of the PEM CA bundle that NATS's server certificate must chain to. Set: TLS is required."),
  NATS_TLS_CERT: z
    .string()
    .min(1)
    .optional()
    .describe("Path of Parley's PEM client certificate for NATS (mutual TLS), with `NATS_TLS_KEY`."),
  NATS_TLS_KEY: z.string().min(1).optional().describe('Path of the PEM private key of `NATS_TLS_CERT`.'),
  EVENTSTORE_URL: url(['esdb', 'kurrentdb', 'esdb+discover', 'kurrentdb+discover', 'kurrent']).describe(
    'KurrentDB or EventStoreDB connection string (`esdb://`, `kurrentdb://`, …). Set: events are stored there instead of in PostgreSQL; checkpoints stay in PostgreSQL.',
  ),
  PARLEY_PREFIX: z
    .string()
    .regex(/^[a-z][a-z0-9_-]{0,31}$/, { message: 'expected lower-case letters, digits, - or _' })
    .default('parley')
    .describe(
      "This deployment's name in NATS subjects, Redis keys, queue names, the JetStream stream and subscription ids.",
    ),

  PARLEY_ENCRYPTION_KEY: key256
    .optional()
    .describe(
      '256-bit key (64 hex or 44 base64 characters) that encrypts catalog secrets at rest. Required in `production`; elsewhere, when unset, a key is generated into `$PARLEY_DATA_DIR/encryption.key`.',
    ),
  PARLEY_PREVIOUS_ENCRYPTION_KEYS: z
    .string()
    .optional()
    .describe(
      'Comma-separated former encryption keys, still used to decrypt until `parley catalog rotate-key` has re-encrypted every secret.',
    ),
  PARLEY_ADMIN_API_KEY: z
    .string()
    .min(16, { message: 'expected at least 16 characters' })
    .optional()
    .describe(
      'Bootstrap admin credential (at least 16 characters), sent as `Authorization: Bearer` like an API key. Unset: none; create keys with `parley keys create`.',
    ),
  PARLEY_AUTH_ENABLED: bool(true).describe(
    '`false`: every request runs as an admin without a credential, with a warning at start. Development only: `production` refuses to start with it.',
  ),
  API_KEY_CACHE_MS: int(5_000, 0).describe(
    'How long an API key that authenticated is trusted without a database lookup; other instances refuse a revoked key within this time. `0`: look it up on every request.',
  ),
  PARLEY_PUBLIC_PATHS: z
    .string()
    .default('/health,/health/ready,/metrics')
    .describe('Comma-separated HTTP paths that need no credential; a trailing `*` matches a prefix.'),
  JWT_SECRET: z
    .string()
    .min(32, { message: 'expected at least 32 characters' })
    .optional()
    .describe(
      'HS256/384/512 secret (at least 32 characters): JWTs signed with it are credentials. Needs `JWT_ISSUER` and `JWT_AUDIENCE`.',
    ),
  JWT_JWKS_URL: url(['http', 'https']).describe(
    'JWKS URL of the issuer: JWTs signed with its keys (RS256, ES256, …) are credentials. `https://` only; `http://` is accepted for localhost or 127.0.0.1 outside `production`. Needs `JWT_ISSUER` and `JWT_AUDIENCE`.',
  ),
  JWT_ISSUER: z
    .string()
    .optional()
    .describe('The `iss` every JWT must carry; required when `JWT_SECRET` or `JWT_JWKS_URL` is set.'),
  JWT_AUDIENCE: z
    .string()
    .optional()
    .describe('The `aud` every JWT must carry; required when `JWT_SECRET` or `JWT_JWKS_URL` is set.'),
  JWT_MAX_AGE_SECONDS: int(3600, 1).describe(
    'Longest lifetime a JWT may have, in seconds: its `exp` (required) may lie at most this far after its `iat` (or after now, without `iat`).',
  ),
  JWT_ROLES_CLAIM: z
    .string()
    .min(1)
    .default('https://parley.dev/roles')
    .describe('The claim that holds the array of roles of a JWT; unknown roles are ignored.'),

  HTTP_BODY_LIMIT_BYTES: int(1_048_576, 1024).describe(
    'Largest HTTP request body; a larger one is answered 413 `PAYLOAD_TOO_LARGE`.',
  ),
  NATS_MAX_PAYLOAD_BYTES: int(1_048_576, 1024).describe(
    'Largest NATS request payload; a larger one is answered `PAYLOAD_TOO_LARGE`.',
  ),
  MAX_MESSAGE_CHARS: int(100_000, 1).describe(
    'Longest message a caller may send, in characters (413 `PAYLOAD_TOO_LARGE`).',
  ),
  MAX_ATTACHMENTS: int(10, 0).describe('Most attachments on one message (413 `PAYLOAD_TOO_LARGE`).'),
  ATTACHMENT_ALLOWED_HOSTS: z
    .string()
    .default('')
    .describe(
      'Comma-separated hosts that attachment URLs may name even though they are (or resolve to) private, loopback or link-local addresses: `host`, `*.domain`, optional `:port`. Only `https:` and `data:` attachment URLs are accepted at all.',
    ),
  RATE_LIMIT_PER_MINUTE: int(600, 1).describe(
    'Requests per minute per subject, HTTP and NATS together; over it: 429 `RATE_LIMITED` with `Retry-After`.',
  ),
  RATE_LIMIT_PER_IP_PER_MINUTE: int(1200, 1).describe(
    'HTTP requests per minute per client address and process, counted before the credential is checked (public routes included); over it: 429 `RATE_LIMITED` with `Retry-After`.',
  ),
  HTTP_TRUST_PROXY: bool(false).describe(
    '`true` behind a reverse proxy or load balancer: the client address (for `RATE_LIMIT_PER_IP_PER_MINUTE`) is read from `X-Forwarded-For`. Leave `false` when clients connect directly, or they can choose their address.',
  ),
  MAX_WAIT_MS: int(30_000, 0).describe(
    'Longest a command sent with `wait` holds its request open (its `timeoutMs` and the turn timeout are cut to this); then it answers 202 and the turn goes on.',
  ),
  SSE_MAX_STREAMS_PER_SUBJECT: int(10, 1).describe(
    'Open SSE streams one subject may hold per process; one more is answered 429 `RATE_LIMITED`.',
  ),
  SSE_MAX_STREAMS: int(1000, 1).describe(
    'Open SSE streams per process, all subjects together; one more is answered 429 `RATE_LIMITED`.',
  ),
  SSE_MAX_BUFFERED_BYTES: int(1_048_576, 1024).describe(
    'Bytes an SSE stream may have waiting for a client that does not read; past it the stream is dropped.',
  ),
  SSE_CREDENTIAL_CHECK_MS: int(30_000, 50).describe(
    "How often an open SSE stream checks its caller's credential again; a revoked key or an expired JWT ends the stream.",
  ),
  MAX_RUNNING_TURNS_PER_SUBJECT: int(20, 1).describe(
    'Turns one subject may have running at once; a command that would start one more is answered 429 `RATE_LIMITED`.',
  ),

  METADATA_MAX_BYTES: int(16_384, 2).describe(
    'Largest `metadata` of a new conversation, as JSON; a larger one is refused with 413 `PAYLOAD_TOO_LARGE`.',
  ),
  EVENT_MAX_BYTES: int(2 * 1_048_576, 1024).describe(
    'Largest event (its data and metadata as JSON); an append with a larger one is refused and writes nothing.',
  ),
  EVENT_CHAIN_KEY: key256
    .optional()
    .describe(
      "256-bit key (64 hex or 44 base64 characters), kept outside the database, that keys the events' hash chain (HMAC-SHA256): whoever can write the database cannot rewrite a stream consistently without it. Unset: plain sha-256. Once set, keep it: `verify` needs it for keyed events.",
    ),
  EVENT_CHAIN_REQUIRE_KEYED: bool(false).describe(
    '`true`: `verify` refuses unkeyed events too, for stores keyed (`EVENT_CHAIN_KEY`) from their first event, where an unkeyed event can only be a rewrite.',
  ),
  CONTENT_ENCRYPTION: bool(true).describe(
    "`true`: each new conversation's content (messages, reasoning, tool arguments and results, answers, attachment URLs, summaries) is sealed in events and read models with its own data key, wrapped with `PARLEY_ENCRYPTION_KEY`, so that erasing it destroys the key. `false`: new conversations are stored in plaintext (erasure then only hides them).",
  ),
  PROJECTOR_THREAD: bool(false).describe(
    '`true`: the all-in-one server (`npm start`) with a `DATABASE_URL` runs the read-model projections and the NATS integration relay on a worker thread of their own instead of its main thread. Off by default: on a 2 vCPU host it measured no faster (docs/operations.md). The embedded database and the split deployables are not affected.',
  ),
  SUBSCRIPTION_POLL_MS: int(200, 10).describe(
    'How often projections and relays look for events that other processes appended (an append in their own process wakes them at once).',
  ),
  CONVERSATION_CACHE_MB: int(128, 0).describe(
    'Memory per process for the folded states of recently used conversations, in MiB. `0`: every load folds the whole stream.',
  ),

  LLM_RUNTIME_URL: url(['http', 'https']).describe(
    'OpenAI-compatible runtime (`…/v1`) for configuration by environment alone: at start Parley keeps a provider, a model (`DEFAULT_MODEL_NAME`) and the `GENERATE` agent and action in the catalog, derived from these variables, for `POST /internal/llm/generate`. Unset: nothing is kept.',
  ),
  LLM_RUNTIME_API_KEY: z
    .string()
    .min(1)
    .default('none')
    .describe('API key sent to `LLM_RUNTIME_URL` (stored encrypted with the provider); most local runtimes take any.'),
  LLM_RUNTIME_TOOLS: z
    .enum(['api', 'text'])
    .default('api')
    .describe(
      "How `LLM_RUNTIME_URL`'s model takes tools: `api` (the tools API, capability FC) or `text` (a runtime without one: tools as a text block, calls parsed from the reply, in JSON mode with `ENABLE_JSON_MODE`).",
    ),
  DEFAULT_MODEL_NAME: z
    .string()
    .min(1)
    .optional()
    .describe(
      "The runtime's model id that `LLM_RUNTIME_URL`'s model sends (default `default`); also the model of actions that name none.",
    ),
  MCP_PROXY_URL: url(['http', 'https']).describe(
    "Streamable-HTTP MCP server whose tools generate calls are offered (kept as the catalog MCP client `mcp-proxy`, with `LLM_RUNTIME_URL`). Its host must be allowed like any MCP client's.",
  ),
  MAX_TOOL_STEPS: optionalInt().describe(
    "Tool rounds per turn: past this many model calls that ask for tools, the turn fails with `LLM_LIMIT_EXCEEDED`. Unset: 10 for conversations, 3 for generate. A configuration's `maxToolRounds` overrides it.",
  ),
  MAX_TOOL_CALLS_PER_REPLY: int(32, 1).describe(
    'Tool calls run from one model reply; each further call is not run and gets a result saying so (`NOT_ALLOWED`), and the turn goes on.',
  ),
  MAX_PROMPT_TOKENS: optionalInt().describe(
    "Token budget of one model call's prompt; a larger prompt fails the turn with `LLM_LIMIT_EXCEEDED`. Unset: no budget (4096 for generate). A configuration may override it.",
  ),
  MAX_COMPLETION_TOKENS: optionalInt().describe(
    "Output-token budget of one turn; each call's `max_tokens` is capped to what is left. Unset: no budget (512 for generate). A configuration may override it.",
  ),
  MAX_TOTAL_TOKENS: optionalInt().describe(
    'Input plus output token budget of one turn. Unset: no budget (5120 for generate). A configuration may override it.',
  ),
  BUDGET_MAX_TOKENS: int(4096, 1).describe(
    '`max_tokens` of a model call that a spend budget applies to and that sets none itself: the call is sent with it, so its worst case is known and reserved (docs/budgets.md).',
  ),
  BUDGETS_CACHE_MS: int(2_000, 0).describe(
    'How long a process reuses the list of spend budgets on a subject, agent and action before reading it again. A budget created or deleted through a process applies there at once, in the others within this time; caps and spend are always read in the reservation itself. `0`: read it for every model call.',
  ),
  ENABLE_JSON_MODE: bool(true).describe(
    'Ask for `json_schema` output when an action has an output schema and its model the `JM` capability.',
  ),
  TURN_TIMEOUT_MS: int(300_000, 1000).describe(
    'Longest a turn may run before it fails, and how long a command sent with `wait` waits before it answers 202. A configuration may override it.',
  ),
  LLM_CALL_TIMEOUT_MS: int(60_000, 100).describe('Time limit of one attempt of a model call.'),
  LLM_RETRY_COUNT: int(3, 0).describe(
    "Attempts per model call in all (retryable failures only). A configuration's `llmRetryCount` overrides it.",
  ),
  LLM_RETRY_DELAY_MS: int(500, 0).describe(
    "Base delay of the exponential backoff (full jitter) between attempts, never shorter than the provider's `Retry-After`. A configuration's `llmRetryDelay` overrides it.",
  ),
  ADVISOR_CACHE_TTL_MS: int(300_000, 1).describe(
    'How long the `responseCache` advisor keeps a reply for an identical model request.',
  ),
  ADVISOR_CACHE_MAX_ENTRIES: int(1_000, 1).describe(
    'Replies the `responseCache` advisor keeps in memory when REDIS_URL is unset (least recently used go first).',
  ),
  LLM_BREAKER_FAILURES: int(5, 1).describe(
    'Consecutive retryable failures of one provider that open its circuit breaker.',
  ),
  LLM_BREAKER_COOLDOWN_MS: int(30_000, 10).describe(
    "How long a provider's open circuit refuses calls before it lets one through again (half-open).",
  ),
  EMBEDDING_BATCH_SIZE: int(64, 1).describe(
    'Texts sent in one `/v1/embeddings` request; longer lists are split into batches of this size, each retried and counted like a model call.',
  ),
  VECTOR_HNSW_EF_SEARCH: int(200, 1).describe(
    "Candidates pgvector's HNSW index keeps while it searches (`hnsw.ef_search`, set per search): higher finds the true nearest chunks more often, at some speed. At least a search's top-K.",
  ),
  VECTOR_HNSW_M: z.coerce
    .number({ message: 'expected a whole number' })
    .int({ message: 'expected a whole number' })
    .min(2, { message: 'expected a whole number from 2 to 100' })
    .max(100, { message: 'expected a whole number from 2 to 100' })
    .default(16)
    .describe(
      "Links per node of pgvector's HNSW index (`m`), when Parley creates the index: more find the true nearest chunks more often, for a longer build and a larger index. An existing index keeps its own.",
    ),
  VECTOR_HNSW_EF_CONSTRUCTION: z.coerce
    .number({ message: 'expected a whole number' })
    .int({ message: 'expected a whole number' })
    .min(4, { message: 'expected a whole number from 4 to 1000' })
    .max(1000, { message: 'expected a whole number from 4 to 1000' })
    .default(64)
    .describe(
      "Candidates pgvector's HNSW index keeps while it links a new chunk (`ef_construction`, at least 2 × `VECTOR_HNSW_M`), when Parley creates the index: higher builds a better graph, slower.",
    ),
  VECTOR_HNSW_BUILD_MEMORY_MB: int(512, 1).describe(
    "`maintenance_work_mem` of a build of pgvector's HNSW index, for that build alone: a graph that outgrows it is built many times slower.",
  ),
  VECTOR_EXACT_BELOW: int(2000, 0).describe(
    "A vector store searches a collection of fewer chunks than this exactly, without an HNSW index (pgvector's, or Parley's graph: `VECTOR_INDEX`), which is faster at that size and misses no neighbour; 0: always through the index.",
  ),
  VECTOR_CACHE_MB: int(64, 0).describe(
    "MB of collections' chunks (vectors, texts, metadata) each vector store keeps in this process for its exact searches (the exact scan's, and a pgvector store's below `VECTOR_EXACT_BELOW`): a search asks the database only for the collection's version (moved on by every write, from any process) and ranks the kept chunks here, so another writer's change is never missed. A collection larger than this is searched in SQL. 0: every search in SQL.",
  ),
  VECTOR_INDEX: z
    .enum(['auto', 'graph', 'pgvector'], { message: 'expected auto, graph or pgvector' })
    .default('auto')
    .describe(
      "What searches a pgvector store's collections of `VECTOR_EXACT_BELOW` chunks or more: `pgvector`, its HNSW index in the database; `graph`, an HNSW graph in a child process of Parley's (`VECTOR_GRAPH_MB`; pgvector's index is then not built); `auto`, the graph in the embedded database (PGlite, where pgvector's index is slow to write and to search) and pgvector's index in a PostgreSQL server. The exact scan has no index of its own and always uses the graph while `VECTOR_GRAPH_MB` allows.",
    ),
  VECTOR_GRAPH_MB: int(256, 0).describe(
    "MB of HNSW graphs (usearch, int8 vectors, in a child process of this one) each vector store keeps for its collections of `VECTOR_EXACT_BELOW` chunks or more: about 0.75 KB a 256-dimension chunk. A graph is built on a collection's first search and brought up to date in the background after writes (from any process: the collection's version says so); until it is, the store searches without it. A collection larger than this is searched without a graph. 0: no graphs.",
  ),
  MEMORY_EMBEDDING_MODEL: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Catalog code of the `embedding` model long-term memory embeds facts with. Unset: the catalog’s only embedding model; an action that enables memory is refused when there is none, or several.',
    ),
  MEMORY_SESSION_TTL_DAYS: int(30, 1).describe(
    'Days a `session` fact of long-term memory lives when `remember` names no `ttlDays` or `expiresAt`.',
  ),
  MEMORY_TTL_DAYS: int(365, 1).describe(
    'Days a `user`, `agent` or `organisation` fact of long-term memory lives when `remember` names no `ttlDays` or `expiresAt`.',
  ),
  MEMORY_MIN_SIMILARITY: z.coerce
    .number()
    .min(-1)
    .max(1)
    .default(0.3)
    .describe(
      'Lowest cosine similarity between a query and a fact for long-term memory to recall it (it depends on the embedding model: unrelated texts score 0.1–0.3 with common ones).',
    ),
  CHUNK_TOKENS: int(512, 16).describe(
    'Tokens in one chunk of an ingested document (seed 003); chunks break on paragraphs, then sentences.',
  ),
  CHUNK_OVERLAP: int(50, 0).describe(
    'Tokens a chunk repeats from the end of the one before it (whole sentences, at most this many); below CHUNK_TOKENS.',
  ),
  INGEST_MAX_BYTES: int(10_485_760, 1024).describe(
    'Largest document a collection takes (an uploaded file or a JSON `text`); a larger one is answered 413 `PAYLOAD_TOO_LARGE`.',
  ),
  INGEST_BATCH_SIZE: int(256, 1).describe(
    'Chunks embedded and stored together during ingestion: one embedding call (split by EMBEDDING_BATCH_SIZE) and one multi-row insert per batch.',
  ),
  MAX_TOOL_OUTPUT_BYTES: int(65_536, 256).describe(
    'Longer tool output is cut and marked `…[truncated: <n> bytes total]`. A configuration may override it.',
  ),
  TOOL_CALL_TIMEOUT_MS: int(30_000, 100).describe('Time limit of one tool call; past it the call fails as `TIMEOUT`.'),
  QUESTION_TIMEOUT_MS: int(300_000, 1000).describe(
    'How long a question the model asks may wait for its answer; then the turn fails with `QUESTION_TIMEOUT`. A configuration may override it.',
  ),
  TOOL_APPROVAL_TIMEOUT_MS: int(300_000, 1000).describe(
    "How long a tool call that needs approval waits for one (seed 001's tool_approval_timeout_ms); then it is rejected as timed out and the turn goes on. A configuration may override it.",
  ),
  STUCK_AFTER_MS: int(600_000, 1000).describe(
    'A running turn with no new event for this long is recorded as stuck (`ConversationStuck`).',
  ),
  STREAM_EVENT_FIRST_MS: int(100, 0).describe(
    "The first `ChunksReceived` event of a streamed reply, which carries the model call's start, is stored at the latest this long after its first delta (live deltas go out at once regardless).",
  ),
  STREAM_EVENT_WINDOW_MS: int(2000, 0).describe(
    'The second `ChunksReceived` event of a streamed reply is stored at the latest this long after its first delta; each later one may wait twice as long as the one before.',
  ),
  STREAM_EVENT_MAX_WINDOW_MS: int(16_000, 0).describe(
    'The longest a `ChunksReceived` batch waits after its first delta, however long the reply.',
  ),
  STREAM_EVENT_MAX_CHARS: int(2048, 16).describe(
    'A `ChunksReceived` batch is closed, and stored within a few milliseconds, once its text and reasoning reach this many characters.',
  ),
  TURN_WAIT_POLL_MS: int(100, 10).describe(
    'How often a command waiting for a turn that another process runs reads the stream when no announcement came.',
  ),
  SHUTDOWN_GRACE_MS: int(10_000, 0).describe(
    'On SIGTERM, how long the turns and jobs running in the process may go on. Then they are stopped where they are, and their jobs are handed on at once (to another worker, or to this one once it is back), to continue from their last recorded step. The process exits at the latest 10 s after the grace.',
  ),
  QUEUE_LOCK_MS: int(30_000, 500).describe(
    "Lease of a running turn's job, renewed while the turn runs; once a dead process's lease runs out, another worker takes the turn over.",
  ),
  TOOL_HTTP_ALLOWED_HOSTS: z
    .string()
    .default('')
    .describe(
      'Comma-separated hosts that HTTP tools may call, checked on every redirect too: `host`, `*.domain`, optional `:port`. Empty: no HTTP tool may run.',
    ),
  SELF_SERVICE_PROVIDER_ALLOWED_HOSTS: z
    .string()
    .default('api.openai.com,*.openai.azure.com')
    .describe(
      "Comma-separated hosts the `baseUrl` of a provider a client creates for itself may name (as `LLM_PROVIDER_ALLOWED_HOSTS`, which must allow it too), checked when it is written and before each call. The default leaves out this machine, so a client's provider cannot make Parley call local ports.",
    ),
  LLM_PROVIDER_ALLOWED_HOSTS: z
    .string()
    .default('api.openai.com,*.openai.azure.com,127.0.0.1,localhost')
    .describe(
      "Comma-separated hosts a provider's `baseUrl` may name (`host`, `*.domain`, optional `:port`), checked when the catalog is changed and before each call. The default allows OpenAI, Azure OpenAI and this machine (the simulator); narrow it in production.",
    ),
  MCP_HTTP_ALLOWED_HOSTS: z
    .string()
    .default('127.0.0.1,localhost')
    .describe(
      "Comma-separated hosts an MCP client's `mcpConnectionUrl` may name (`host`, `*.domain`, optional `:port`), checked when the catalog is changed and before connecting. Empty: no streamable-HTTP or SSE MCP client may connect.",
    ),
  MCP_STDIO_COMMANDS: z
    .string()
    .default('npx @modelcontextprotocol/server-everything')
    .describe(
      "Comma-separated command lines a stdio MCP client may run: a client's `command` followed by its `args` must begin with one of them word for word (`node /opt/mcp/server.js`, `npx @scope/server`). Checked when the catalog is changed and again before spawning. Empty: no stdio MCP client may run. The default runs only the demo's server-everything.",
    ),

  OTEL_EXPORTER_OTLP_ENDPOINT: url(['http', 'https']).describe(
    'OTLP/HTTP endpoint that receives traces (`$endpoint/v1/traces`). Unset: no traces are exported.',
  ),
  OTEL_SERVICE_NAME: z.string().default('parley').describe('`service.name` of the exported traces.'),
});

export type Env = z.output<typeof envSchema>;
