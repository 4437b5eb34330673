import type { FieldProblem } from '@parley/core';
import { BUILT_IN_ADVISORS } from '@parley/llm';
import { descriptorOf } from '../model/catalog-descriptors';
import { memberOf } from '../model/descriptor';
import type { Row } from '../model/entity-schemas';
import type { CatalogView } from '../store/catalog-store';
import type { CatalogDestinations } from './destinations';
import { memoryEmbeddingModel } from '../snapshot/memory-embedding';
import { jsonSchemaProblems } from './json-schema-check';
import type { BundleItem } from './parse-bundle';
import { prepareTool } from './tool-rules';

/**
 * The checks that look across entities: every reference resolves (in the bundle or the
 * catalog), plus the seed's rules. Each problem names its path; none stops the others.
 */
export class BundleRules {
  private readonly inBundle = new Map<string, Map<string, Row>>();

  constructor(
    private readonly view: CatalogView,
    private readonly items: BundleItem[],
    private readonly invalid: BundleItem[] = [],
    private readonly destinations: CatalogDestinations | null = null,
    /** The registered advisor bean names an advisor's llmAdvisorBeanName must be one of. */
    private readonly advisorBeans: readonly string[] = BUILT_IN_ADVISORS,
    /** MEMORY_EMBEDDING_MODEL: the embedding model an action with long-term memory uses (null: the only one). */
    private readonly memoryModel: string | null = null,
  ) {
    for (const item of [...items, ...invalid]) {
      const key = item.values[item.d.key.field];
      if (typeof key !== 'string') continue;
      const byKey = this.inBundle.get(item.d.kind) ?? new Map<string, Row>();
      byKey.set(key, item.values);
      this.inBundle.set(item.d.kind, byKey);
    }
  }

  check(): FieldProblem[] {
    const problems: FieldProblem[] = [];
    for (const item of this.items) {
      problems.push(...this.references(item));
      problems.push(...this.rules(item));
    }
    for (const item of this.invalid) problems.push(...this.references(item));
    return problems;
  }

  private find(kind: string, key: string): Row | undefined {
    return this.inBundle.get(kind)?.get(key) ?? this.view.get(kind)?.get(key)?.record;
  }

  private unknown(path: string, target: string, key: unknown): FieldProblem | null {
    if (typeof key !== 'string' || this.find(target, key)) return null;
    return { path, message: `unknown ${descriptorOf(target)!.label} '${String(key)}'` };
  }

  private references({ d, path, values }: BundleItem): FieldProblem[] {
    const problems: (FieldProblem | null)[] = [];
    for (const [name, field] of Object.entries(d.fields)) {
      if (field.type === 'ref') problems.push(this.unknown(`${path}.${name}`, field.target, values[name]));
    }
    for (const link of d.links) {
      const seen = new Set<string>();
      const given: unknown[] = Array.isArray(values[link.field]) ? (values[link.field] as unknown[]) : [];
      given.forEach((entry, index) => {
        const at = `${path}.${link.field}[${index}]`;
        const item = (typeof entry === 'string' ? { [memberOf(link)]: entry } : (entry ?? {})) as Row;
        const member = String(item[memberOf(link)]);
        if (seen.has(member)) problems.push({ path: at, message: `'${member}' is listed twice` });
        seen.add(member);
        for (const [name, field] of Object.entries(link.columns)) {
          if (field.type === 'ref') problems.push(this.unknown(`${at}.${name}`, field.target, item[name]));
        }
      });
    }
    return problems.filter((p): p is FieldProblem => p !== null);
  }

  private rules(item: BundleItem): FieldProblem[] {
    const { path, values } = item;
    const stored = this.view.get(item.d.kind)?.get(item.key) ?? null;
    return [...this.entityRules(item), ...(this.destinations?.problems(item.d.kind, path, values, stored) ?? [])];
  }

  private entityRules(item: BundleItem): FieldProblem[] {
    const { path, values } = item;
    switch (item.d.kind) {
      case 'domainSchemas':
        return jsonSchemaProblems(`${path}.jsonSchema`, values.jsonSchema as Row);
      case 'actions':
        return [...this.actionSchemas(path, values.schemas as Row[]), ...this.actionMemory(path, values)];
      case 'providers':
        return values.providerType === 'openai-compatible' && !values.baseUrl
          ? [{ path: `${path}.baseUrl`, message: 'required for an openai-compatible provider' }]
          : urlProblems(`${path}.baseUrl`, values.baseUrl);
      case 'memoryStrategies':
        return ['FULL', 'NONE', 'SUMM'].includes(String(values.llmMemoryStrategyType)) || values.llmMemoryWindowSize
          ? []
          : [
              {
                path: `${path}.llmMemoryWindowSize`,
                message: 'required unless the strategy type is FULL, NONE or SUMM',
              },
            ];
      case 'mcpClients':
        return mcpProblems(path, values);
      case 'tools':
        return prepareTool(item, this.view.get('tools')?.get(item.key) ?? null);
      case 'advisors':
        return advisorProblems(path, values, this.advisorBeans);
      case 'vectorStores':
        return this.embeddingModelProblems(`${path}.llmEmbeddingModel`, values.llmEmbeddingModel);
      case 'documentCollections':
        return this.collectionProblems(path, values);
      case 'budgets':
        return this.budgetProblems(path, values);
      default:
        return [];
    }
  }

