import { Inject, Injectable } from '@nestjs/common';
import { CONFIG, type Config } from '@parley/config';
import { DEFAULT_TOP_K } from '@parley/knowledge';
import type {
  AdvisorBinding,
  LongTermMemorySettings,
  ConversationSnapshot,
  DisclosableSkill,
  MemoryStrategy,
  RetrievalCollection,
  ToolDefinition,
  TurnLimits,
} from '@parley/core';
import { DEFAULT_SUMMARY_KEEP_RECENT, DEFAULT_SUMMARY_THRESHOLD_TOKENS, DomainError } from '@parley/core';
import { assemblePrompt, buildChatOptions, outputSchemaOf, type PromptSchema, type PromptSkill } from '@parley/prompt';
import { CatalogAccess, type Caller } from '../access/catalog-access';
import { ENV_MODEL } from '../env/environment-catalog';
import type { Row } from '../model/entity-schemas';
import { CatalogReader } from '../store/catalog-reader';
import { memoryEmbeddingModel } from './memory-embedding';
import {
  ASK_USER_QUESTION_TOOL,
  MEMORY_TOOLS,
  skillToolDefinition,
  toolDefinition,
  uniqueTools,
} from './tool-definitions';

type SkillLink = { skill: string; disclosure: 'always' | 'on_request' };
type AdvisorLink = { advisor: string; llmAdvisorOrder: number | null };
type SchemaLink = { domainSchema: string; llmInputOutput: 'I' | 'O' | 'M'; llmCardinality: 'I' | 'L' };

/**
 * Turns (agent, action) into the frozen configuration ConversationStarted carries: prompt,
 * options, tools, memory, limits, retry, model and provider codes. Never a secret: the LLM
 * adapter and tool executors look credentials up at call time.
 */
@Injectable()
export class SnapshotResolver {
  constructor(
    @Inject(CatalogReader) private readonly reader: CatalogReader,
    @Inject(CONFIG) private readonly config: Config,
    @Inject(CatalogAccess) private readonly access: CatalogAccess,
  ) {}

  /**
   * The catalog model an action runs on: its own `llmModel`, else the default (DEFAULT_MODEL_NAME):
   * the model LLM_RUNTIME_URL keeps (ENV-DEFAULT), or, without it, the active inference model the
   * catalog names DEFAULT_MODEL_NAME (the first by code). Null: the action names none and there is no default.
   */
  async modelCodeOf(action: Row): Promise<string | null> {
    if (typeof action.llmModel === 'string') return action.llmModel;
    if (this.config.generate.runtimeUrl) return ENV_MODEL;
    const name = this.config.llm.defaultModelName;
    if (!name) return null;
    const named = (await this.reader.all('models'))
      .filter((m) => m.llmModelName === name && m.modelType === 'inference' && m.status === 'active')
      .map((m) => String(m.code))
      .sort();
    return named[0] ?? null;
  }

