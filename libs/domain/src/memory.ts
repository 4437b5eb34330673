import { DEFAULT_SUMMARY_KEEP_RECENT, DEFAULT_SUMMARY_THRESHOLD_TOKENS } from '@parley/core';
import type { MemorySummarized } from './conversation.events';
import { rememberedTranscript, type TranscriptEntry } from './conversation.state';
import type { RecordMemorySummary } from './turn.commands';
import { costOf, turnDeadline, type RunningTurn } from './turn.rules';

/** Counts a text's tokens: the turn worker passes the model's tokenizer; this estimate stands in elsewhere. */
export type TokenCounter = (text: string) => number;

/** About four characters a token: the fallback when no tokenizer is at hand. */
export const estimateTokens: TokenCounter = (text) => Math.ceil(text.length / 4);

/** The summary the turn asks the model for before its first model call (SUMMARY memory). */
export interface SummaryPlan {
  turnNo: number;
  /** The first sequence the summary stands for: the previous summary's, or the first entry summarised. */
  fromSequence: number;
  /** The last entry summarised; the entries after it stay verbatim. */
  throughSequence: number;
  /** The summary so far, folded into the new one. */
  previousSummary: string | null;
  /** The entries to summarise, after the previous summary (questions left out: their answers say it). */
  entries: TranscriptEntry[];
  /** Attempts of the summarisation call, as for the turn's model calls. */
  attempts: number;
  deadline: number;
}

const tokensOf = (m: TranscriptEntry, count: TokenCounter): number =>
  count(m.content ?? '') + (m.toolCalls ?? []).reduce((n, t) => n + count(t.name) + count(t.arguments), 0);

/**
 * Whether the turn summarises its memory before its first model call: the strategy is SUMMARY,
 * the remembered history (the last summary and the entries after it) is over the threshold, and
 * there are entries older than the `keepRecent` that stay verbatim (the current turn's always
 * stay, and a tool call is never split from its results). At most once a turn, before the model
 * is called, so a crashed worker that resumes asks again and gets the same answer.
 */
export function summaryPlan(c: RunningTurn, count: TokenCounter = estimateTokens): SummaryPlan | null {
  const memory = c.snapshot.memory;
  if (memory.kind !== 'SUMMARY' || c.turn.modelCalls > 0) return null;
  const threshold = memory.summaryThresholdTokens ?? DEFAULT_SUMMARY_THRESHOLD_TOKENS;
  const keepRecent = memory.keepRecent ?? DEFAULT_SUMMARY_KEEP_RECENT;
  const { summary, entries } = rememberedTranscript(c);
  const tokens = (summary ? count(summary.text) : 0) + entries.reduce((n, m) => n + tokensOf(m, count), 0);
  if (tokens <= threshold) return null;
  const currentTurn = entries.findIndex((m) => m.turnNo === c.turn.no);
  let cut = Math.min(entries.length - keepRecent, currentTurn < 0 ? entries.length : currentTurn);
  while (cut > 0 && cut < entries.length && (entries[cut].role === 'TO' || entries[cut].role === 'QU')) cut--;
  if (cut <= 0) return null;
  const older = entries.slice(0, cut);
  return {
    turnNo: c.turn.no,
    fromSequence: summary?.fromSequence ?? older[0].sequence,
    throughSequence: older[cut - 1].sequence,
    previousSummary: summary?.text ?? null,
    entries: older.filter((m) => m.role !== 'QU'),
    attempts: Math.max(1, c.snapshot.retry.count),
    deadline: turnDeadline(c),
  };
}

/** The summary the model wrote, with its usage and cost at the conversation's model prices. */
export function memorySummarized(c: RunningTurn, command: RecordMemorySummary): MemorySummarized {
  const d = command.data;
  return {
    type: 'MemorySummarized',
    data: {
      turnNo: c.turn.no,
      fromSequence: d.fromSequence,
      throughSequence: d.throughSequence,
      summary: d.summary,
      model: c.snapshot.model.name,
      responseModel: d.responseModel,
      inputTokens: d.usage.inputTokens,
      outputTokens: d.usage.outputTokens,
      usageEstimated: d.usage.estimated,
      cost: costOf(c.snapshot.model, d.usage),
      latencyMs: d.latencyMs,
    },
  };
}
