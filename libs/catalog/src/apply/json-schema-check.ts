import type { FieldProblem } from '@parley/core';
import Ajv from 'ajv';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

/**
 * A DomainSchema document must be a JSON Schema: checked against the meta-schema of its
 * `$schema` dialect (2020-12 when it says so, draft-07 otherwise), then compiled, which also
 * catches references that lead nowhere.
 */
const draft07 = addFormats(new Ajv({ strict: false, allErrors: true }));
const draft2020 = addFormats(new Ajv2020({ strict: false, allErrors: true }));

export function jsonSchemaProblems(path: string, document: Record<string, unknown>): FieldProblem[] {
  const ajv = String(document.$schema ?? '').includes('2020-12') ? draft2020 : draft07;
  if (!ajv.validateSchema(document)) {
    return (ajv.errors ?? []).map((e) => ({
      path: `${path}${e.instancePath.replace(/\//g, '.')}`,
      message: `not a valid JSON Schema: ${e.message ?? 'invalid'}`,
    }));
  }
  try {
    ajv.compile(document);
    return [];
  } catch (err) {
    return [{ path, message: `not a valid JSON Schema: ${(err as Error).message}` }];
  } finally {
    ajv.removeSchema(document);
  }
}
