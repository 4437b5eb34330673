import { Inject, Injectable, Optional } from '@nestjs/common';
import { CONFIG, type Config } from '@parley/config';
import { CollectionRemoval } from '@parley/knowledge';
import { AdvisorRegistry, BUILT_IN_ADVISORS } from '@parley/llm';
import { DATA_SOURCE } from '@parley/platform';
import { DomainError, type FieldProblem } from '@parley/core';
import type { DataSource, EntityManager } from 'typeorm';
import { CATALOG_LOCK_ID } from '../catalog-tokens';
import { descriptorForRoute, descriptorOf } from '../model/catalog-descriptors';
import type { EntityDescriptor } from '../model/descriptor';
import { entityFor, type Row } from '../model/entity-schemas';
import { SpendBudgets } from '../budgets/spend-budgets';
import { SecretCipher } from '../secrets/secret-cipher';
import { CatalogStore, type CatalogView } from '../store/catalog-store';
import { BundleRules } from './bundle-rules';
import { CatalogDestinations } from './destinations';
import { bundleFromBody, parseItems, type BundleItem } from './parse-bundle';
import { diffOf, planChanges, type ApplyDiff, type PlannedChange } from './plan-apply';

export interface ApplyResult {
  dryRun: boolean;
  changes: ApplyDiff;
}

type Mode = { dryRun: boolean; expect?: 'new' | 'existing' };

/**
 * Writes to the catalog: a declarative bundle (apply) and single-entity CRUD, both through
 * the same validation and in one transaction each, so a bad request writes nothing.
 */
@Injectable()
export class CatalogService {
  private readonly store: CatalogStore;
  private readonly destinations: CatalogDestinations | null;

  /** Without `config` (tests of the catalog alone) URLs and stdio commands are not checked against the allow-lists. */
  private readonly memoryModel: string | null;

  constructor(
    @Inject(DATA_SOURCE) private readonly dataSource: DataSource,
    @Inject(SecretCipher) private readonly cipher: SecretCipher,
    @Optional() @Inject(CONFIG) config: Config | null = null,
    @Optional() @Inject(AdvisorRegistry) private readonly advisors: AdvisorRegistry | null = null,
    /** Where KnowledgeModule runs: what a deleted document collection's documents and chunks leave by. */
    @Optional() @Inject(CollectionRemoval) private readonly removal: CollectionRemoval | null = null,
    @Optional() @Inject(SpendBudgets) private readonly budgets: SpendBudgets | null = null,
  ) {
    this.store = new CatalogStore(cipher);
    this.destinations = config ? new CatalogDestinations(config.catalog) : null;
    this.memoryModel = config?.memory.embeddingModel ?? null;
  }

  async apply(body: unknown, options: { dryRun: boolean }): Promise<ApplyResult> {
    const changes = await this.run(bundleFromBody(body), options);
    return { dryRun: options.dryRun, changes: diffOf(changes) };
  }

  async list(route: string): Promise<Row[]> {
    const d = descriptor(route);
    const all = await this.store.loadMany(this.dataSource.manager, d);
    return [...all.values()].map((e) => e.record);
  }

  async get(route: string, key: string): Promise<Row> {
    const d = descriptor(route);
    const found = await this.store.loadOne(this.dataSource.manager, d, key);
    if (!found) throw notFound(d, key);
    return found.record;
  }

  async create(route: string, body: unknown): Promise<Row> {
    const d = descriptor(route);
    const [change] = await this.single(d, body, 'new');
    return change.record;
  }

  async update(route: string, key: string, body: unknown): Promise<Row> {
    const d = descriptor(route);
    const item = isObject(body) ? { [d.key.field]: key, ...body } : body;
    if (isObject(item) && item[d.key.field] !== key) {
      throw DomainError.validation([{ path: d.key.field, message: `must be '${key}' as in the URL` }]);
    }
    const [change] = await this.single(d, item, 'existing');
    return change.record;
  }

