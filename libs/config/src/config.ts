import type { z } from 'zod';
import { envSchema, type Env } from './config.schema';

const splitList = (value: string): string[] =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);

/** The typed configuration every module receives. Built once, at boot, by `loadConfig`. */
function toConfig(env: Env) {
  return {
    env: env.NODE_ENV,
    http: {
      port: env.PORT,
      host: env.HOST,
      bodyLimitBytes: env.HTTP_BODY_LIMIT_BYTES,
      /** Read the client address from X-Forwarded-For (behind a proxy). */
      trustProxy: env.HTTP_TRUST_PROXY,
    },
    log: { level: env.LOG_LEVEL },
    database: {
      /** null means: run the embedded PostgreSQL (PGlite) under `dataDir`. */
      url: env.DATABASE_URL ?? null,
      poolSize: env.DATABASE_POOL_SIZE,
      /** How long a query waits for a pool connection, and PostgreSQL's statement_timeout. */
      acquireTimeoutMs: env.DATABASE_ACQUIRE_TIMEOUT_MS,
      statementTimeoutMs: env.DATABASE_STATEMENT_TIMEOUT_MS,
      dataDir: env.PARLEY_DATA_DIR,
      /** shared_buffers of the embedded database (PGlite), in MB. */
      embeddedSharedBuffersMb: env.EMBEDDED_SHARED_BUFFERS_MB,
    },
    /** null means: no Redis, the in-process job queue and in-memory rate limits are used. */
    /** A job held longer than lockMs by a dead worker is given to another worker. */
    redis: { url: env.REDIS_URL ?? null, queueLockMs: env.QUEUE_LOCK_MS },
    /** On shutdown: how long running turns and jobs may go on before they are stopped and handed on. */
    shutdown: { graceMs: env.SHUTDOWN_GRACE_MS },
    /** null means: NATS is off. */
    nats: {
      url: env.NATS_URL ?? null,
      maxPayloadBytes: env.NATS_MAX_PAYLOAD_BYTES,
      user: env.NATS_USER ?? null,
      password: env.NATS_PASSWORD ?? null,
      nkeySeed: env.NATS_NKEY_SEED ?? null,
      credsFile: env.NATS_CREDS ?? null,
      tls: { caFile: env.NATS_TLS_CA ?? null, certFile: env.NATS_TLS_CERT ?? null, keyFile: env.NATS_TLS_KEY ?? null },
    },
    eventStore: {
      /** set: the KurrentDB adapter is used instead of PostgreSQL. */
      kurrentUrl: env.EVENTSTORE_URL ?? null,
      maxEventBytes: env.EVENT_MAX_BYTES,
      maxMetadataBytes: env.METADATA_MAX_BYTES,
      pollMs: env.SUBSCRIPTION_POLL_MS,
      /** The all-in-one server runs projections and relay on a worker thread (with DATABASE_URL). */
      projectorThread: env.PROJECTOR_THREAD,
      /** Memory for folded conversation states kept per process, in MiB (0: fold the whole stream on every load). */
      conversationCacheMb: env.CONVERSATION_CACHE_MB,
      /** Keys the hash chain (HMAC-SHA256); null: plain sha-256. */
      chainKey: env.EVENT_CHAIN_KEY ?? null,
      requireKeyedChain: env.EVENT_CHAIN_REQUIRE_KEYED,
      /** Seal conversation content with per-conversation data keys (crypto-shredding). */
      contentEncryption: env.CONTENT_ENCRYPTION,
    },
    prefix: env.PARLEY_PREFIX,
    security: {
      encryptionKey: env.PARLEY_ENCRYPTION_KEY ?? null,
      previousEncryptionKeys: splitList(env.PARLEY_PREVIOUS_ENCRYPTION_KEYS ?? ''),
      adminApiKey: env.PARLEY_ADMIN_API_KEY ?? null,
      authEnabled: env.PARLEY_AUTH_ENABLED,
      /** How long a key that authenticated is trusted without a database lookup (0: every request looks). */
      apiKeyCacheMs: env.API_KEY_CACHE_MS,
      publicPaths: splitList(env.PARLEY_PUBLIC_PATHS),
      jwt: {
        secret: env.JWT_SECRET ?? null,
        jwksUrl: env.JWT_JWKS_URL ?? null,
        issuer: env.JWT_ISSUER ?? null,
        audience: env.JWT_AUDIENCE ?? null,
        maxAgeSeconds: env.JWT_MAX_AGE_SECONDS,
        rolesClaim: env.JWT_ROLES_CLAIM,
      },
    },
    limits: {
      maxMessageChars: env.MAX_MESSAGE_CHARS,
      maxAttachments: env.MAX_ATTACHMENTS,
      attachmentAllowedHosts: splitList(env.ATTACHMENT_ALLOWED_HOSTS),
      rateLimitPerMinute: env.RATE_LIMIT_PER_MINUTE,
      maxRunningTurnsPerSubject: env.MAX_RUNNING_TURNS_PER_SUBJECT,
      rateLimitPerIpPerMinute: env.RATE_LIMIT_PER_IP_PER_MINUTE,
      /** The longest a command's `wait` holds its request. */
      maxWaitMs: env.MAX_WAIT_MS,
    },
    sse: {
      maxStreamsPerSubject: env.SSE_MAX_STREAMS_PER_SUBJECT,
      maxStreams: env.SSE_MAX_STREAMS,
      maxBufferedBytes: env.SSE_MAX_BUFFERED_BYTES,
      credentialCheckMs: env.SSE_CREDENTIAL_CHECK_MS,
    },
    /**
     * Configuration by environment alone (seed 004 §11): with `runtimeUrl`, the catalog keeps a
     * provider, model, agent and action for generate; its limits are seed 004's unless set.
     */
    generate: {
      runtimeUrl: env.LLM_RUNTIME_URL ?? null,
      runtimeApiKey: env.LLM_RUNTIME_API_KEY,
      modelName: env.DEFAULT_MODEL_NAME ?? 'default',
      runtimeTools: env.LLM_RUNTIME_TOOLS,
      mcpProxyUrl: env.MCP_PROXY_URL ?? null,
      maxToolSteps: env.MAX_TOOL_STEPS ?? 3,
      maxPromptTokens: env.MAX_PROMPT_TOKENS ?? 4096,
      maxCompletionTokens: env.MAX_COMPLETION_TOKENS ?? 512,
      maxTotalTokens: env.MAX_TOTAL_TOKENS ?? 5120,
      /** Attempts per model call in all: one retry on transient errors. */
      retryCount: 2,
    },
    llm: {
      defaultModelName: env.DEFAULT_MODEL_NAME ?? null,
      enableJsonMode: env.ENABLE_JSON_MODE,
      callTimeoutMs: env.LLM_CALL_TIMEOUT_MS,
      retryCount: env.LLM_RETRY_COUNT,
      retryDelayMs: env.LLM_RETRY_DELAY_MS,
      /** Per provider: consecutive retryable failures that open the circuit, and how long it stays open. */
      breakerFailures: env.LLM_BREAKER_FAILURES,
      breakerCooldownMs: env.LLM_BREAKER_COOLDOWN_MS,
      /** The responseCache advisor: entry lifetime, and the in-memory LRU's size without Redis. */
      advisorCacheTtlMs: env.ADVISOR_CACHE_TTL_MS,
      advisorCacheMaxEntries: env.ADVISOR_CACHE_MAX_ENTRIES,
      /** Texts per `/v1/embeddings` request. */
      embeddingBatchSize: env.EMBEDDING_BATCH_SIZE,
      /** pgvector's `hnsw.ef_search` for every search of an HNSW store. */
      hnswEfSearch: env.VECTOR_HNSW_EF_SEARCH,
      /** pgvector's HNSW index as Parley creates it (`m`, `ef_construction`, the build's memory). */
      hnswM: env.VECTOR_HNSW_M,
      hnswEfConstruction: env.VECTOR_HNSW_EF_CONSTRUCTION,
      hnswBuildMemoryMb: env.VECTOR_HNSW_BUILD_MEMORY_MB,
      /** Collections of fewer chunks a pgvector store searches exactly. */
      vectorExactBelow: env.VECTOR_EXACT_BELOW,
      /** MB of collections' vectors each vector store keeps in process for its exact searches. */
      vectorCacheMb: env.VECTOR_CACHE_MB,
      /** Which index searches a pgvector store's large collections, and MB of in-process graphs per store. */
      vectorIndex: env.VECTOR_INDEX,
      vectorGraphMb: env.VECTOR_GRAPH_MB,
    },
    /** Long-term memory: the embedding model's catalog code (null: the only one), and default lifetimes. */
    memory: {
      embeddingModel: env.MEMORY_EMBEDDING_MODEL ?? null,
      sessionTtlDays: env.MEMORY_SESSION_TTL_DAYS,
      ttlDays: env.MEMORY_TTL_DAYS,
      minSimilarity: env.MEMORY_MIN_SIMILARITY,
    },
    /** Document ingestion into collections (libs/knowledge). */
    ingestion: {
      chunkTokens: env.CHUNK_TOKENS,
      chunkOverlap: env.CHUNK_OVERLAP,
      maxBytes: env.INGEST_MAX_BYTES,
      batchSize: env.INGEST_BATCH_SIZE,
    },
    /** Service-wide turn limits; an action's configuration may override each. */
    turn: {
      maxToolSteps: env.MAX_TOOL_STEPS ?? 10,
      maxToolCallsPerReply: env.MAX_TOOL_CALLS_PER_REPLY,
      maxPromptTokens: env.MAX_PROMPT_TOKENS ?? null,
      maxCompletionTokens: env.MAX_COMPLETION_TOKENS ?? null,
      maxTotalTokens: env.MAX_TOTAL_TOKENS ?? null,
      timeoutMs: env.TURN_TIMEOUT_MS,
      maxToolOutputBytes: env.MAX_TOOL_OUTPUT_BYTES,
      toolCallTimeoutMs: env.TOOL_CALL_TIMEOUT_MS,
      questionTimeoutMs: env.QUESTION_TIMEOUT_MS,
      toolApprovalTimeoutMs: env.TOOL_APPROVAL_TIMEOUT_MS,
      stuckAfterMs: env.STUCK_AFTER_MS,
      /** How a streamed reply is cut into ChunksReceived events: by time since a batch's first delta (growing), and by size. */
      streamEventFirstMs: env.STREAM_EVENT_FIRST_MS,
      streamEventWindowMs: env.STREAM_EVENT_WINDOW_MS,
      streamEventMaxWindowMs: Math.max(env.STREAM_EVENT_MAX_WINDOW_MS, env.STREAM_EVENT_WINDOW_MS),
      streamEventMaxChars: env.STREAM_EVENT_MAX_CHARS,
      /** How often a command waiting for a turn run elsewhere reads the stream when no announcement came. */
      waitPollMs: env.TURN_WAIT_POLL_MS,
      /** max_tokens of a budgeted model call that sets none (docs/budgets.md). */
      budgetMaxTokens: env.BUDGET_MAX_TOKENS,
      /** How long the budgets that apply to a spender are reused (docs/budgets.md). */
      budgetsCacheMs: env.BUDGETS_CACHE_MS,
    },
    tools: { httpAllowedHosts: splitList(env.TOOL_HTTP_ALLOWED_HOSTS) },
    /** Where catalog providers and MCP clients may point, and which stdio MCP servers may run. */
    catalog: {
      providerAllowedHosts: splitList(env.LLM_PROVIDER_ALLOWED_HOSTS),
      /** Where a provider a client owns may point, within providerAllowedHosts. */
      selfServiceProviderAllowedHosts: splitList(env.SELF_SERVICE_PROVIDER_ALLOWED_HOSTS),
      mcpHttpAllowedHosts: splitList(env.MCP_HTTP_ALLOWED_HOSTS),
      mcpStdioCommands: splitList(env.MCP_STDIO_COMMANDS),
    },
    telemetry: {
      otlpEndpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT ?? null,
      serviceName: env.OTEL_SERVICE_NAME,
    },
  };
}

