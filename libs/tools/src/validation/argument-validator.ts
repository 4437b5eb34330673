import { Injectable } from '@nestjs/common';
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import Ajv2019 from 'ajv/dist/2019';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { LRUCache } from 'lru-cache';
import { ToolFailure } from '../tool-outcome';

type AjvInstance = Ajv | Ajv2019 | Ajv2020;

/** Compiled schemas kept at most. */
export const MAX_COMPILED = 500;

function withFormats<T extends AjvInstance>(ajv: T): T {
  addFormats(ajv as Ajv);
  return ajv;
}

/**
 * Checks a tool call's arguments against the tool's JSON Schema before anything runs. Schemas
 * are compiled once each (keyed by their JSON text); the dialect follows `$schema`, since MCP
 * servers publish 2020-12 schemas and hand-written ones are usually draft-07.
 */
@Injectable()
export class ArgumentValidator {
  // strict: false, because tool schemas carry keywords from other vocabularies (titles, examples).
  private readonly draft07 = withFormats(new Ajv({ allErrors: true, strict: false }));
  private readonly draft2019 = withFormats(new Ajv2019({ allErrors: true, strict: false }));
  private readonly draft2020 = withFormats(new Ajv2020({ allErrors: true, strict: false }));
  /**
   * Schemas come from the catalog, MCP servers and conversations' tool repositories, so their
   * number has no bound of its own: the least recently used are dropped past MAX_COMPILED, from
   * Ajv's own cache too.
   */
  private readonly compiled = new LRUCache<string, { validate: ValidateFunction; ajv: AjvInstance; schema: object }>({
    max: MAX_COMPILED,
    dispose: ({ ajv, schema }) => void ajv.removeSchema(schema),
  });

  /** How many compiled schemas are kept (at most MAX_COMPILED). */
  get compiledCount(): number {
    return this.compiled.size;
  }

  /** Parses and validates the model's argument text; throws ToolFailure(INVALID_ARGUMENTS). */
  parse(rawArguments: string, schema: Record<string, unknown>): Record<string, unknown> {
    const args = parseJson(rawArguments);
    const validate = this.compile(schema);
    if (!validate(args)) {
      const problems = (validate.errors ?? []).map(describe);
      throw new ToolFailure(
        'INVALID_ARGUMENTS',
        `The arguments do not match the tool's parameters; fix these and call again:\n${problems.join('\n')}`,
      );
    }
    return args;
  }

  /**
   * Checks a tool's output text against its output schema (its llmSchemaOutput); throws
   * ToolFailure(INVALID_OUTPUT) naming each problem when the text is not JSON or does not match.
   */
  checkOutput(output: string, schema: Record<string, unknown>, toolName: string): void {
    let value: unknown;
    try {
      value = JSON.parse(output);
    } catch {
      throw new ToolFailure(
        'INVALID_OUTPUT',
        `Tool '${toolName}' answered with text that is not JSON; its output schema asks for JSON.`,
      );
    }
    const validate = this.compile(schema);
    if (!validate(value)) {
      const problems = (validate.errors ?? []).map(describe);
      throw new ToolFailure(
        'INVALID_OUTPUT',
        `Tool '${toolName}' answered with output that does not match its output schema:\n${problems.join('\n')}`,
      );
    }
  }

  private compile(schema: Record<string, unknown>): ValidateFunction {
    const key = JSON.stringify(schema);
    const kept = this.compiled.get(key);
    if (kept) return kept.validate;
    const ajv = this.dialect(schema);
    let validate: ValidateFunction;
    try {
      validate = ajv.compile(schema);
    } catch (err) {
      throw new ToolFailure(
        'UNAVAILABLE',
        `The tool's parameter schema is not valid JSON Schema: ${(err as Error).message}`,
      );
    }
    this.compiled.set(key, { validate, ajv, schema });
    return validate;
  }

  private dialect(schema: Record<string, unknown>): AjvInstance {
    const declared = typeof schema.$schema === 'string' ? schema.$schema : '';
    if (declared.includes('2020-12')) return this.draft2020;
    if (declared.includes('2019-09')) return this.draft2019;
    return this.draft07;
  }
}

function parseJson(rawArguments: string): Record<string, unknown> {
  // Models send an empty string for a call without arguments.
  if (rawArguments.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(rawArguments);
  } catch (err) {
    throw new ToolFailure(
      'INVALID_ARGUMENTS',
      `The arguments are not valid JSON (${(err as Error).message}); send one JSON object.`,
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ToolFailure(
      'INVALID_ARGUMENTS',
      'The arguments must be one JSON object, with the parameters as its keys.',
    );
  }
  return value as Record<string, unknown>;
}

/** One line per problem, with the JSON pointer of the offending value, as the model must fix it. */
function describe(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required') return `- ${error.instancePath}/${String(params.missingProperty)}: is required`;
  if (error.keyword === 'additionalProperties') {
    return `- ${error.instancePath}/${String(params.additionalProperty)}: is not a parameter of this tool`;
  }
  const where = error.instancePath === '' ? '(the arguments object)' : error.instancePath;
  const allowed =
    error.keyword === 'enum'
      ? ` (${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')})`
      : '';
  return `- ${where}: ${error.message ?? 'is not valid'}${allowed}`;
}