  /**
   * With `caller`, the action's model and provider must also be usable by it (seed 001: owned,
   * instance-wide or shared through the ACL), else FORBIDDEN.
   */
  async resolve(agentCode: string, actionCode: string, caller?: Caller): Promise<ConversationSnapshot> {
    const [agent, action] = await Promise.all([
      this.reader.record('agents', agentCode),
      this.reader.record('actions', actionCode),
    ]);
    if (!agent) throw DomainError.notFound('Agent', agentCode);
    if (!action) throw DomainError.notFound('Action', actionCode);
    const modelCode = await this.modelCodeOf(action);
    const model = await this.reader.record('models', modelCode);
    const provider = model ? await this.reader.record('providers', model.llmProvider as string) : null;
    checkRunnable(action, modelCode, model, provider);
    if (caller) {
      await this.access.assertCanUse(caller, 'models', model!);
      await this.access.assertCanUse(caller, 'providers', provider!);
    }

    const r = this.reader;
    const [application, persona, actionType, configuration, memory] = await Promise.all([
      r.record('applications', agent.llmApplication as string),
      r.record('personas', action.llmPersona as string | null),
      r.record('actionTypes', action.llmActionType as string | null),
      r.record('configurations', action.llmConfiguration as string | null),
      r.record('memoryStrategies', action.llmMemoryStrategy as string | null),
    ]);
    const skillLinks = action.skills as SkillLink[];
    const skills = records(
      await r.many(
        'skills',
        skillLinks.map((s) => s.skill),
      ),
    );
    const toolCodes = unique([...(action.tools as string[]), ...skills.flatMap((s) => s.tools as string[])]);
    const definitions = await this.definitionsOf(toolCodes);
    const schemaLinks = action.schemas as SchemaLink[];
    const documents = new Map(
      records(await r.many('domainSchemas', unique(schemaLinks.map((s) => s.domainSchema)))).map((s) => [
        s.code as string,
        s,
      ]),
    );
    const mcpClients = records(await r.many('mcpClients', action.mcpClients as string[]));
    const mcpOutputSchemas = await this.mcpOutputSchemasOf(mcpClients);
    const advisors = await this.advisorsOf((action.advisors as AdvisorLink[] | undefined) ?? []);
    const collections = await this.collectionsOf((action.documents as string[] | undefined) ?? []);

    const definitionOf = (code: string) => definitions.get(code)!;
    const disclosure = new Map(skillLinks.map((s) => [s.skill, s.disclosure]));
    const promptSkills: PromptSkill[] = skills.map((s) => ({
      code: s.code as string,
      prompt: s.llmSkillPrompt as string | null,
      description: s.description as string | null,
      disclosure: disclosure.get(s.code as string) ?? 'always',
    }));
    const disclosable: DisclosableSkill[] = promptSkills
      .filter((s) => s.disclosure === 'on_request')
      .map((s) => ({
        code: s.code,
        description: s.description ?? s.code,
        ...(s.prompt ? { prompt: s.prompt } : {}),
        tools: (skills.find((k) => k.code === s.code)!.tools as string[]).map(definitionOf),
      }));
    const alwaysSkillTools = skills
      .filter((s) => disclosure.get(s.code as string) !== 'on_request')
      .flatMap((s) => s.tools as string[]);
    const longTermMemory =
      action.longTermMemory || action.autoRecall
        ? {
            tools: action.longTermMemory === true,
            autoRecall: action.autoRecall === true,
            embedding: await this.memoryEmbedding(`actions.${actionCode}`),
          }
        : null;
    const schemas: PromptSchema[] = schemaLinks.map((link) => ({
      code: link.domainSchema,
      description: documents.get(link.domainSchema)!.description as string | null,
      direction: link.llmInputOutput,
      cardinality: link.llmCardinality,
      jsonSchema: documents.get(link.domainSchema)!.jsonSchema as Record<string, unknown>,
    }));

    const outputSchema = schemas.find((s) => s.direction === 'O') ?? null;
    const options = buildChatOptions({
      configuration,
      outputSchema,
      capabilities: model!.capabilities as string[],
      enableJsonMode: this.config.llm.enableJsonMode,
    });
    const snapshot: ConversationSnapshot = {
      applicationCode: agent.llmApplication as string,
      agentCode,
      actionCode,
      model: {
        code: model!.code as string,
        name: model!.llmModelName as string,
        providerCode: provider!.code as string,
        capabilities: model!.capabilities as string[],
        inputTokenPrice: (model!.llmInputTokenPrice as number | null) ?? 0,
        outputTokenPrice: (model!.llmOutputTokenPrice as number | null) ?? 0,
        ...(model!.llmContextWindow ? { contextWindow: model!.llmContextWindow as number } : {}),
      },
      options,
      systemPrompt: assemblePrompt({
        applicationPrompt: application?.llmSystemPrompt as string | null,
        agentPrompt: agent.llmAgentPrompt as string | null,
        personaPrompt: persona?.llmPersonaPrompt as string | null,
        skills: promptSkills,
        mcpClients: mcpClients.map((c) => ({ name: c.name as string, description: c.description as string | null })),
        schemas,
        constraintPrompt: actionType?.llmConstraintPrompt as string | null,
        actionPrompt: action.llmActionPrompt as string | null,
      }),
      tools: uniqueTools([
        ...unique([...(action.tools as string[]), ...alwaysSkillTools]).map(definitionOf),
        ...disclosable.map(skillToolDefinition),
        ...(action.askUserQuestion ? [ASK_USER_QUESTION_TOOL] : []),
        ...(longTermMemory?.tools ? MEMORY_TOOLS : []),
      ]),
      disclosableSkills: disclosable,
      mcpClients: mcpClients.map((c) => c.name as string),
      ...mcpApprovalsOf(mcpClients),
      ...(mcpOutputSchemas ? { mcpOutputSchemas } : {}),
      memory: memoryOf(memory),
      ...(collections.length > 0 ? { collections } : {}),
      ...(advisors.length > 0 ? { advisors } : {}),
      limits: this.limitsOf(configuration),
      retry: {
        count: (configuration?.llmRetryCount as number | null) ?? this.config.llm.retryCount,
        delayMs: (configuration?.llmRetryDelay as number | null) ?? this.config.llm.retryDelayMs,
      },
      ...(longTermMemory ? { longTermMemory } : {}),
      ...(outputSchema ? { outputSchema: outputSchemaOf(outputSchema, options.responseFormat) } : {}),
      ...(action.autoConfirm ? { autoConfirm: true as const } : {}),
    };
    return deepFreeze(snapshot);
  }

