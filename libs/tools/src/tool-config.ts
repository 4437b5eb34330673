import { z } from 'zod';

/**
 * How a catalog tool is executed, by kind (seeds 000, 002, 003). The catalog stores the
 * validated object; the executors read it. Secret fields (passwords, client secrets) are
 * encrypted at rest by the catalog and never returned by any API.
 */

/** A parameter of seed 002: inferred from the model's arguments, or a static `value`, or `ignore`d. */
export const toolParameterSchema = z.strictObject({
  parameter: z.string().min(1).max(64),
  type: z.enum(['string', 'number', 'boolean', 'object']),
  description: z.string().max(2000).optional(),
  ignore: z.boolean().default(false),
  value: z.unknown().optional(),
});

export const basicAuthSchema = z.strictObject({
  auth: z.literal('basic'),
  basic: z.strictObject({ username: z.string().min(1), password: z.string().min(1) }),
});

export const bearerAuthSchema = z.strictObject({
  auth: z.literal('bearer'),
  bearer: z.discriminatedUnion('clientType', [
    z.strictObject({
      clientType: z.literal('client_credentials'),
      clientId: z.string().min(1),
      clientSecret: z.string().min(1),
      audience: z.string().optional(),
      tokenUrl: z.url(),
      refreshUrl: z.url().optional(),
    }),
    z.strictObject({
      clientType: z.literal('password'),
      clientId: z.string().optional(),
      clientSecret: z.string().optional(),
      username: z.string().min(1),
      password: z.string().min(1),
      audience: z.string().optional(),
      tokenUrl: z.url(),
      refreshUrl: z.url().optional(),
    }),
  ]),
});

export const noAuthSchema = z.strictObject({ auth: z.literal('none') });

export const httpRequestSchema = z.discriminatedUnion('auth', [noAuthSchema, basicAuthSchema, bearerAuthSchema]);

export const httpToolConfigSchema = z.strictObject({
  kind: z.literal('http'),
  url: z.url(),
  method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']).default('POST'),
  /** Absent: an unauthenticated POST of the tool-call details (seed 002's default). */
  request: httpRequestSchema.optional(),
  headers: z.record(z.string(), z.string()).default({}),
  schema: z.array(toolParameterSchema).default([]),
});

export const emitterToolConfigSchema = z.strictObject({
  kind: z.literal('emitter'),
  /** `<resource>.<scope>`: the NATS subject the tool-matching event is published to. */
  emitter: z.string().regex(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_.-]+$/, { message: 'expected <resource>.<scope>' }),
  schema: z.array(toolParameterSchema).default([]),
});

export const remoteToolConfigSchema = z.strictObject({
  kind: z.literal('remote'),
  /** `<resource>.<scope>`: the NATS subject (JetStream) the SkillInvocationEvent is published on. */
  subject: z.string().regex(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_.-]+$/, { message: 'expected <resource>.<scope>' }),
  /** The invocation's `skillName`; default: the tool's code. */
  skillName: z.string().min(1).max(128).optional(),
  /** How long the turn waits for the completion; default TOOL_CALL_TIMEOUT_MS, never past the turn's deadline. */
  timeoutMs: z.number().int().min(100).max(86_400_000).optional(),
  schema: z.array(toolParameterSchema).default([]),
});

export const inProcessToolConfigSchema = z.strictObject({
  kind: z.literal('in_process'),
  /** The name the in-process tool is registered under (the seed's llmToolBeanName). */
  beanName: z.string().min(1).max(128),
});

export const mcpToolConfigSchema = z.strictObject({
  kind: z.literal('mcp'),
  mcpClient: z.string().min(1).max(64),
  toolName: z.string().min(1).max(128),
});

export const toolConfigSchema = z.discriminatedUnion('kind', [
  inProcessToolConfigSchema,
  httpToolConfigSchema,
  emitterToolConfigSchema,
  remoteToolConfigSchema,
  mcpToolConfigSchema,
]);

export type ToolParameter = z.output<typeof toolParameterSchema>;
export type HttpToolConfig = z.output<typeof httpToolConfigSchema>;
export type ToolConfig = z.output<typeof toolConfigSchema>;

/** Paths inside a ToolConfig that hold secrets: encrypted at rest, write-only in APIs. */
export const TOOL_SECRET_PATHS = [
  'request.basic.password',
  'request.bearer.clientSecret',
  'request.bearer.password',
] as const;
