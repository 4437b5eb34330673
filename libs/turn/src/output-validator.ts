import type { OutputSchema } from '@parley/core';
import type { OutputCheck, OutputProblem } from '@parley/domain';
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import Ajv2019 from 'ajv/dist/2019';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { LRUCache } from 'lru-cache';

type AjvInstance = Ajv | Ajv2019 | Ajv2020;

/** Compiled output schemas kept at most. */
export const MAX_COMPILED_OUTPUT_SCHEMAS = 200;

function withFormats<T extends AjvInstance>(ajv: T): T {
  addFormats(ajv as Ajv);
  return ajv;
}

/**
 * Checks a turn's final reply against the action's output schema (seed 000 llmSchemaOutput):
 * the text parsed as JSON (one fenced ```json block is taken for the JSON it holds), validated
 * with ajv, unwrapped from the response format's wrapper. The worker records what it finds
 * (OutputValidated), so a replay never validates again. Schemas compile once each, keyed by their
 * JSON text; the least recently used are dropped past MAX_COMPILED_OUTPUT_SCHEMAS.
 */
export class OutputValidator {
  private readonly draft07 = withFormats(new Ajv({ allErrors: true, strict: false }));
  private readonly draft2019 = withFormats(new Ajv2019({ allErrors: true, strict: false }));
  private readonly draft2020 = withFormats(new Ajv2020({ allErrors: true, strict: false }));
  private readonly compiled = new LRUCache<string, { validate: ValidateFunction; ajv: AjvInstance; schema: object }>({
    max: MAX_COMPILED_OUTPUT_SCHEMAS,
    dispose: ({ ajv, schema }) => void ajv.removeSchema(schema),
  });

  get compiledCount(): number {
    return this.compiled.size;
  }

  check(text: string | null, schema: OutputSchema): OutputCheck {
    let value: unknown;
    try {
      value = JSON.parse(jsonText(text ?? ''));
    } catch (err) {
      return {
        valid: false,
        errors: [{ path: '', message: `is not valid JSON (${(err as Error).message}); reply with JSON only` }],
      };
    }
    let validate: ValidateFunction;
    try {
      validate = this.compile(schema.jsonSchema);
    } catch (err) {
      // The catalog accepted a schema ajv cannot compile: no reply can match it.
      return {
        valid: false,
        errors: [{ path: '', message: `the output schema does not compile: ${(err as Error).message}` }],
      };
    }
    if (!validate(value)) return { valid: false, errors: (validate.errors ?? []).map(problemOf) };
    const output = schema.unwrap && isObject(value) ? value[schema.unwrap] : value;
    return { valid: true, output };
  }

  private compile(schema: Record<string, unknown>): ValidateFunction {
    const key = JSON.stringify(schema);
    const kept = this.compiled.get(key);
    if (kept) return kept.validate;
    const declared = typeof schema.$schema === 'string' ? schema.$schema : '';
    const ajv = declared.includes('2020-12')
      ? this.draft2020
      : declared.includes('2019-09')
        ? this.draft2019
        : this.draft07;
    const validate = ajv.compile(schema);
    this.compiled.set(key, { validate, ajv, schema });
    return validate;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The reply's JSON: the whole text, or the body of its one fenced code block. */
function jsonText(text: string): string {
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n?```\s*$/i.exec(text);
  return fenced ? fenced[1] : text;
}

/** A problem with the JSON pointer of the offending value, as the model must fix it. */
function problemOf(error: ErrorObject): OutputProblem {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required') {
    return { path: `${error.instancePath}/${String(params.missingProperty)}`, message: 'is required' };
  }
  if (error.keyword === 'additionalProperties') {
    return { path: `${error.instancePath}/${String(params.additionalProperty)}`, message: 'is not allowed' };
  }
  return { path: error.instancePath, message: error.message ?? error.keyword };
}