  /**
   * A budget's target names someone: a subject, or an agent or action that exists (a mistyped
   * code would cap nothing).
   */
  private budgetProblems(path: string, values: Row): FieldProblem[] {
    const target = typeof values.target === 'string' ? values.target.trim() : '';
    if (!target) return [{ path: `${path}.target`, message: 'must not be empty' }];
    const kind = values.scope === 'agent' ? 'agents' : values.scope === 'action' ? 'actions' : null;
    if (!kind) return [];
    return [this.unknown(`${path}.target`, kind, values.target)].filter((p): p is FieldProblem => p !== null);
  }

  /** A model named to embed must be an embedding model (an unknown one is reported with the references). */
  private embeddingModelProblems(path: string, code: unknown): FieldProblem[] {
    const model = typeof code === 'string' ? this.find('models', code) : undefined;
    if (!model || model.modelType === 'embedding') return [];
    return [{ path, message: `'${String(code)}' is not an embedding model (modelType: ${String(model.modelType)})` }];
  }

  /** A collection embeds with its own model or its vector store's: one of them must name it. */
  private collectionProblems(path: string, values: Row): FieldProblem[] {
    if (values.llmEmbeddingModel)
      return this.embeddingModelProblems(`${path}.llmEmbeddingModel`, values.llmEmbeddingModel);
    const store =
      typeof values.llmVectorStore === 'string' ? this.find('vectorStores', values.llmVectorStore) : undefined;
    if (!store || store.llmEmbeddingModel) return [];
    return [
      {
        path: `${path}.llmEmbeddingModel`,
        message: `required: neither the collection nor its vector store '${String(values.llmVectorStore)}' names an embedding model`,
      },
    ];
  }

  /** An action with long-term memory needs an embedding model to embed its facts with. */
  private actionMemory(path: string, values: Row): FieldProblem[] {
    if (!values.longTermMemory && !values.autoRecall) return [];
    const models = new Map([...(this.view.get('models') ?? new Map())].map(([k, e]) => [k, e.record as Row]));
    for (const [k, row] of this.inBundle.get('models') ?? []) models.set(k, row);
    const model = memoryEmbeddingModel(models.values(), this.memoryModel);
    return typeof model === 'string'
      ? [{ path: `${path}.${values.longTermMemory ? 'longTermMemory' : 'autoRecall'}`, message: model }]
      : [];
  }

  /** Seed 000: a form or grid must belong to the row's schema; an action has at most one output. */
  private actionSchemas(path: string, schemas: Row[]): FieldProblem[] {
    const problems: FieldProblem[] = [];
    schemas.forEach((row, index) => {
      for (const [field, kind] of [
        ['domainForm', 'domainForms'],
        ['domainGrid', 'domainGrids'],
      ] as const) {
        const layout = row[field] ? this.find(kind, String(row[field])) : undefined;
        if (layout && layout.domainSchema !== row.domainSchema) {
          problems.push({
            path: `${path}.schemas[${index}].${field}`,
            message: `'${String(row[field])}' belongs to schema '${String(layout.domainSchema)}', not '${String(row.domainSchema)}'`,
          });
        }
      }
    });
    if (schemas.filter((s) => s.llmInputOutput === 'O').length > 1) {
      problems.push({ path: `${path}.schemas`, message: 'an action has at most one output (O) schema' });
    }
    return problems;
  }
}

function urlProblems(path: string, value: unknown): FieldProblem[] {
  if (value === null || value === undefined) return [];
  try {
    const url = new URL(String(value));
    if (['http:', 'https:'].includes(url.protocol)) return [];
  } catch {
    // reported below
  }
  return [{ path, message: 'expected an http:// or https:// URL' }];
}

function mcpProblems(path: string, values: Row): FieldProblem[] {
  const approvals = (values.requireApproval as string[] | undefined) ?? [];
  const blank = approvals.findIndex((name) => name.trim() === '' || name !== name.trim());
  if (blank >= 0)
    return [
      { path: `${path}.requireApproval[${blank}]`, message: "expected a tool name of the server, or '*' for all" },
    ];
  if (values.mcpTransportType === 'ST') {
    return values.command ? [] : [{ path: `${path}.command`, message: 'required for the stdio (ST) transport' }];
  }
  if (!values.mcpConnectionUrl) {
    return [{ path: `${path}.mcpConnectionUrl`, message: 'required for the SH and SE transports' }];
  }
  return urlProblems(`${path}.mcpConnectionUrl`, values.mcpConnectionUrl);
}

/** An advisor runs a registered bean; safeGuard's sensitiveWords is a list of words. */
function advisorProblems(path: string, values: Row, beans: readonly string[]): FieldProblem[] {
  const bean = values.llmAdvisorBeanName as string | null;
  if (!bean) return [{ path: `${path}.llmAdvisorBeanName`, message: 'required: the advisor bean to run' }];
  if (!beans.includes(bean)) {
    return [
      {
        path: `${path}.llmAdvisorBeanName`,
        message: `unknown advisor bean '${bean}' (registered: ${[...beans].sort().join(', ')})`,
      },
    ];
  }
  const words = (values.config as Row | null)?.sensitiveWords;
  if (bean === 'safeGuard' && !(Array.isArray(words) && words.every((w) => typeof w === 'string' && w.trim()))) {
    return [{ path: `${path}.config.sensitiveWords`, message: 'safeGuard needs a list of non-empty words' }];
  }
  return [];
}
