import type { ToolDefinition } from '@parley/core';
import type { ConversationEvent } from './conversation.events';
import { availableTools, type ConversationState, type TurnToolCall } from './conversation.state';
import { memoryRequestOf, recallPlan, type MemoryRequest, type RecallPlan } from './long-term-memory';
import { summaryPlan, type SummaryPlan, type TokenCounter } from './memory';
import { retrievalPlan, type RetrievalPlan } from './retrieval';
import { repositoryOf } from './tool-repositories';
import {
  completion,
  completionCap,
  modelCallBreach,
  promptBudget,
  stepBreach,
  turnDeadline,
  type RunningTurn,
} from './turn.rules';
import { approvalsRequested, askQuestion, autoApproved, discloseSkill, toolFailed } from './turn.tools';

/** The model call the turn makes next: which call and attempt, and what bounds it. */
export interface ModelCallPlan {
  callNo: number;
  /** The attempt this run starts at: one past an attempt a crashed worker left open. */
  firstAttempt: number;
  /** Attempts left within the configured retry count (at least one). */
  attempts: number;
  maxTokens?: number;
  /** The prompt must be counted and checked (CheckPrompt) before the call: the turn has a prompt budget. */
  checkPrompt: boolean;
  /** The turn's time budget ends here (epoch ms): it bounds the attempts and the waits between them. */
  deadline: number;
}

/**
 * What a running turn does next, decided from its state alone:
 * - `idle`: nothing; the conversation is not running this turn (ended, paused, waiting, killed);
 * - `record`: append these events (a refusal, a question, a disclosure, approvals asked, the end);
 * - `run_tool`: run this tool call, then record its outcome (RecordToolOutcome);
 * - `remote_tool`: publish this call to its remote tool, then record that (RecordRemoteToolInvoked): the turn waits;
 * - `memory_tool`: run a `remember` or `recall` call on long-term memory (RecordMemoryToolOutcome);
 * - `recall`: search long-term memory before the turn's first model call (RecordAutoRecall);
 * - `summarize`: have the model summarise the older memory, then record it (RecordMemorySummary);
 * - `retrieve`: search the action's collections for the user message, then record it (RecordContextRetrieved);
 * - `call_model`: make this model call, then record its reply (RecordModelReply).
 */
export type TurnStep =
  | { kind: 'idle' }
  | { kind: 'record'; events: ConversationEvent[] }
  | {
      kind: 'run_tool';
      call: TurnToolCall;
      tool: ToolDefinition;
      repositoryId: string | null;
      /** The turn's time budget ends here (epoch ms): the call gets no more than what is left. */
      deadline: number;
    }
  | {
      kind: 'remote_tool';
      call: TurnToolCall;
      tool: ToolDefinition;
      /** The turn's time budget ends here (epoch ms): the remote call's deadline is no later. */
      deadline: number;
    }
  | { kind: 'memory_tool'; call: TurnToolCall; request: MemoryRequest }
  | { kind: 'recall'; plan: RecallPlan }
  | { kind: 'summarize'; plan: SummaryPlan }
  | { kind: 'retrieve'; plan: RetrievalPlan }
  | { kind: 'call_model'; plan: ModelCallPlan };

const IDLE: TurnStep = { kind: 'idle' };
const record = (...events: ConversationEvent[]): TurnStep => ({ kind: 'record', events });

/** Tool calls whose outcome is on record. */
const RESOLVED: ReadonlySet<TurnToolCall['status']> = new Set(['completed', 'failed', 'rejected', 'answered']);

export const unresolvedCalls = (c: RunningTurn): TurnToolCall[] =>
  c.turn.toolCalls.filter((t) => !RESOLVED.has(t.status));

export const isRunningTurn = (c: ConversationState): c is RunningTurn => c.status === 'RU' && c.turn !== null;

/**
 * The turn's next step. Limits come first; then the tool calls of the last reply, in order; then
 * the end of the turn; then the next model call. A worker that resumes a turn after a crash
 * asks the same question of the folded stream and continues where the dead one stopped.
 */
export function nextTurnStep(c: ConversationState, now: number, countTokens?: TokenCounter): TurnStep {
  if (!isRunningTurn(c)) return IDLE;
  const breach = stepBreach(c, now);
  if (breach) return record(breach);
  const pending = unresolvedCalls(c);
  if (pending.length > 0) return toolStep(c, pending, now);
  const done = completion(c);
  if (done) return record(done);
  const refused = modelCallBreach(c);
  if (refused) return record(refused);
  const recall = recallPlan(c);
  if (recall) return { kind: 'recall', plan: recall };
  const summary = summaryPlan(c, countTokens);
  if (summary) return { kind: 'summarize', plan: summary };
  const retrieval = retrievalPlan(c);
  if (retrieval) return { kind: 'retrieve', plan: retrieval };
  return { kind: 'call_model', plan: modelCallPlan(c) };
}

/**
 * The next tool call to work on. Calls that need an approval wait until every other call of the
 * round is done, then are asked for together; the conversation then waits for a human.
 */
function toolStep(c: RunningTurn, calls: TurnToolCall[], now: number): TurnStep {
  const needApproval: TurnToolCall[] = [];
  for (const call of calls) {
    const tool = availableTools(c).find((t) => t.name === call.name);
    if (!tool)
      return record(toolFailed(c, call, 'NOT_ALLOWED', `Tool '${call.name}' is not available to this action.`));
    if (call.status === 'asked' || call.status === 'awaiting_approval' || call.status === 'invoked') return IDLE;
    if (tool.kind === 'ask_user_question') return record(askQuestion(c, call, now));
    if (tool.kind === 'skill') return record(...discloseSkill(c, call, tool));
    if (tool.kind === 'memory') {
      const request = memoryRequestOf(c, call, tool.ref, now);
      if (typeof request === 'string') return record(toolFailed(c, call, 'INVALID_ARGUMENTS', request));
      return { kind: 'memory_tool', call, request };
    }
    if (call.status === 'started' && !tool.idempotent)
      return record(
        toolFailed(
          c,
          call,
          'INTERRUPTED',
          'The tool call was interrupted before it finished and was not run again; it may or may not have taken effect.',
        ),
      );
    if (tool.approval === 'always' && call.status === 'requested') {
      if (c.snapshot.autoConfirm) return record(autoApproved(call));
      needApproval.push(call);
      continue;
    }
    if (tool.kind === 'remote') return { kind: 'remote_tool', call, tool, deadline: turnDeadline(c) };
    return {
      kind: 'run_tool',
      call,
      tool,
      repositoryId: repositoryOf(c, tool.name)?.repositoryId ?? null,
      deadline: turnDeadline(c),
    };
  }
  return record(...approvalsRequested(c, needApproval, now));
}

function modelCallPlan(c: RunningTurn): ModelCallPlan {
  const open = c.turn.openModelCall;
  const firstAttempt = open ? open.attempt + 1 : 1;
  const maxTokens = completionCap(c);
  return {
    callNo: open?.callNo ?? c.turn.modelCalls + 1,
    firstAttempt,
    attempts: Math.max(1, c.snapshot.retry.count - firstAttempt + 1),
    ...(maxTokens === undefined ? {} : { maxTokens }),
    checkPrompt: promptBudget(c) !== null,
    deadline: turnDeadline(c),
  };
}
