import type { RetrievalCollection } from '@parley/core';
import type { ContextRetrieved, RagSource } from './conversation.events';
import type { RecordContextRetrieved } from './turn.commands';
import { promptBudget, turnDeadline, type RunningTurn } from './turn.rules';

/** The search the turn makes before its first model call: the action links collections (seed 000's QuestionAnswerAdvisor). */
export interface RetrievalPlan {
  turnNo: number;
  /** The turn's user message. */
  query: string;
  collections: RetrievalCollection[];
  /** Tokens the whole prompt may take (promptBudget); null: no budget, every chunk found is kept. */
  promptTokens: number | null;
  deadline: number;
}

/**
 * Whether the turn searches its collections now: the snapshot has some, no model call of the
 * turn has completed, no search of the turn is on record, and the turn has a user message. At
 * most once a turn, so a worker that resumes it after a crash never searches again.
 */
export function retrievalPlan(c: RunningTurn): RetrievalPlan | null {
  const collections = c.snapshot.collections ?? [];
  if (collections.length === 0 || c.turn.modelCalls > 0 || c.turn.context) return null;
  const message = c.transcript.find((m) => m.role === 'US' && m.turnNo === c.turn.no);
  const query = message?.content?.trim();
  if (!query) return null;
  return { turnNo: c.turn.no, query, collections, promptTokens: promptBudget(c), deadline: turnDeadline(c) };
}

/** What the search found and what the prompt keeps of it, for this turn. */
export const contextRetrieved = (c: RunningTurn, command: RecordContextRetrieved): ContextRetrieved => ({
  type: 'ContextRetrieved',
  data: { turnNo: c.turn.no, ...command.data },
});

/** The sources of the turn's context block, for the reply that ends the turn; empty without one. */
export const ragSourcesOf = (c: RunningTurn): RagSource[] => c.turn.context?.sources ?? [];

/** The chunks of a ContextRetrieved as sources: what the block holds, best first. */
export const sourcesOf = (data: ContextRetrieved['data']): RagSource[] =>
  data.chunks.map(({ collection, documentId, chunkId, title, score }) => ({
    collection,
    documentId,
    chunkId,
    title,
    score,
  }));
