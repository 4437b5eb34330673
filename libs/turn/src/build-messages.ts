import { rememberedTranscript, type ExistingConversation, type TranscriptEntry } from '@parley/domain';
import type { LlmContentPart, LlmMessage } from '@parley/llm';

/**
 * The messages a model call sends: the frozen system prompt; the latest summary (SUMMARY memory)
 * and the facts the turn's automatic recall found (long-term memory), each a labelled system
 * message; then the transcript as the memory strategy keeps it (FULL: all of it; WINDOW: the last
 * `windowSize` entries; NONE: the current turn; SUMMARY: the entries after the summary), with the
 * turn's retrieved context block right before its user message. Nothing up to a memory clear is
 * sent, and nothing a summary stands for. A window never splits an assistant's tool calls from
 * their results, and a tool call an earlier turn left without a result gets one, as providers
 * require. Questions (QU) are not sent: the answer is the AskUserQuestion call's result. Tool calls
 * go back under the ids the model gave them, not the conversation's own.
 */
export function buildMessages(c: ExistingConversation): LlmMessage[] {
  const { summary, entries: kept } = rememberedTranscript(c);
  const entries = remembered(c, kept).filter((m) => m.role !== 'QU');
  const messages: LlmMessage[] = c.snapshot.systemPrompt ? [{ role: 'system', content: c.snapshot.systemPrompt }] : [];
  if (summary) messages.push({ role: 'system', content: `${SUMMARY_LABEL}\n${summary.text}` });
  const recalled = recalledBlock(c);
  if (recalled) messages.push(recalled);
  const answered = new Set(entries.filter((m) => m.role === 'TO').map((m) => m.toolCallId));
  const providerIds = new Map(
    c.transcript.flatMap((m) => (m.toolCalls ?? []).map((t) => [t.id, t.providerId ?? t.id] as const)),
  );
  const providerId = (id: string) => providerIds.get(id) ?? id;
  const context = contextBlock(c, entries);
  if (context.at < 0 && context.message) messages.push(context.message);
  for (const [i, m] of entries.entries()) {
    if (i === context.at && context.message) messages.push(context.message);
    // The repair prompt of structured output: sent as the user's, which every provider takes mid-conversation.
    if (m.role === 'SY') messages.push({ role: 'user', content: m.content ?? '' });
    if (m.role === 'US') messages.push({ role: 'user', content: userContent(m, c.snapshot.model.capabilities) });
    if (m.role === 'TO')
      messages.push({ role: 'tool', toolCallId: providerId(m.toolCallId ?? ''), content: m.content ?? '' });
    if (m.role === 'AS') {
      const toolCalls = (m.toolCalls ?? []).map(({ id, name, arguments: args }) => ({
        id: providerId(id),
        name,
        arguments: args,
      }));
      messages.push({ role: 'assistant', content: m.content, ...(toolCalls.length ? { toolCalls } : {}) });
      for (const call of m.toolCalls ?? []) {
        if (!answered.has(call.id) && !pendingInThisTurn(c, call.id)) {
          messages.push({ role: 'tool', toolCallId: providerId(call.id), content: 'The tool call did not complete.' });
        }
      }
    }
  }
  return messages;
}

/** How the facts the turn's automatic recall found are introduced to the model. */
export const RECALLED_LABEL = 'Facts remembered from earlier conversations (long-term memory):';

/** The turn's automatically recalled facts (MemoriesRecalled, auto), best first: never searched again here. */
function recalledBlock(c: ExistingConversation): LlmMessage | null {
  const hits = c.turn?.recalled ?? [];
  if (hits.length === 0) return null;
  return { role: 'system', content: [RECALLED_LABEL, ...hits.map((h) => `- ${h.text}`)].join('\n') };
}

/**
 * The current turn's context block (ContextRetrieved), as recorded, never searched again: a system
 * message right before the turn's user message (`at`: that entry's index; -1: the message is not
 * among the entries sent, so the block follows the system messages). Earlier turns' blocks are not
 * sent: their answers and sources stay in the transcript, their chunks do not take up the prompt.
 */
function contextBlock(c: ExistingConversation, entries: TranscriptEntry[]): { at: number; message: LlmMessage | null } {
  const text = c.turn?.context?.text;
  if (!text) return { at: -1, message: null };
  const at = entries.findIndex((m) => m.role === 'US' && m.turnNo === c.turn!.no);
  return { at, message: { role: 'system', content: text } };
}

/** How the summary of the earlier conversation is introduced to the model. */
export const SUMMARY_LABEL = 'Summary of the earlier conversation:';

function remembered(c: ExistingConversation, all: TranscriptEntry[]): TranscriptEntry[] {
  const { kind, windowSize } = c.snapshot.memory;
  if (kind === 'FULL' || kind === 'SUMMARY') return all;
  const currentTurn = c.turn?.no ?? 0;
  let start =
    kind === 'NONE' ? all.findIndex((m) => m.turnNo === currentTurn) : Math.max(0, all.length - (windowSize ?? 20));
  if (start < 0) start = all.length;
  // A window that begins among the results of an assistant's tool calls (its questions and their
  // answers included) begins at that assistant message instead: a tool message without the call
  // it answers is refused by providers.
  while (start > 0 && start < all.length && belongsToACall(all[start])) start--;
  return all.slice(start);
}

const belongsToACall = (m: TranscriptEntry): boolean => m.role === 'TO' || m.role === 'QU';

function pendingInThisTurn(c: ExistingConversation, callId: string): boolean {
  return c.turn?.toolCalls.some((t) => t.id === callId) ?? false;
}

function userContent(m: TranscriptEntry, capabilities: string[]): string | LlmContentPart[] {
  const text = m.content ?? '';
  if (!m.attachments?.length) return text;
  const parts: LlmContentPart[] = [{ type: 'text', text }];
  for (const a of m.attachments) {
    // Only what the send-message check accepts is fetched by the model: not what older events may hold.
    if (a.mediaType.startsWith('image/') && capabilities.includes('VI') && /^(https|data):/i.test(a.url))
      parts.push({ type: 'image_url', url: a.url });
    else parts.push({ type: 'text', text: `[Attachment ${a.mediaType}: ${a.url}]` });
  }
  return parts;
}
