import { z } from 'zod';

/**
 * Every setting Parley reads, in one schema. Each entry names the environment variable it
 * comes from; `describe` texts end up in boot errors, so they say what a value must look like.
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
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: int(3000, 0),
  HOST: z.string().min(1).default('0.0.0.0'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),

  DATABASE_URL: url(['postgres', 'postgresql']),
  DATABASE_POOL_SIZE: int(10, 1),
  PARLEY_DATA_DIR: z.string().min(1).default('.parley'),
  REDIS_URL: url(['redis', 'rediss']),
  NATS_URL: url(['nats', 'tls']),
  EVENTSTORE_URL: url(['esdb', 'kurrentdb', 'esdb+discover', 'kurrentdb+discover', 'kurrent']),
  PARLEY_PREFIX: z
    .string()
    .regex(/^[a-z][a-z0-9_-]{0,31}$/, { message: 'expected lower-case letters, digits, - or _' })
    .default('parley'),

  PARLEY_ENCRYPTION_KEY: key256.optional(),
  PARLEY_PREVIOUS_ENCRYPTION_KEYS: z.string().optional(),
  PARLEY_ADMIN_API_KEY: z.string().min(16, { message: 'expected at least 16 characters' }).optional(),
  PARLEY_AUTH_ENABLED: bool(true),
  API_KEY_CACHE_MS: int(5_000, 0),
  PARLEY_PUBLIC_PATHS: z.string().default('/health,/health/ready,/metrics'),
  JWT_SECRET: z.string().min(32, { message: 'expected at least 32 characters' }).optional(),
  JWT_JWKS_URL: url(['http', 'https']),
  JWT_ISSUER: z.string().optional(),
  JWT_AUDIENCE: z.string().optional(),

  HTTP_BODY_LIMIT_BYTES: int(1_048_576, 1024),
  NATS_MAX_PAYLOAD_BYTES: int(1_048_576, 1024),
  MAX_MESSAGE_CHARS: int(100_000, 1),
  MAX_ATTACHMENTS: int(10, 0),
  RATE_LIMIT_PER_MINUTE: int(600, 1),
  MAX_RUNNING_TURNS_PER_SUBJECT: int(20, 1),

  EVENT_MAX_BYTES: int(2 * 1_048_576, 1024),
  SUBSCRIPTION_POLL_MS: int(200, 10),
  CONVERSATION_CACHE_MB: int(128, 0),

  DEFAULT_MODEL_NAME: z.string().min(1).optional(),
  MAX_TOOL_STEPS: int(10, 1),
  MAX_PROMPT_TOKENS: optionalInt(),
  MAX_COMPLETION_TOKENS: optionalInt(),
  MAX_TOTAL_TOKENS: optionalInt(),
  ENABLE_JSON_MODE: bool(true),
  TURN_TIMEOUT_MS: int(300_000, 1000),
  LLM_CALL_TIMEOUT_MS: int(60_000, 100),
  LLM_RETRY_COUNT: int(3, 0),
  LLM_RETRY_DELAY_MS: int(500, 0),
  LLM_BREAKER_FAILURES: int(5, 1),
  LLM_BREAKER_COOLDOWN_MS: int(30_000, 10),
  MAX_TOOL_OUTPUT_BYTES: int(65_536, 256),
  TOOL_CALL_TIMEOUT_MS: int(30_000, 100),
  QUESTION_TIMEOUT_MS: int(300_000, 1000),
  STUCK_AFTER_MS: int(600_000, 1000),
  TURN_WAIT_POLL_MS: int(100, 10),
  QUEUE_LOCK_MS: int(30_000, 500),
  TOOL_HTTP_ALLOWED_HOSTS: z.string().default(''),

  OTEL_EXPORTER_OTLP_ENDPOINT: url(['http', 'https']),
  OTEL_SERVICE_NAME: z.string().default('parley'),
});

export type Env = z.output<typeof envSchema>;
