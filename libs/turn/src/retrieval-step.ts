import type { RetrievalCollection } from '@parley/core';
import {
  availableTools,
  type CollectionSearched,
  type ContextRetrieved,
  type ExistingConversation,
  type RetrievalPlan,
} from '@parley/domain';
import type { CollectionSearch, SearchHit } from '@parley/knowledge';
import { withSpan } from '@parley/observability';
import { deadlineTimer } from '@parley/platform';
import { countPromptTokens, countTokens, encodingNameFor, fitContext, type ContextChunk } from '@parley/prompt';
import { buildMessages } from './build-messages';
import type { TurnContext } from './turn-context';
import type { TurnDeps } from './turn-ports';

/** What searching one collection gave: its hits, or why it gave none. */
type Searched = { code: string; search: CollectionSearch } | { code: string; error: string };

/**
 * Retrieval before the turn's first model call (seed 000's QuestionAnswerAdvisor): the user
 * message is searched for in every collection the action links, in parallel, each with its own
 * top-K and similarity threshold; the chunks found are fitted to what the prompt budget leaves
 * beside the prompt without them (fitContext: adjacent chunks merged, lowest scores dropped
 * first), and recorded as ContextRetrieved with the turn's next append. A collection whose embedding call or search failed
 * (after the embedding client's retries) gives no chunks and its error is recorded: the turn
 * goes on with what the others found, and without a context block if none found anything.
 */
export async function retrievalStep(ctx: TurnContext, deps: TurnDeps, plan: RetrievalPlan, signal: AbortSignal) {
  const deadline = deadlineTimer(plan.deadline);
  const bounded = AbortSignal.any([signal, deadline.signal]);
  const searched = await withSpan('parley.retrieval', { 'parley.collections': plan.collections.length }, () =>
    Promise.all(plan.collections.map((c) => searchOne(deps, c, plan.query, bounded))),
  ).finally(deadline.clear);
  if (signal.aborted) throw signal.reason;
  const data = fitRetrieved(ctx.state, plan, searched);
  // Stored with the turn's next append (the model call's start or its outcome), folded into the
  // state at once: a crash before it only means the search is made again, as an unfinished model
  // call is, and a plain turn keeps its two appends.
  ctx.stage(ctx.decide({ type: 'RecordContextRetrieved', data }));
}

async function searchOne(
  deps: TurnDeps,
  collection: RetrievalCollection,
  query: string,
  signal: AbortSignal,
): Promise<Searched> {
  if (!deps.collections) return { code: collection.code, error: 'document collections are not set up in this process' };
  try {
    const search = await deps.collections.search(collection.code, query, {
      topK: collection.topK,
      ...(collection.threshold === null ? {} : { threshold: collection.threshold }),
      signal,
    });
    return { code: collection.code, search };
  } catch (err) {
    if (signal.aborted) throw err;
    return { code: collection.code, error: (err as Error).message };
  }
}

/**
 * The event data: the hits of every collection as chunks of the generic shape, fitted to the
 * budget left by the prompt as it would be sent without them (system prompt, memory, the turn's
 * messages, the tool definitions, and the framing of the one more message the block is). Without
 * a budget nothing needs counting but the block.
 */
export function fitRetrieved(
  c: ExistingConversation,
  plan: RetrievalPlan,
  searched: Searched[],
): Omit<ContextRetrieved['data'], 'turnNo'> {
  const modelName = c.snapshot.model.name;
  const count = (text: string) => countTokens(text, modelName);
  const withoutContext = plan.promptTokens === null ? null : promptTokensOf(c);
  const hits = new Map<string, { collection: string; hit: SearchHit }>();
  const offered: ContextChunk[] = [];
  for (const s of searched) {
    if (!('search' in s)) continue;
    // A chunk's stored token count (the embedding model's tokenizer) holds for the prompt when both share one.
    const sameTokenizer =
      encodingNameFor(s.search.collection.config.embeddingModel.name) === encodingNameFor(modelName);
    for (const hit of s.search.hits) {
      const id = `${s.code}\u0000${hit.chunk.id}`;
      if (hits.has(id)) continue;
      hits.set(id, { collection: s.code, hit });
      offered.push(contextChunkOf(s.code, id, hit, sameTokenizer));
    }
  }
  const fitted = fitContext(offered, {
    maxTokens:
      plan.promptTokens === null || withoutContext === null
        ? null
        : plan.promptTokens - withoutContext - messageFraming(modelName),
    countTokens: count,
  });
  const chunks = fitted.blocks.flatMap((b) =>
    b.chunkIds.map((id) => {
      const { collection, hit } = hits.get(id)!;
      const { chunk, score } = hit;
      const title = chunk.metadata.title;
      const index = chunk.metadata.chunkIndex;
      return {
        collection,
        documentId: chunk.documentId,
        chunkId: chunk.id,
        title: typeof title === 'string' ? title : null,
        score,
        chunkIndex: typeof index === 'number' ? index : null,
        text: chunk.text,
        tokens: chunk.tokens,
      };
    }),
  );
  return {
    query: plan.query,
    searches: searched.map(searchedOf),
    chunks,
    blocks: fitted.blocks.length,
    dropped: fitted.dropped.map((d) => {
      const { collection, hit } = hits.get(d.id)!;
      return { collection, chunkId: hit.chunk.id, documentId: d.documentId, score: d.score, reason: d.reason };
    }),
    context: fitted.text,
    budget: { promptTokens: plan.promptTokens, withoutContext, context: fitted.tokens },
  };
}

/** The prompt of the turn's next model call as it stands, tool definitions included. */
function promptTokensOf(c: ExistingConversation): number {
  const tools = availableTools(c).map(({ name, description, parameters }) => ({ name, description, parameters }));
  return countPromptTokens(buildMessages(c), tools, c.snapshot.model.name);
}

/** What one more (system) message adds to a prompt beside its content: the chat format's framing. */
const messageFraming = (modelName: string): number =>
  countPromptTokens([{ role: 'system', content: '' }], [], modelName) - countPromptTokens([], [], modelName);

function contextChunkOf(collection: string, id: string, hit: SearchHit, withTokens: boolean): ContextChunk {
  const { chunk, score } = hit;
  const { title, chunkIndex, pageStart, pageEnd } = chunk.metadata;
  return {
    id,
    documentId: chunk.documentId,
    text: chunk.text,
    score,
    source: collection,
    ...(typeof chunkIndex === 'number' ? { position: chunkIndex } : {}),
    ...(typeof title === 'string' && title ? { title } : {}),
    ...(typeof pageStart === 'number' ? { pageStart } : {}),
    ...(typeof pageEnd === 'number' ? { pageEnd } : {}),
    ...(withTokens ? { tokens: chunk.tokens } : {}),
  };
}

function searchedOf(s: Searched): CollectionSearched {
  if (!('search' in s))
    return { collection: s.code, model: null, tokens: 0, cost: 0, latencyMs: 0, searchMs: 0, hits: 0, error: s.error };
  const { spend, searchMs, hits } = s.search;
  return {
    collection: s.code,
    model: spend.model,
    tokens: spend.tokens,
    cost: spend.cost,
    latencyMs: Math.round(spend.latencyMs * 100) / 100,
    searchMs: Math.round(searchMs * 100) / 100,
    hits: hits.length,
  };
}
