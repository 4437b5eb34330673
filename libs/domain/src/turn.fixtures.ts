import type { ToolDefinition, TurnLimits } from '@parley/core';
import { snapshotFixture, toolFixture } from '@parley/testing';
import type { CommandMeta } from './conversation.commands';
import type { ConversationEvent, ToolCallRef } from './conversation.events';
import { conversationDecider } from './conversation.decider';
import type { ConversationState } from './conversation.state';

/**
 * Conversations in the middle of a turn, for the specs of the turn's rules. Every event is
 * stamped at T0 by the decider's evolve, so a turn started here started at T0.
 */
export const T0 = Date.parse('2026-01-01T00:00:00.000Z');
export const at = (ms: number): CommandMeta => ({ now: new Date(T0 + ms).toISOString(), actor: 'worker' });

export const tools: Record<string, ToolDefinition> = {
  lookup: toolFixture({ name: 'lookup', idempotent: true }),
  refund: toolFixture({ name: 'refund' }),
  delete_order: toolFixture({ name: 'delete_order', approval: 'always' }),
  answer_now: toolFixture({ name: 'answer_now', returnDirect: true }),
  AskUserQuestion: toolFixture({ name: 'AskUserQuestion', kind: 'ask_user_question' }),
  billing: toolFixture({ name: 'billing', kind: 'skill', ref: 'BILLING' }),
};

/** The snapshot fixture's limits with some of them changed. */
export const limits = (changed: Partial<TurnLimits>): TurnLimits => ({ ...snapshotFixture().limits, ...changed });

export function started(overrides: Parameters<typeof snapshotFixture>[0] = {}): ConversationEvent[] {
  const snapshot = snapshotFixture({
    tools: Object.values(tools),
    disclosableSkills: [
      {
        code: 'BILLING',
        description: 'Billing',
        prompt: 'Mind the invoices.',
        tools: [toolFixture({ name: 'invoice' })],
      },
    ],
    ...overrides,
  });
  return [
    {
      type: 'ConversationStarted',
      data: { conversationId: 'c1', agentCode: 'A', actionCode: 'B', owner: 'o', metadata: {}, snapshot },
    },
    { type: 'MessageRecorded', data: { sequence: 1, role: 'US', content: 'hi', turnNo: 1, tokenCount: 1 } },
    { type: 'TurnStarted', data: { turnNo: 1 } },
  ];
}

export const call = (id: string, name: string, args: unknown = {}): ToolCallRef => ({
  id,
  name,
  arguments: JSON.stringify(args),
});

/** A model call of turn 1 that completed with `usage`, and the assistant message it recorded. */
export function replied(
  sequence: number,
  calls: ToolCallRef[],
  usage = { inputTokens: 10, outputTokens: 5 },
  callNo = 1,
): ConversationEvent[] {
  return [
    { type: 'ModelCallStarted', data: { turnNo: 1, callNo, attempt: 1, model: 'sim-chat', provider: 'SIM' } },
    {
      type: 'ModelCallCompleted',
      data: {
        turnNo: 1,
        callNo,
        attempt: 1,
        finishReason: calls.length ? 'TC' : 'ST',
        responseModel: 'sim-chat-1',
        ...usage,
        usageEstimated: false,
        cost: 0,
        latencyMs: 5,
      },
    },
    {
      type: 'MessageRecorded',
      data: {
        sequence,
        role: 'AS',
        content: calls.length ? null : 'done',
        turnNo: 1,
        tokenCount: usage.outputTokens,
        ...(calls.length ? { toolCalls: calls } : {}),
      },
    },
  ];
}

export const toolDone = (sequence: number, toolCallId: string, name: string, output = 'ok'): ConversationEvent => ({
  type: 'ToolCallCompleted',
  data: { turnNo: 1, sequence, toolCallId, name, output, truncated: false, durationMs: 1 },
});

export const toolFailedEvent = (sequence: number, toolCallId: string, name: string): ConversationEvent => ({
  type: 'ToolCallFailed',
  data: { turnNo: 1, sequence, toolCallId, name, code: 'TOOL_ERROR', message: 'boom', durationMs: 1 },
});

export const fold = (events: ConversationEvent[]): ConversationState =>
  events.reduce(conversationDecider.evolve, conversationDecider.initialState());