  async remove(route: string, key: string): Promise<void> {
    const d = descriptor(route);
    await this.transaction(async (manager) => {
      const stored = await this.store.loadOne(manager, d, key);
      if (!stored) throw notFound(d, key);
      const collection = d.kind === 'documentCollections' ? await this.collectionOf(manager, key, stored.record) : null;
      // A document collection's registry rows go with it (their foreign key cascades).
      await manager.delete(entityFor(d.table), { [d.key.field]: key });
      await manager.query('delete from cat_acl where entity_kind = $1 and entity_key = $2', [d.kind, key]);
      // Nothing refers to it any more (the delete would have failed): its chunks go now, before
      // the commit, so a failure leaves the collection as it was.
      if (collection)
        await this.removal!.purge(collection.removed, collection.documents, { shared: collection.shared });
    });
  }

  /**
   * What deleting a document collection must remove (CollectionRemoval, where the app runs
   * KnowledgeModule): where its chunks are, its documents, and whether another collection keeps
   * chunks under the same name in the same database (then only its own documents' chunks go).
   */
  private async collectionOf(manager: EntityManager, code: string, collection: Row) {
    const removal = this.documentsKeptHere(code, 'be deleted', {});
    const stores = await this.store.loadMany(manager, descriptorOf('vectorStores')!);
    const storeOf = (c: Row) => stores.get(String(c.llmVectorStore))?.record ?? {};
    const url = (c: Row) => (storeOf(c).connectionUrl as string | null | undefined) || null;
    const all = await this.store.loadMany(manager, descriptorOf('documentCollections')!);
    const shared = [...all.values()].some(
      ({ record }) =>
        record.code !== code && record.collectionName === collection.collectionName && url(record) === url(collection),
    );
    const transaction = queryableOf(manager);
    return {
      removed: {
        code,
        collectionName: String(collection.collectionName),
        store: {
          code: String(collection.llmVectorStore),
          type: (storeOf(collection).llmVectorStoreType as string | null | undefined) || null,
          connectionUrl: url(collection),
        },
      },
      documents: await removal.documentsOf(code, transaction),
      shared,
    };
  }

  private async single(d: EntityDescriptor, body: unknown, expect: 'new' | 'existing'): Promise<PlannedChange[]> {
    try {
      return await this.run({ [d.kind]: [body] }, { dryRun: false, expect });
    } catch (err) {
      if (err instanceof DomainError && err.code === 'VALIDATION_FAILED') throw relativeTo(`${d.kind}[0]`, err);
      throw err;
    }
  }

  /** The registry's advisors where the turn runtime is loaded, else the built-in ones. */
  private advisorBeans(): readonly string[] {
    return this.advisors ? [...new Set([...BUILT_IN_ADVISORS, ...this.advisors.names()])] : BUILT_IN_ADVISORS;
  }

  private run(bundle: unknown, mode: Mode): Promise<PlannedChange[]> {
    return this.transaction(async (manager) => {
      const view = await this.store.loadView(manager);
      const { items, invalid, problems } = parseItems(bundle);
      for (const { d, key } of items.filter((i) => i.d.secrets)) {
        const stored = view.get(d.kind)!.get(key);
        if (stored) view.get(d.kind)!.set(key, this.store.open(d, key, stored));
      }
      if (mode.expect) checkExistence(items, view, mode.expect);
      problems.push(
        ...new BundleRules(view, items, invalid, this.destinations, this.advisorBeans(), this.memoryModel).check(),
      );
      const plan = planChanges(items, view, this.cipher);
      problems.push(...plan.problems);
      if (problems.length > 0) {
        throw DomainError.validation(
          problems,
          `The catalog change has ${problems.length} problem(s); nothing was written.`,
        );
      }
      await this.checkCollectionsKeepTheirPlace(manager, plan.changes, view);
      if (!mode.dryRun) {
        for (const c of plan.changes.filter((change) => change.status !== 'unchanged')) {
          await this.store.write(manager, c.item.d, c.record, c.secret, c.status === 'updated');
        }
      }
      return plan.changes;
    });
  }

