import { MEMORY_SCOPES, type MemoryScope } from '@parley/core';
import type { ConversationEvent, MemoriesRecalled } from './conversation.events';
import type { ConversationData, TurnToolCall } from './conversation.state';
import type { RecordAutoRecall, RecordMemoryToolOutcome } from './turn.commands';
import type { RunningTurn } from './turn.rules';
import { toolFailed, toolOutcome } from './turn.tools';

/** Longest fact `remember` stores, and longest query `recall` embeds (characters). */
export const MAX_MEMORY_TEXT = 2000;
/** Facts a recall returns when the call names no limit, and the most it may ask for. */
export const DEFAULT_RECALL_LIMIT = 5;
export const MAX_RECALL_LIMIT = 20;
export const DEFAULT_IMPORTANCE = 0.5;

/**
 * Whose memories a conversation reads and writes: always its owner's, and within them one id
 * per scope — session: the conversation; user: its `metadata.userId`, else the owner; agent: the
 * agent's code; organisation: the owner as a whole ('').
 */
export interface MemoryScopes {
  owner: string;
  ids: Record<MemoryScope, string>;
}

export const scopesOf = (c: ConversationData): MemoryScopes => ({
  owner: c.owner,
  ids: { session: c.id, user: c.userId ?? c.owner, agent: c.agentCode, organisation: '' },
});

export interface RememberRequest {
  op: 'remember';
  owner: string;
  scope: MemoryScope;
  scopeId: string;
  text: string;
  importance: number;
  /** Days the fact lives; absent with `expiresAt` absent: the scope's default. */
  ttlDays?: number;
  expiresAt?: string;
}

export interface RecallRequest {
  op: 'recall';
  query: string;
  limit: number;
  scopes: MemoryScopes;
}

export type MemoryRequest = RememberRequest | RecallRequest;

/** What a `remember` or `recall` call asks for, or the reason its arguments are refused (for the model to read). */
export function memoryRequestOf(c: RunningTurn, call: TurnToolCall, ref: string, now: number): MemoryRequest | string {
  let args: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(call.arguments || '{}');
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      return 'The arguments must be a JSON object.';
    args = parsed as Record<string, unknown>;
  } catch {
    return 'The arguments are not valid JSON.';
  }
  const scopes = scopesOf(c);
  if (ref === 'recall') {
    const query = text(args.query, 'query');
    if (!query.ok) return query.problem;
    const limit = args.limit ?? DEFAULT_RECALL_LIMIT;
    if (!Number.isInteger(limit) || (limit as number) < 1 || (limit as number) > MAX_RECALL_LIMIT)
      return `limit: expected a whole number from 1 to ${MAX_RECALL_LIMIT}.`;
    return { op: 'recall', query: query.value, limit: limit as number, scopes };
  }
  const fact = text(args.fact, 'fact');
  if (!fact.ok) return fact.problem;
  const scope = args.scope ?? 'user';
  if (!MEMORY_SCOPES.includes(scope as MemoryScope)) return `scope: expected one of ${MEMORY_SCOPES.join(', ')}.`;
  const importance = args.importance ?? DEFAULT_IMPORTANCE;
  if (typeof importance !== 'number' || !(importance >= 0 && importance <= 1))
    return 'importance: expected a number from 0 to 1.';
  const request: RememberRequest = {
    op: 'remember',
    owner: scopes.owner,
    scope: scope as MemoryScope,
    scopeId: scopes.ids[scope as MemoryScope],
    text: fact.value,
    importance,
  };
  if (args.ttlDays !== undefined) {
    if (typeof args.ttlDays !== 'number' || !(args.ttlDays > 0 && args.ttlDays <= 36_500))
      return 'ttlDays: expected a number of days above 0 and at most 36500.';
    request.ttlDays = args.ttlDays;
  }
  if (args.expiresAt !== undefined) {
    const at = typeof args.expiresAt === 'string' ? Date.parse(args.expiresAt) : NaN;
    if (!Number.isFinite(at) || at <= now) return 'expiresAt: expected a date-time in the future.';
    request.expiresAt = new Date(at).toISOString();
  }
  return request;
}

function text(value: unknown, name: string): { ok: true; value: string } | { ok: false; problem: string } {
  if (typeof value !== 'string' || !value.trim())
    return { ok: false, problem: `${name}: expected a non-empty string.` };
  if (value.length > MAX_MEMORY_TEXT)
    return { ok: false, problem: `${name}: at most ${MAX_MEMORY_TEXT} characters (got ${value.length}).` };
  return { ok: true, value: value.trim() };
}

/** The automatic recall a turn makes before its first model call, when the action asks for it. */
export interface RecallPlan {
  turnNo: number;
  /** The user's latest message of this turn. */
  query: string;
  limit: number;
  scopes: MemoryScopes;
}

export function recallPlan(c: RunningTurn): RecallPlan | null {
  if (!c.snapshot.longTermMemory?.autoRecall || c.turn.modelCalls > 0 || c.turn.recalled !== undefined) return null;
  const latest = c.transcript.findLast((m) => m.role === 'US' && m.turnNo === c.turn.no);
  const query = latest?.content?.trim().slice(0, MAX_MEMORY_TEXT);
  if (!query) return null;
  return { turnNo: c.turn.no, query, limit: DEFAULT_RECALL_LIMIT, scopes: scopesOf(c) };
}

/** The memory call's own event (what was stored, or found), then its outcome as for any tool. */
export function memoryToolOutcome(
  c: RunningTurn,
  call: TurnToolCall,
  command: RecordMemoryToolOutcome,
): ConversationEvent[] {
  const { remembered, recalled, outcome } = command.data;
  const memory: ConversationEvent[] = remembered
    ? [{ type: 'MemoryRemembered', data: { turnNo: c.turn.no, toolCallId: call.id, ...remembered } }]
    : recalled
      ? [{ type: 'MemoriesRecalled', data: { turnNo: c.turn.no, toolCallId: call.id, auto: false, ...recalled } }]
      : [];
  return outcome.ok
    ? [...memory, ...toolOutcome(c, call, outcome)]
    : [toolFailed(c, call, outcome.error.code, outcome.error.message, outcome.durationMs)];
}

export const autoRecalled = (c: RunningTurn, command: RecordAutoRecall): MemoriesRecalled => ({
  type: 'MemoriesRecalled',
  data: { turnNo: c.turn.no, auto: true, ...command.data },
});