export type Config = ReturnType<typeof toConfig>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Parley cannot start; fix the configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

function describeIssue(issue: z.core.$ZodIssue, env: Record<string, string | undefined>): string {
  const name = String(issue.path[0] ?? 'environment');
  const given = env[name];
  const shown = given === undefined ? 'it is not set' : `got "${redact(name, given)}"`;
  return `${name}: ${issue.message} (${shown})`;
}

function redact(name: string, value: string): string {
  return /KEY|SECRET|PASSWORD|TOKEN/.test(name) ? '***' : value.length > 80 ? `${value.slice(0, 77)}...` : value;
}

/**
 * Parses the environment once. Empty strings count as unset, so `FOO=` in a .env file does not
 * turn into a malformed value. Throws ConfigError naming every bad variable.
 */
export function loadConfig(source: Record<string, string | undefined> = process.env): Config {
  const env = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v.trim() !== ''));
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((i) => describeIssue(i, env)));
  const problems = [
    ...productionProblems(parsed.data),
    ...jwtProblems(parsed.data),
    ...natsCredentialProblems(parsed.data),
    ...(parsed.data.CHUNK_OVERLAP >= parsed.data.CHUNK_TOKENS
      ? [
          `CHUNK_OVERLAP: expected fewer tokens than CHUNK_TOKENS (${parsed.data.CHUNK_TOKENS}), got ${parsed.data.CHUNK_OVERLAP}`,
        ]
      : []),
  ];
  if (problems.length > 0) throw new ConfigError(problems);
  return toConfig(parsed.data);
}