  /**
   * A document collection that holds documents keeps its `collectionName` and `llmVectorStore`:
   * its chunks live there, and a change would leave them behind where no search finds them and no
   * delete reaches them. Refused as CONFLICT naming the fields; deleting its documents (or the
   * collection) first lets it move.
   */
  private async checkCollectionsKeepTheirPlace(
    manager: EntityManager,
    changes: PlannedChange[],
    view: CatalogView,
  ): Promise<void> {
    for (const c of changes) {
      if (c.item.d.kind !== 'documentCollections' || c.status !== 'updated') continue;
      const stored = view.get('documentCollections')?.get(c.item.key)?.record;
      const moved = (['collectionName', 'llmVectorStore'] as const).filter(
        (field) => stored !== undefined && stored[field] !== c.record[field],
      );
      if (moved.length === 0) continue;
      const removal = this.documentsKeptHere(c.item.key, `change ${moved.join(' and ')}`, { fields: moved });
      const { documents } = await removal.counts(c.item.key, queryableOf(manager));
      if (documents > 0)
        throw new DomainError(
          'CONFLICT',
          `Document collection '${c.item.key}' holds ${documents} document(s): its ${moved.join(' and ')} cannot change while it does, or its chunks would be left behind. Delete its documents (or the collection) first.`,
          { entity: 'documentCollections', key: c.item.key, fields: moved, documents },
        );
    }
  }

  /**
   * CollectionRemoval where this process keeps the collections' documents (it runs
   * KnowledgeModule: the server or the command API); elsewhere what `action` would do to the
   * collection is refused as SERVICE_UNAVAILABLE, since its documents could not follow.
   */
  private documentsKeptHere(code: string, action: string, details: Record<string, unknown>): CollectionRemoval {
    if (this.removal) return this.removal;
    throw new DomainError(
      'SERVICE_UNAVAILABLE',
      `Document collection '${code}' can ${action} only where its documents are kept (the server or the command API).`,
      { entity: 'documentCollections', key: code, ...details },
    );
  }

  private async transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    try {
      return await this.dataSource.transaction(async (manager) => {
        await manager.query('select pg_advisory_xact_lock($1)', [CATALOG_LOCK_ID]);
        return work(manager);
      });
    } catch (err) {
      throw translateDatabaseError(err);
    } finally {
      // Whatever changed (budgets among it), model calls here see it at once.
      this.budgets?.forget();
    }
  }
}

/** The transaction's connection as the knowledge lib's queries take one. */
const queryableOf = (manager: EntityManager) => ({
  query: async <R>(sql: string, params?: unknown[]) => ({
    rows: (await manager.queryRunner!.query(sql, params, true)).records as R[],
  }),
});

function descriptor(route: string): EntityDescriptor {
  const d = descriptorForRoute(route);
  if (!d) throw new DomainError('NOT_FOUND', `There is no catalog collection '${route}'.`, { collection: route });
  return d;
}

const isObject = (v: unknown): v is Row => typeof v === 'object' && v !== null && !Array.isArray(v);

const notFound = (d: EntityDescriptor, key: string) =>
  new DomainError('NOT_FOUND', `No ${d.label} '${key}' in the catalog.`, { entity: d.kind, key });

function checkExistence(items: BundleItem[], view: Map<string, Map<string, unknown>>, expect: 'new' | 'existing') {
  for (const { d, key } of items) {
    const exists = view.get(d.kind)?.has(key) ?? false;
    if (expect === 'new' && exists) {
      throw new DomainError('CONFLICT', `A ${d.label} '${key}' already exists.`, { entity: d.kind, key });
    }
    if (expect === 'existing' && !exists) throw notFound(d, key);
  }
}

/** Problems of a single-entity request are reported relative to its body. */
function relativeTo(prefix: string, err: DomainError): DomainError {
  const problems = (err.details?.problems as FieldProblem[]).map((p) => ({
    ...p,
    path: p.path === prefix ? '(body)' : p.path.startsWith(`${prefix}.`) ? p.path.slice(prefix.length + 1) : p.path,
  }));
  return DomainError.validation(problems, err.message);
}

/** A reference still in use, or a key taken by a concurrent writer, is a conflict, not a crash. */
function translateDatabaseError(err: unknown): unknown {
  const pg = (err as { driverError?: { code?: string; table?: string; detail?: string } }).driverError;
  if (pg?.code === '23503') {
    return new DomainError('CONFLICT', `Still in use: ${pg.detail ?? 'another catalog entity refers to it'}.`, {
      referencedBy: pg.table,
    });
  }
  if (pg?.code === '23505') return new DomainError('CONFLICT', `Already exists: ${pg.detail ?? 'duplicate key'}.`);
  return err;
}
