import type { SimChatRequest, SimMatch, SimMessage, SimReply, SimRule } from './simulator.types';
import { textToolResult } from './text-tools';

/** Text of a message whether its content is a string or a list of parts. */
export function messageText(message: SimMessage | undefined): string {
  if (!message) return '';
  if (typeof message.content === 'string') return message.content;
  if (Array.isArray(message.content)) {
    return message.content
      .map((part: { type?: string; text?: string }) => (part.type === 'text' ? (part.text ?? '') : ''))
      .join('');
  }
  return '';
}

/** A message the user wrote (not a tool result sent as a user message to a model without a tools API). */
const isUser = (m: SimMessage): boolean => m.role === 'user' && textToolResult(m) === null;

export function lastUserMessage(request: SimChatRequest): string {
  const users = request.messages.filter(isUser);
  return messageText(users[users.length - 1]);
}

export interface ToolResult {
  id: string;
  name: string | null;
  content: string;
}

/**
 * The tool results of the current turn (after the last user message), with their tool names:
 * `tool` messages, and the `{"tool_result"|"tool_error": …}` messages of the text protocol (no id).
 */
export function currentToolResults(request: SimChatRequest): ToolResult[] {
  const lastUser = request.messages.map(isUser).lastIndexOf(true);
  const names = new Map<string, string>();
  for (const message of request.messages) {
    for (const call of message.tool_calls ?? []) names.set(call.id, call.function.name);
  }
  return request.messages.slice(lastUser + 1).flatMap((m): ToolResult[] => {
    if (m.role === 'tool')
      return [{ id: m.tool_call_id ?? '', name: names.get(m.tool_call_id ?? '') ?? null, content: messageText(m) }];
    const text = textToolResult(m);
    return text ? [{ id: '', ...text }] : [];
  });
}

const test = (pattern: RegExp | string, value: string) =>
  typeof pattern === 'string' ? value.includes(pattern) : pattern.test(value);

export function matches(when: SimMatch | undefined, request: SimChatRequest, callCount: number): boolean {
  if (!when) return true;
  if (when.lastUserMessage !== undefined && !test(when.lastUserMessage, lastUserMessage(request))) return false;
  if (when.model !== undefined && !test(when.model, request.model)) return false;
  const results = currentToolResults(request);
  if (when.noToolResult && results.length > 0) return false;
  if (when.toolResult) {
    const { name, id } = when.toolResult;
    if (!results.some((r) => (name === undefined || r.name === name) && (id === undefined || r.id === id))) {
      return false;
    }
  }
  if (when.callCount !== undefined) {
    const ok = typeof when.callCount === 'function' ? when.callCount(callCount) : when.callCount === callCount;
    if (!ok) return false;
  }
  return when.predicate ? when.predicate(request) : true;
}

/** The echo-like answer given when no rule matches, so a run against the simulator always gets one. */
export const defaultReply = (request: SimChatRequest): SimReply => ({
  text: `You said: ${lastUserMessage(request) || '(nothing)'}`,
});

/**
 * A script: rules tried in order, the first match answers. Counts how often each rule was
 * used so `times` can retire it.
 */
export class Script {
  private rules: SimRule[] = [];
  private used: number[] = [];

  replace(rules: SimRule[]): void {
    this.rules = [...rules];
    this.used = rules.map(() => 0);
  }

  reply(request: SimChatRequest, callCount: number): { reply: SimReply; rule: string | null } {
    for (const [i, rule] of this.rules.entries()) {
      if (rule.times !== undefined && this.used[i] >= rule.times) continue;
      if (!matches(rule.when, request, callCount)) continue;
      this.used[i] += 1;
      const reply = typeof rule.reply === 'function' ? rule.reply(request, { callCount }) : rule.reply;
      return { reply, rule: rule.name ?? `#${i}` };
    }
    return { reply: defaultReply(request), rule: null };
  }
}