  /**
   * The embedding model of long-term memory (MEMORY_EMBEDDING_MODEL, else the only one); a
   * VALIDATION_FAILED naming `path` when there is none to use.
   */
  async memoryEmbedding(path = 'MEMORY_EMBEDDING_MODEL'): Promise<LongTermMemorySettings['embedding']> {
    const model = memoryEmbeddingModel(await this.reader.all('models'), this.config.memory.embeddingModel);
    if (typeof model === 'string')
      throw DomainError.validation([{ path, message: model }], `Long-term memory cannot run: ${model}.`);
    const provider = await this.reader.record('providers', model.llmProvider as string);
    if (!provider || provider.status === 'inactive')
      throw DomainError.validation(
        [{ path, message: `the embedding model's provider '${String(model.llmProvider)}' is missing or inactive` }],
        'Long-term memory cannot run: its embedding model has no active provider.',
      );
    return {
      code: model.code as string,
      name: model.llmModelName as string,
      providerCode: provider.code as string,
      inputTokenPrice: (model.llmInputTokenPrice as number | null) ?? 0,
    };
  }

  /**
   * Catalog tools by code, as the model sees them: the tools of a repository a client adds to a
   * running conversation (seed 002). An unknown code is named (NOT_FOUND); so is a tool that is
   * not shared with `caller` through its ACL (FORBIDDEN; admins may attach any tool).
   */
  async resolveTools(codes: string[], caller: Caller): Promise<ToolDefinition[]> {
    const definitions = await this.definitionsOf(unique(codes));
    const missing = unique(codes).filter((c) => !definitions.has(c));
    if (missing.length > 0) {
      const list = missing.map((c) => `'${c}'`).join(', ');
      throw new DomainError('NOT_FOUND', `No catalog tool has the code ${list}.`, { tools: missing });
    }
    const granted = await this.access.toolsGranted(caller, codes);
    const refused = unique(codes).filter((c) => !granted.has(c));
    if (refused.length > 0) {
      const list = refused.map((c) => `'${c}'`).join(', ');
      throw new DomainError('FORBIDDEN', `The tool(s) ${list} are not shared with '${caller.subject}'.`, {
        tools: refused,
      });
    }
    return codes.map((c) => definitions.get(c)!);
  }

  /**
   * The action's advisors, highest llmAdvisorOrder first (the link's order, else the advisor's
   * default, else 0; ties keep the link order). One without a bean name runs nothing: left out.
   */
  private async advisorsOf(links: AdvisorLink[]): Promise<AdvisorBinding[]> {
    const found = new Map(
      records(
        await this.reader.many(
          'advisors',
          links.map((l) => l.advisor),
        ),
      ).map((a) => [a.code as string, a]),
    );
    return links
      .map((link) => ({ link, advisor: found.get(link.advisor) }))
      .filter(({ advisor }) => !!advisor?.llmAdvisorBeanName)
      .map(({ link, advisor }) => ({
        code: link.advisor,
        bean: advisor!.llmAdvisorBeanName as string,
        order: link.llmAdvisorOrder ?? (advisor!.llmAdvisorOrder as number | null) ?? 0,
        config: (advisor!.config as Record<string, unknown> | null) ?? {},
      }))
      .sort((a, b) => b.order - a.order);
  }

  /**
   * The collections the action links (`documents`), in link order, with the top-K and threshold
   * a turn searches them with: the collection's llmResultCount (else 4) and llmSimilarityThreshold.
   */
  private async collectionsOf(codes: string[]): Promise<RetrievalCollection[]> {
    const found = new Map(
      records(await this.reader.many('documentCollections', codes)).map((d) => [d.code as string, d]),
    );
    return codes
      .filter((code) => found.has(code))
      .map((code) => {
        const d = found.get(code)!;
        return {
          code,
          topK: (d.llmResultCount as number | null) ?? DEFAULT_TOP_K,
          threshold: (d.llmSimilarityThreshold as number | null) ?? null,
        };
      });
  }

  /** Per MCP client with an llmSchemaOutput, its JSON Schema; null when none of `clients` has one. */
  private async mcpOutputSchemasOf(clients: Row[]): Promise<Record<string, Record<string, unknown>> | null> {
    const named = clients.filter((c) => typeof c.llmSchemaOutput === 'string');
    if (named.length === 0) return null;
    const schemas = new Map(
      records(await this.reader.many('domainSchemas', unique(named.map((c) => c.llmSchemaOutput as string)))).map(
        (s) => [s.code as string, s.jsonSchema as Record<string, unknown>],
      ),
    );
    const entries = named
      .map((c) => [c.name as string, schemas.get(c.llmSchemaOutput as string)] as const)
      .filter((e): e is readonly [string, Record<string, unknown>] => e[1] !== undefined);
    return entries.length > 0 ? Object.fromEntries(entries) : null;
  }

