import { Inject, Injectable } from '@nestjs/common';
import { z } from 'zod';
import { CatalogAccess, type Caller } from '../access/catalog-access';
import { CatalogSelfService, seesAll } from '../access/self-service';
import type { Row } from '../model/entity-schemas';
import { SnapshotResolver } from '../snapshot/snapshot-resolver';
import { CatalogReader } from '../store/catalog-reader';

/** `GET /api/v1/models/available`: seed 001's available_models, inference models unless `modelType` says otherwise. */
export const availableModelsQuery = z.strictObject({
  modelType: z.enum(['inference', 'embedding', 'rerank']).default('inference'),
});

/**
 * The catalog reads of seed 000's SYS_LLM_QueryApi, by caller. Admins and auditors get the
 * catalog's own view, whose secrets are flags ("set"), never values. A client gets what it
 * needs to use an entity — code or name, description, a tool's parameters as the model sees
 * them — and only what catalog access lets it use: actions whose model and provider it may use,
 * tools granted to it or on such an action, MCP clients of such an action. Anything else reads
 * as unknown: null (HTTP turns it into 404, NATS into `{result: null}`).
 */
@Injectable()
export class CatalogQueries {
  constructor(
    @Inject(CatalogReader) private readonly reader: CatalogReader,
    @Inject(CatalogAccess) private readonly access: CatalogAccess,
    @Inject(SnapshotResolver) private readonly resolver: SnapshotResolver,
    @Inject(CatalogSelfService) private readonly self: CatalogSelfService,
  ) {}

  /**
   * Seed 001's available_models: the active models of `modelType` on active providers that
   * `caller` may use (owned, instance-wide or shared with it; an admin every one), as it sees them.
   */
  async availableModels(caller: Caller, modelType: string): Promise<Row[]> {
    const providers = new Map((await this.availableProviderRows(caller)).map((p) => [p.code, p]));
    const models: Row[] = [];
    for (const model of await this.reader.all('models')) {
      if (model.status !== 'active' || model.modelType !== modelType || !providers.has(model.llmProvider)) continue;
      if (await this.access.canUse(caller, 'models', model)) models.push(await this.self.view(caller, 'models', model));
    }
    return models;
  }

  /** The active providers `caller` may use, as it sees them (never a secret). */
  async availableProviders(caller: Caller): Promise<Row[]> {
    const rows = await this.availableProviderRows(caller);
    return Promise.all(rows.map((p) => this.self.view(caller, 'providers', p)));
  }

  /**
   * The actions `caller` may start a conversation on, as StartConversation decides it: the
   * action's model is an active inference model on an active provider, and both are usable by
   * the caller. Code, description and the model's code.
   */
  async availableActions(caller: Caller): Promise<Row[]> {
    const available: Row[] = [];
    for (const action of await this.reader.all('actions')) {
      const modelCode = await this.resolver.modelCodeOf(action);
      const model = await this.reader.record('models', modelCode);
      if (!model || model.status !== 'active' || model.modelType !== 'inference') continue;
      const provider = await this.reader.record('providers', model.llmProvider as string);
      if (!provider || provider.status !== 'active') continue;
      if (
        (await this.access.canUse(caller, 'models', model)) &&
        (await this.access.canUse(caller, 'providers', provider))
      )
        available.push({ ...actionView(action), model: modelCode });
    }
    return available;
  }

  private async availableProviderRows(caller: Caller): Promise<Row[]> {
    const usable: Row[] = [];
    for (const provider of await this.reader.all('providers')) {
      if (provider.status === 'active' && (await this.access.canUse(caller, 'providers', provider)))
        usable.push(provider);
    }
    return usable;
  }

  async getAllActions(caller: Caller): Promise<Row[]> {
    const actions = await this.reader.all('actions');
    if (seesAll(caller)) return actions;
    return (await this.usableActions(caller, actions)).map(actionView);
  }

  async findActionByCode(caller: Caller, code: string): Promise<Row | null> {
    const action = await this.reader.record('actions', code);
    if (!action || seesAll(caller)) return action;
    return (await this.usableActions(caller, [action])).map(actionView)[0] ?? null;
  }

  async findAgentByCode(caller: Caller, code: string): Promise<Row | null> {
    const agent = await this.reader.record('agents', code);
    if (!agent || seesAll(caller)) return agent;
    return { code: agent.code, description: agent.description ?? null };
  }

  async findToolByCode(caller: Caller, code: string): Promise<Row | null> {
    const tool = await this.reader.record('tools', code);
    if (!tool || seesAll(caller)) return tool;
    const granted = (await this.access.toolsGranted(caller, [code])).has(code);
    if (!granted && !(await this.actionTools(caller)).has(code)) return null;
    const definition = (await this.resolver.toolDefinitions([code])).get(code)!;
    return { code, description: tool.description ?? null, parameters: definition.parameters };
  }

  async findMcpClientByName(caller: Caller, name: string): Promise<Row | null> {
    const client = await this.reader.record('mcpClients', name);
    if (!client || seesAll(caller)) return client;
    const actions = await this.usableActions(caller, await this.reader.all('actions'));
    if (!actions.some((a) => (a.mcpClients as string[]).includes(name))) return null;
    return { name, description: client.description ?? null };
  }

  /** The actions `caller` may run: their model and its provider are usable by it. */
  private async usableActions(caller: Caller, actions: Row[]): Promise<Row[]> {
    const usable: Row[] = [];
    for (const action of actions) {
      const model = await this.reader.record('models', await this.resolver.modelCodeOf(action));
      const provider = model ? await this.reader.record('providers', model.llmProvider as string) : null;
      if (!model || !provider) continue;
      if (
        (await this.access.canUse(caller, 'models', model)) &&
        (await this.access.canUse(caller, 'providers', provider))
      )
        usable.push(action);
    }
    return usable;
  }

  /** The tools of the actions `caller` may run, their skills' tools included. */
  private async actionTools(caller: Caller): Promise<Set<string>> {
    const actions = await this.usableActions(caller, await this.reader.all('actions'));
    const skillCodes = actions.flatMap((a) => (a.skills as { skill: string }[]).map((s) => s.skill));
    const skills = await this.reader.many('skills', [...new Set(skillCodes)]);
    return new Set([
      ...actions.flatMap((a) => a.tools as string[]),
      ...skills.flatMap((s) => s.record.tools as string[]),
    ]);
  }
}

const actionView = (action: Row): Row => ({ code: action.code, description: action.description ?? null });
