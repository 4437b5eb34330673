import type { SimChatRequest, SimMessage, SimReply } from './simulator.types';

/**
 * The habit of a model without a tools API (models named `sim-text-tools…`): it refuses a
 * `tools` parameter, reads its tools from the tool-instructions block of the prompt, writes a
 * scripted call as `{"tool_name": …, "arguments": …}` text, and reads results from messages
 * `{"tool_result": …}` / `{"tool_error": …}`.
 */
export const TEXT_TOOLS_MODEL = 'sim-text-tools';

/** The first line of the tool-instructions block (seed 004 §5.1). */
export const TOOL_INSTRUCTIONS = 'You may use the following tools:';

export const isTextToolsModel = (model: string): boolean => model.startsWith(TEXT_TOOLS_MODEL);

const textOf = (m: SimMessage): string => (typeof m.content === 'string' ? m.content : '');

/** Why the request is one this model cannot take (answered with a 400, so the test fails loudly), or null. */
export function textToolsProblem(body: SimChatRequest, reply: SimReply): string | null {
  if (Array.isArray(body.tools) && body.tools.length > 0)
    return `${body.model} has no tools API, yet the request carried a 'tools' parameter.`;
  if (body.messages.some((m) => m.role === 'tool' || m.tool_calls?.length))
    return `${body.model} has no tools API, yet the request carried tool messages or tool_calls.`;
  const instructed = body.messages.some((m) => m.role === 'system' && textOf(m).includes(TOOL_INSTRUCTIONS));
  if (reply.toolCalls?.length && !instructed)
    return `${body.model} was scripted to call a tool, but the prompt holds no tool-instructions block.`;
  return null;
}

/** A scripted reply with calls, as this model writes it: one call alone as the reply, else fenced ```json blocks after the text. */
export function asTextToolCalls(reply: SimReply): SimReply {
  const calls = reply.toolCalls ?? [];
  if (calls.length === 0) return reply;
  const texts = calls.map((c) =>
    typeof c.arguments === 'string'
      ? `{"tool_name": ${JSON.stringify(c.name)}, "arguments": ${c.arguments}}`
      : JSON.stringify({ tool_name: c.name, arguments: c.arguments }),
  );
  const text =
    !reply.text && texts.length === 1
      ? texts[0]
      : [reply.text ?? '', ...texts.map((t) => '```json\n' + t + '\n```')].filter(Boolean).join('\n');
  return {
    ...reply,
    text,
    toolCalls: [],
    finishReason: reply.finishReason === 'tool_calls' ? 'stop' : reply.finishReason,
  };
}

/** A tool result sent as text, or null for any other message. */
export function textToolResult(m: SimMessage): { name: string | null; content: string } | null {
  const text = textOf(m).trim();
  if (m.role === 'tool' || !text.startsWith('{') || !/"tool_(result|error)"/.test(text)) return null;
  try {
    const parsed = JSON.parse(text) as { tool_result?: unknown; tool_error?: unknown; tool_name?: unknown };
    const value = 'tool_result' in parsed ? parsed.tool_result : parsed.tool_error;
    if (value === undefined) return null;
    return {
      name: typeof parsed.tool_name === 'string' ? parsed.tool_name : null,
      content: typeof value === 'string' ? value : JSON.stringify(value),
    };
  } catch {
    return null;
  }
}
