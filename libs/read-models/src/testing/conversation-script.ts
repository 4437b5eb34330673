import { randomUUID } from 'node:crypto';
import type { ConversationEvent } from '@parley/conversation';
import type { ConversationSnapshot } from '@parley/core';
import type { EventToAppend } from '@parley/event-store';

export interface ScriptOptions {
  owner?: string;
  agentCode?: string;
  actionCode?: string;
  /** When the first event happened; each next event is a second later. */
  start?: Date;
  snapshot: ConversationSnapshot;
}

/**
 * The events of a full conversation as the command handlers and the worker append them: a
 * user message with an attachment, a tool call, a failed and retried model call, a completed
 * turn; a second turn that asks the user a question, gets answers, asks for a tool approval,
 * gets it and completes. Used by the read-side tests and the read benchmark.
 */
export function conversationScript(conversationId: string, options: ScriptOptions): ConversationEvent[] {
  const { owner = 'client-a', agentCode = 'HELPDESK', actionCode = 'ANSWER', snapshot } = options;
  const call = (turnNo: number, callNo: number, attempt = 1) => ({ turnNo, callNo, attempt });
  const completed = (turnNo: number, callNo: number, finishReason: 'ST' | 'TC', attempt = 1) =>
    ({
      type: 'ModelCallCompleted',
      data: {
        ...call(turnNo, callNo, attempt),
        finishReason,
        responseModel: 'sim-chat-2026',
        inputTokens: 120 + callNo,
        outputTokens: 30 + turnNo,
        usageEstimated: false,
        cost: 0.000123,
        latencyMs: 250,
      },
    }) as const;
  return [
    {
      type: 'ConversationStarted',
      data: { conversationId, agentCode, actionCode, owner, metadata: { ticket: 7 }, snapshot },
    },
    {
      type: 'MessageRecorded',
      data: { sequence: 1, role: 'US', content: 'Where is order 42?', turnNo: 1, tokenCount: 6 },
    },
    {
      type: 'AttachmentRecorded',
      data: { messageSequence: 1, attachmentSequence: 1, mediaType: 'image/png', url: 'https://files.example/1.png' },
    },
    { type: 'TurnStarted', data: { turnNo: 1 } },
    { type: 'ModelCallStarted', data: { ...call(1, 1), model: 'sim-chat', provider: 'SIM' } },
    { type: 'ChunksReceived', data: { ...call(1, 1), text: '', reasoning: 'look it up', count: 3 } },
    completed(1, 1, 'TC'),
    {
      type: 'MessageRecorded',
      data: {
        sequence: 2,
        role: 'AS',
        content: null,
        turnNo: 1,
        tokenCount: 12,
        toolCalls: [{ id: 'call-1', name: 'order_status', arguments: '{"orderId":42}' }],
      },
    },
    {
      type: 'ToolCallStarted',
      data: { turnNo: 1, toolCallId: 'call-1', name: 'order_status', arguments: '{"orderId":42}', kind: 'in_process' },
    },
    {
      type: 'ToolCallCompleted',
      data: {
        turnNo: 1,
        sequence: 3,
        toolCallId: 'call-1',
        name: 'order_status',
        output: '{"status":"shipped"}',
        truncated: false,
        durationMs: 17,
      },
    },
    { type: 'ModelCallStarted', data: { ...call(1, 2), model: 'sim-chat', provider: 'SIM' } },
    {
      type: 'ModelCallFailed',
      data: { ...call(1, 2), kind: 'rate_limited', message: 'slow down', status: 429, retryable: true },
    },
    { type: 'ModelCallRetryScheduled', data: { ...call(1, 2), delayMs: 100 } },
    { type: 'ModelCallStarted', data: { ...call(1, 2, 2), model: 'sim-chat', provider: 'SIM' } },
    { type: 'ChunksReceived', data: { ...call(1, 2, 2), text: 'It has shipped.', reasoning: '', count: 4 } },
    completed(1, 2, 'ST', 2),
    {
      type: 'MessageRecorded',
      data: { sequence: 4, role: 'AS', content: 'It has shipped.', turnNo: 1, tokenCount: 4 },
    },
    {
      type: 'ConversationCompleted',
      data: { turnNo: 1, finishReason: 'ST', reply: 'It has shipped.', responseModel: 'sim-chat-2026' },
    },
    { type: 'MessageRecorded', data: { sequence: 5, role: 'US', content: 'Cancel it.', turnNo: 2, tokenCount: 3 } },
    { type: 'TurnStarted', data: { turnNo: 2 } },
    { type: 'ModelCallStarted', data: { ...call(2, 1), model: 'sim-chat', provider: 'SIM' } },
    completed(2, 1, 'TC'),
    {
      type: 'MessageRecorded',
      data: {
        sequence: 6,
        role: 'AS',
        content: null,
        turnNo: 2,
        tokenCount: 9,
        toolCalls: [{ id: 'ask-1', name: 'AskUserQuestion', arguments: '{}' }],
      },
    },
    {
      type: 'QuestionAsked',
      data: {
        turnNo: 2,
        sequence: 7,
        toolCallId: 'ask-1',
        questions: [{ key: 'why', question: 'Why cancel?', required: true }],
        expiresAt: '2030-01-01T00:00:00.000Z',
      },
    },
    { type: 'AnswersSubmitted', data: { turnNo: 2, sequence: 8, toolCallId: 'ask-1', answers: { why: 'too late' } } },
    { type: 'TurnResumed', data: { turnNo: 2, reason: 'answers' } },
    { type: 'ModelCallStarted', data: { ...call(2, 2), model: 'sim-chat', provider: 'SIM' } },
    completed(2, 2, 'TC'),
    {
      type: 'MessageRecorded',
      data: {
        sequence: 9,
        role: 'AS',
        content: null,
        turnNo: 2,
        tokenCount: 8,
        toolCalls: [{ id: 'call-2', name: 'cancel_order', arguments: '{"orderId":42}' }],
      },
    },
    {
      type: 'ToolCallApprovalRequested',
      data: { turnNo: 2, toolCallId: 'call-2', name: 'cancel_order', arguments: '{"orderId":42}' },
    },
    { type: 'ToolCallApproved', data: { toolCallId: 'call-2' } },
    { type: 'TurnResumed', data: { turnNo: 2, reason: 'approval' } },
    {
      type: 'ToolCallStarted',
      data: { turnNo: 2, toolCallId: 'call-2', name: 'cancel_order', arguments: '{"orderId":42}', kind: 'http' },
    },
    {
      type: 'ToolCallFailed',
      data: {
        turnNo: 2,
        sequence: 10,
        toolCallId: 'call-2',
        name: 'cancel_order',
        code: 'TOOL_ERROR',
        message: 'upstream down',
        durationMs: 40,
      },
    },
    { type: 'ModelCallStarted', data: { ...call(2, 3), model: 'sim-chat', provider: 'SIM' } },
    completed(2, 3, 'ST'),
    {
      type: 'MessageRecorded',
      data: { sequence: 11, role: 'AS', content: 'I could not cancel it.', turnNo: 2, tokenCount: 6 },
    },
    {
      type: 'ConversationCompleted',
      data: { turnNo: 2, finishReason: 'ST', reply: 'I could not cancel it.', responseModel: null },
    },
  ];
}

/** The script's events ready to append, with the metadata every conversation event carries. */
export function toAppend(events: ConversationEvent[], start = new Date('2026-11-20T10:00:00Z')): EventToAppend[] {
  return events.map((e, i) => ({
    eventId: randomUUID(),
    type: e.type,
    data: e.data,
    metadata: { occurredAt: new Date(start.getTime() + i * 1000).toISOString(), actor: 'test' },
  }));
}
