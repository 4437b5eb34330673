import { toolErrorOf } from '@parley/core';
import type { LlmMessage, LlmRequest, LlmToolCall, LlmToolSpec, ToolProtocol } from '../llm.port';

/** The first line of the tool-instructions block (seed wording); the simulator's sim-text-tools model looks for it. */
const TOOL_INSTRUCTIONS_HEADER = 'You may use the following tools:';

/** How a reply that calls no tool should look: plain text, `{"answer": …}` in JSON mode, or the action's own JSON. */
export type FinalAnswerForm = 'text' | 'answer_object' | 'own_json';

/** A model with FC takes the tools API; one without gets tools as text, in JSON mode when it has JM. */
export const toolProtocolFor = (capabilities: readonly string[]): ToolProtocol =>
  capabilities.includes('FC') ? { kind: 'api' } : { kind: 'text', jsonMode: capabilities.includes('JM') };

/** Whether a text-protocol request asks for JSON mode: it has tools and its model the JM capability. */
export const asksJsonMode = (request: LlmRequest): boolean =>
  request.toolProtocol?.kind === 'text' && request.toolProtocol.jsonMode && request.tools.length > 0;

/** The form the final answer is asked in: the action's own JSON when it has an output format. */
export function finalAnswerForm(request: LlmRequest): FinalAnswerForm {
  if (request.options.responseFormat) return 'own_json';
  return asksJsonMode(request) ? 'answer_object' : 'text';
}

const FINAL_ANSWER: Record<FinalAnswerForm, string> = {
  text: 'When you need no tool, answer in plain text.',
  answer_object: 'When you need no tool, answer in JSON format: {"answer": "..."}',
  own_json: 'When you need no tool, answer with the JSON your answer is asked for.',
};

/**
 * The tool-instructions block for a model without a tools API: each tool with the JSON Schema
 * of its arguments, the call form `{"tool_name": …, "arguments": …}`, and how results come back.
 */
export function toolInstructions(tools: readonly LlmToolSpec[], finalAnswer: FinalAnswerForm): string {
  return [
    TOOL_INSTRUCTIONS_HEADER,
    ...tools.map((t) =>
      [`- ${t.name}:`, t.description.trim(), `Arguments (JSON Schema): ${JSON.stringify(t.parameters)}`]
        .filter(Boolean)
        .join(' '),
    ),
    'Return tool calls in JSON format:',
    '{"tool_name": "...", "arguments": {...}}',
    'Call one tool per reply, and write nothing else in that reply. Its result comes back as {"tool_result": "...", "tool_name": "..."}, a failure as {"tool_error": "...", "tool_name": "..."}.',
    FINAL_ANSWER[finalAnswer],
  ].join('\n');
}

/** A call as the model would have written it: `{"tool_name": …, "arguments": …}`. */
export function toolCallText(call: LlmToolCall): string {
  let args: unknown = call.arguments;
  try {
    args = JSON.parse(call.arguments || '{}');
  } catch {
    // Malformed arguments go back as the text the model wrote.
  }
  return JSON.stringify({ tool_name: call.name, arguments: args });
}

/**
 * The messages of a request for a model without a tools API: the instructions block appended to
 * the first system message (one is added when there is none; some chat templates take only one),
 * an assistant's calls as the JSON text of each, and each tool result as a `user` message
 * `{"tool_result": …, "tool_name": …}` or `{"tool_error": …, "tool_name": …}`. Results go as the
 * user's turn rather than the assistant's because chat templates that demand alternating roles
 * (Mistral's, Llama 2's) refuse two assistant messages in a row.
 */
export function textProtocolMessages(
  messages: readonly LlmMessage[],
  tools: readonly LlmToolSpec[],
  finalAnswer: FinalAnswerForm,
): LlmMessage[] {
  const names = new Map<string, string>();
  const out: LlmMessage[] = [];
  for (const m of messages) {
    if (m.role === 'assistant' && m.toolCalls?.length) {
      for (const call of m.toolCalls) names.set(call.id, call.name);
      const content = [m.content ?? '', ...m.toolCalls.map(toolCallText)].filter(Boolean).join('\n');
      out.push({ role: 'assistant', content });
    } else if (m.role === 'tool') {
      const tool_name = names.get(m.toolCallId) ?? null;
      const error = toolErrorOf(m.content);
      const body = error === null ? { tool_result: m.content, tool_name } : { tool_error: error, tool_name };
      out.push({ role: 'user', content: JSON.stringify(body) });
    } else out.push(m);
  }
  if (tools.length === 0) return out;
  const block = toolInstructions(tools, finalAnswer);
  const system = out.findIndex((m) => m.role === 'system');
  if (system < 0) return [{ role: 'system', content: block }, ...out];
  out[system] = { role: 'system', content: `${out[system].content as string}\n\n${block}` };
  return out;
}
