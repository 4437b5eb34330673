import { toolErrorText } from '@parley/core';
import type { ConversationEvent } from './conversation.events';
import type { TranscriptEntry } from './conversation.state';

/**
 * The transcript entry an event adds, if any. The decider's evolve and the messages
 * projection both use this one mapping, so they cannot disagree.
 */
export function transcriptEntryOf(event: ConversationEvent): TranscriptEntry | null {
  switch (event.type) {
    case 'MessageRecorded':
      return {
        sequence: event.data.sequence,
        role: event.data.role,
        content: event.data.content,
        turnNo: event.data.turnNo,
        ...(event.data.toolCalls?.length ? { toolCalls: [...event.data.toolCalls] } : {}),
        ...(event.data.ragSources?.length ? { ragSources: [...event.data.ragSources] } : {}),
      };
    case 'ToolCallCompleted':
      return toolEntry(event.data, event.data.output);
    case 'ToolCallFailed':
      return toolEntry(event.data, toolErrorText(event.data.code, event.data.message));
    case 'ToolCallRejected':
      return toolEntry(
        event.data,
        event.data.code === 'APPROVAL_TIMEOUT'
          ? 'The tool call was not approved in time (it timed out) and was not run. Do not retry it unless asked.'
          : `${rejection(event.data.reason)} Do not retry it unless asked.`,
      );
    case 'AnswersSubmitted':
      return toolEntry(event.data, JSON.stringify({ answers: event.data.answers }));
    case 'OutputValidated':
      return event.data.repair
        ? {
            sequence: event.data.repair.sequence,
            role: 'SY',
            content: event.data.repair.prompt,
            turnNo: event.data.turnNo,
          }
        : null;
    case 'QuestionAsked':
      return {
        sequence: event.data.sequence,
        role: 'QU',
        content: JSON.stringify({ questions: event.data.questions }),
        turnNo: event.data.turnNo,
        toolCallId: event.data.toolCallId,
      };
    default:
      return null;
  }
}

/** "The user rejected this tool call: <reason>." — the reason ends as a sentence however it was typed. */
function rejection(reason: string | null): string {
  if (!reason) return 'The user rejected this tool call.';
  return `The user rejected this tool call: ${reason}${/[.!?]$/.test(reason.trim()) ? '' : '.'}`;
}

function toolEntry(d: { sequence: number; turnNo: number; toolCallId: string }, content: string): TranscriptEntry {
  return { sequence: d.sequence, role: 'TO', content, turnNo: d.turnNo, toolCallId: d.toolCallId };
}