  /** The definitions of the tools found among `codes`, with their input DomainSchemas as parameters and their output ones. */
  toolDefinitions(codes: string[]): Promise<Map<string, ToolDefinition>> {
    return this.definitionsOf(codes);
  }

  private async definitionsOf(codes: string[]): Promise<Map<string, ToolDefinition>> {
    const tools = records(await this.reader.many('tools', codes));
    const schemaCodes = unique(
      tools.flatMap((t) => [t.llmSchemaInput, t.llmSchemaOutput] as (string | null)[]).filter((c): c is string => !!c),
    );
    const schemas = new Map(
      records(await this.reader.many('domainSchemas', schemaCodes)).map((s) => [s.code as string, s.jsonSchema]),
    );
    const schemaOf = (code: unknown) =>
      ((typeof code === 'string' ? schemas.get(code) : undefined) as Record<string, unknown> | undefined) ?? null;
    return new Map(
      tools.map((tool) => [
        tool.code as string,
        toolDefinition(tool, schemaOf(tool.llmSchemaInput), schemaOf(tool.llmSchemaOutput)),
      ]),
    );
  }

  /** Each limit from the action's configuration where it sets one, else the service default. */
  private limitsOf(c: Row | null): TurnLimits {
    const turn = this.config.turn;
    const pick = <T>(name: string, fallback: T) => ((c?.[name] as T | null | undefined) ?? fallback) as T;
    return {
      maxToolRounds: pick('maxToolRounds', turn.maxToolSteps),
      maxPromptTokens: pick('maxPromptTokens', turn.maxPromptTokens),
      maxCompletionTokens: pick('maxCompletionTokens', turn.maxCompletionTokens),
      maxTotalTokens: pick('maxTotalTokens', turn.maxTotalTokens),
      turnTimeoutMs: pick('turnTimeoutMs', turn.timeoutMs),
      maxToolOutputBytes: pick('maxToolOutputBytes', turn.maxToolOutputBytes),
      questionTimeoutMs: pick('questionTimeoutMs', turn.questionTimeoutMs),
      approvalTimeoutMs: pick('toolApprovalTimeoutMs', turn.toolApprovalTimeoutMs),
      maxToolCallsPerReply: turn.maxToolCallsPerReply,
    };
  }
}

/** An action runs only on an active inference model of an active provider. */
function checkRunnable(action: Row, modelCode: string | null, model: Row | null, provider: Row | null): void {
  const problem = (message: string) =>
    DomainError.validation([{ path: 'llmModel', message }], `Action '${String(action.code)}' cannot run: ${message}.`);
  if (modelCode === null)
    throw problem(
      'it names no model, and no default model is set (LLM_RUNTIME_URL) or named in the catalog (DEFAULT_MODEL_NAME)',
    );
  if (!model) throw problem(`model '${modelCode}' is missing`);
  if (model.status !== 'active') throw problem(`model '${String(model.code)}' is inactive`);
  if (model.modelType !== 'inference') throw problem(`model '${String(model.code)}' is not an inference model`);
  if (!provider) throw problem(`provider '${String(model.llmProvider)}' is missing`);
  if (provider.status !== 'active') throw problem(`provider '${String(provider.code)}' is inactive`);
}

/**
 * Seed 000: FULL keeps everything; SUMM summarises the older history past a token threshold;
 * another strategy keeps a window; none keeps only the turn.
 */
function memoryOf(strategy: Row | null): MemoryStrategy {
  if (!strategy || strategy.llmMemoryStrategyType === 'NONE') return { kind: 'NONE' };
  if (strategy.llmMemoryStrategyType === 'FULL') return { kind: 'FULL' };
  if (strategy.llmMemoryStrategyType === 'SUMM')
    return {
      kind: 'SUMMARY',
      summaryThresholdTokens: (strategy.llmMemorySummaryThreshold as number | null) ?? DEFAULT_SUMMARY_THRESHOLD_TOKENS,
      keepRecent: (strategy.llmMemoryKeepRecent as number | null) ?? DEFAULT_SUMMARY_KEEP_RECENT,
    };
  return { kind: 'WINDOW', windowSize: strategy.llmMemoryWindowSize as number };
}

const unique = (values: string[]): string[] => [...new Set(values)];
const records = (entities: { record: Row }[]): Row[] => entities.map((e) => e.record);

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** The MCP clients whose tools need approval, with the tool names (or `*`); nothing when none does. */
function mcpApprovalsOf(clients: Row[]): { mcpApprovals?: Record<string, string[]> } {
  const entries = clients
    .map((c) => [c.name as string, (c.requireApproval as string[] | null) ?? []] as const)
    .filter(([, names]) => names.length > 0);
  return entries.length > 0 ? { mcpApprovals: Object.fromEntries(entries) } : {};
}
