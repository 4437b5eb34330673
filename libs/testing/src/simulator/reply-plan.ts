import { messageText } from './rules';
import type { Habit, SimChatRequest, SimReply, UsagePlacement } from './simulator.types';

/** One reply, resolved: ids assigned, arguments serialised, counts known. */
export interface ReplyPlan {
  id: string;
  model: string;
  created: number;
  text: string;
  reasoning: string;
  toolCalls: { id: string; name: string; arguments: string }[];
  finishReason: string;
  tokens: { prompt: number; completion: number };
  includeUsage: boolean;
  habit: Habit;
  usage?: UsagePlacement;
}

/** Resolves a scripted reply for request number `n`: ids, serialised arguments, token counts. */
export function planOf(body: SimChatRequest, reply: SimReply, n: number, habit: Habit): ReplyPlan {
  const toolCalls = (reply.toolCalls ?? []).map((call, i) => ({
    id: call.id ?? `call_${n}_${i}`,
    name: call.name,
    arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
  }));
  const text = reply.text ?? '';
  const reasoning = reply.reasoning ?? '';
  const promptChars = body.messages.reduce((sum, m) => sum + messageText(m).length, 0);
  const completionChars = text.length + reasoning.length + toolCalls.reduce((s, c) => s + c.arguments.length, 0);
  return {
    id: `chatcmpl-sim-${n}`,
    model: body.model,
    created: Math.floor(Date.now() / 1000),
    text,
    reasoning,
    toolCalls,
    finishReason: reply.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
    tokens: reply.tokens ?? {
      prompt: Math.max(1, Math.ceil(promptChars / 4)),
      completion: Math.ceil(completionChars / 4),
    },
    includeUsage: body.stream_options?.include_usage === true,
    habit: reply.habit ?? habit,
    usage: reply.usage,
  };
}
