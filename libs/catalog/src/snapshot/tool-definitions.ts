import type { DisclosableSkill, ToolDefinition } from '@parley/core';
import type { ToolConfig, ToolParameter } from '@parley/tools';
import type { Row } from '../model/entity-schemas';

/**
 * How catalog tools look to the model. Names are function-name safe and unique; parameters
 * are the tool's input DomainSchema, else derived from seed 002's `schema` parameters. Ignored
 * parameters and those with a static `value` are left out: the executor fills the static values
 * in at call time, so they never reach the model, the snapshot or the events.
 */
const EMPTY_OBJECT = { type: 'object', properties: {} };

const functionName = (text: string): string => text.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64) || 'tool';

export function toolDefinition(
  tool: Row,
  inputSchema: Record<string, unknown> | null,
  outputSchema: Record<string, unknown> | null = null,
): ToolDefinition {
  const config = tool.config as ToolConfig;
  return {
    name: functionName(String(tool.code)),
    description: String(tool.description ?? tool.code),
    parameters: inputSchema ?? parametersOf(config),
    kind: config.kind,
    ref: config.kind === 'mcp' ? `${config.mcpClient}/${config.toolName}` : String(tool.code),
    approval: tool.approval === 'always' ? 'always' : 'never',
    idempotent: tool.idempotent === true,
    returnDirect: tool.returnDirect === true,
    skipResponse: tool.skipResponse === true,
    ...(outputSchema ? { outputSchema } : {}),
  };
}

function parametersOf(config: ToolConfig): Record<string, unknown> {
  if (config.kind !== 'http' && config.kind !== 'emitter' && config.kind !== 'remote') return EMPTY_OBJECT;
  const inferred = config.schema.filter((p) => !p.ignore && p.value === undefined);
  return {
    type: 'object',
    properties: Object.fromEntries(inferred.map((p) => [p.parameter, parameterSchema(p)])),
    required: inferred.map((p) => p.parameter),
    additionalProperties: false,
  };
}

function parameterSchema(p: ToolParameter): Record<string, unknown> {
  return { type: p.type, ...(p.description ? { description: p.description } : {}) };
}

/** The function a model calls to load a skill disclosed on request (seed 003). */
export function skillToolDefinition(skill: DisclosableSkill): ToolDefinition {
  return {
    name: functionName(`use_skill_${skill.code}`),
    description: `Load the skill '${skill.code}' (${skill.description}): its instructions and the tools it needs.`,
    parameters: EMPTY_OBJECT,
    kind: 'skill',
    ref: skill.code,
    approval: 'never',
    idempotent: true,
    returnDirect: false,
    skipResponse: false,
  };
}

/** Seed 000's AskUserQuestion: the model pauses the conversation to ask a person. */
export const ASK_USER_QUESTION_TOOL: ToolDefinition = {
  name: 'AskUserQuestion',
  description:
    'Ask the user one or more questions and wait for the answers. Use it when you need information only the user has.',
  parameters: {
    type: 'object',
    required: ['questions'],
    additionalProperties: false,
    properties: {
      questions: {
        type: 'array',
        minItems: 1,
        items: {
          type: 'object',
          required: ['key', 'question'],
          additionalProperties: false,
          properties: {
            key: { type: 'string', description: 'Short identifier the answer is returned under' },
            question: { type: 'string' },
            required: { type: 'boolean', description: 'Whether an answer is mandatory (default true)' },
            options: { type: 'array', items: { type: 'string' }, description: 'Choices, if the answer is one of them' },
          },
        },
      },
    },
  },
  kind: 'ask_user_question',
  ref: 'AskUserQuestion',
  approval: 'never',
  idempotent: false,
  returnDirect: false,
  skipResponse: false,
};

const memoryTool = (name: 'remember' | 'recall', description: string, parameters: Record<string, unknown>) => ({
  name,
  description,
  parameters,
  kind: 'memory' as const,
  ref: name,
  approval: 'never' as const,
  // The same fact is refreshed, never repeated, and a search changes nothing: both may run again after a crash.
  idempotent: true,
  returnDirect: false,
  skipResponse: false,
});

/** Long-term memory's tools (an action's `longTermMemory`): store a fact, search the facts. */
export const MEMORY_TOOLS: ToolDefinition[] = [
  memoryTool(
    'remember',
    'Store a fact in long-term memory so that later conversations can recall it. Scope: user (default: about this user), session (this conversation), agent (what you learned as this agent), organisation (for everyone).',
    {
      type: 'object',
      required: ['fact'],
      additionalProperties: false,
      properties: {
        fact: {
          type: 'string',
          minLength: 1,
          maxLength: 2000,
          description: 'The fact, in one self-contained sentence',
        },
        scope: { type: 'string', enum: ['session', 'user', 'agent', 'organisation'] },
        importance: { type: 'number', minimum: 0, maximum: 1, description: 'How much it matters (default 0.5)' },
        ttlDays: { type: 'number', exclusiveMinimum: 0, description: 'Days to keep it (default: the scope’s)' },
      },
    },
  ),
  memoryTool('recall', 'Search long-term memory for facts relevant to a query, best first.', {
    type: 'object',
    required: ['query'],
    additionalProperties: false,
    properties: {
      query: { type: 'string', minLength: 1, maxLength: 2000 },
      limit: { type: 'integer', minimum: 1, maximum: 20, description: 'Facts to return (default 5)' },
    },
  }),
];

/** Drops repeated tools (a tool both on the action and in a skill) and keeps names unique. */
export function uniqueTools(tools: ToolDefinition[]): ToolDefinition[] {
  const seenRefs = new Set<string>();
  const names = new Set<string>();
  const result: ToolDefinition[] = [];
  for (const tool of tools) {
    if (seenRefs.has(`${tool.kind}:${tool.ref}`)) continue;
    seenRefs.add(`${tool.kind}:${tool.ref}`);
    let name = tool.name;
    for (let n = 2; names.has(name); n++) name = `${tool.name.slice(0, 60)}_${n}`;
    names.add(name);
    result.push({ ...tool, name });
  }
  return result;
}
