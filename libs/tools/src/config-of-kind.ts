import type { ToolDefinition } from '@parley/core';
import { DomainError } from '@parley/core';
import type { ToolConfig } from './tool-config';
import type { ToolConfigSource } from './tool-config.source';
import { ToolFailure } from './tool-outcome';

/** The catalog config of the tool `def.ref`, which must be of the kind the snapshot says. */
export async function configOfKind<K extends ToolConfig['kind']>(
  source: ToolConfigSource,
  def: ToolDefinition,
  kind: K,
): Promise<Extract<ToolConfig, { kind: K }>> {
  let config: ToolConfig;
  try {
    config = await source.configFor(def.ref);
  } catch (err) {
    if (err instanceof DomainError)
      throw new ToolFailure('UNAVAILABLE', `Tool '${def.name}' is not available: ${err.message}`);
    throw err;
  }
  if (config.kind !== kind) {
    throw new ToolFailure('UNAVAILABLE', `Tool '${def.name}' is configured as ${config.kind}, not ${kind}.`);
  }
  return config as Extract<ToolConfig, { kind: K }>;
}
