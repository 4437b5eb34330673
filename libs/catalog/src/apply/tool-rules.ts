import type { FieldProblem } from '@parley/core';
import { toolConfigSchema } from '@parley/tools';
import type { Row } from '../model/entity-schemas';
import type { Secret } from '../secrets/secret-specs';
import { completeToolConfig } from '../secrets/tool-secrets';
import { issueProblems } from './bundle-schemas';
import type { BundleItem } from './parse-bundle';

/**
 * Completes and validates a tool's execution config (libs/tools' schemas). A bare
 * `llmToolBeanName` is the seed's in-process tool. Secret values the request leaves out are
 * taken from the stored tool, so a config can be updated without repeating its password
 * (unless its URL now points elsewhere).
 */
export function prepareTool(item: BundleItem, stored: { record: Row; secret: Secret | null } | null): FieldProblem[] {
  const { path, values } = item;
  const beanName = values.llmToolBeanName as string | null;
  const config = (values.config as Row | null) ?? (beanName ? { kind: 'in_process', beanName } : null);
  if (!config) {
    return [{ path: `${path}.config`, message: 'a tool needs a config (or llmToolBeanName for an in-process tool)' }];
  }
  if (beanName && (config.kind !== 'in_process' || config.beanName !== beanName)) {
    return [{ path: `${path}.llmToolBeanName`, message: 'only for in-process tools, and equal to config.beanName' }];
  }
  const complete = structuredClone(config);
  const problems = completeToolConfig(path, complete, stored);
  if (problems.length > 0) return problems;
  const parsed = toolConfigSchema.safeParse(complete);
  if (!parsed.success) return issueProblems(`${path}.config`, parsed.error);
  values.config = parsed.data;
  values.llmToolBeanName = parsed.data.kind === 'in_process' ? parsed.data.beanName : null;
  return [];
}