function productionProblems(env: Env): string[] {
  if (env.NODE_ENV !== 'production') return [];
  const problems: string[] = [];
  if (!env.PARLEY_ENCRYPTION_KEY)
    problems.push('PARLEY_ENCRYPTION_KEY: required in production, expected a 256-bit key (it is not set)');
  if (!env.PARLEY_AUTH_ENABLED)
    problems.push('PARLEY_AUTH_ENABLED: false is refused in production, it would run every request as an admin');
  return problems;
}

function jwtProblems(env: Env): string[] {
  if (!env.JWT_SECRET && !env.JWT_JWKS_URL) return [];
  const problems: string[] = [];
  for (const name of ['JWT_ISSUER', 'JWT_AUDIENCE'] as const)
    if (!env[name]) problems.push(`${name}: required when JWT_SECRET or JWT_JWKS_URL is set (it is not set)`);
  if (env.JWT_JWKS_URL && !jwksUrlAllowed(new URL(env.JWT_JWKS_URL), env.NODE_ENV))
    problems.push(
      `JWT_JWKS_URL: expected https://, or http:// to localhost or 127.0.0.1 outside production (got "${env.JWT_JWKS_URL}")`,
    );
  return problems;
}

/** Keys fetched over plain http could be swapped on the way: only a local issuer may use it, and not in production. */
function jwksUrlAllowed(url: URL, nodeEnv: Env['NODE_ENV']): boolean {
  if (url.protocol === 'https:') return true;
  return nodeEnv !== 'production' && ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
}

/** One way to authenticate to NATS at a time, each complete; a client certificate needs its key. */
function natsCredentialProblems(env: Env): string[] {
  const problems: string[] = [];
  const inUrl = env.NATS_URL ? new URL(env.NATS_URL).username !== '' : false;
  const ways = [
    inUrl && 'user:password in NATS_URL',
    env.NATS_USER && 'NATS_USER',
    env.NATS_NKEY_SEED && 'NATS_NKEY_SEED',
    env.NATS_CREDS && 'NATS_CREDS',
  ].filter((w): w is string => typeof w === 'string');
  if (ways.length > 1) problems.push(`NATS_USER: set one way to authenticate to NATS, not ${ways.join(' and ')}`);
  if (env.NATS_USER && !env.NATS_PASSWORD) problems.push('NATS_PASSWORD: required with NATS_USER (it is not set)');
  if (env.NATS_PASSWORD && !env.NATS_USER) problems.push('NATS_USER: required with NATS_PASSWORD (it is not set)');
  if (Boolean(env.NATS_TLS_CERT) !== Boolean(env.NATS_TLS_KEY))
    problems.push('NATS_TLS_KEY: NATS_TLS_CERT and NATS_TLS_KEY go together (one is not set)');
  return problems;
}
