import { QUIRKS, contentWithReasoning, tokenize, toolCallIndex } from './habits';
import type { ReplyPlan } from './reply-plan';

type Json = Record<string, unknown>;

const FILTER_RESULTS = { hate: { filtered: false, severity: 'safe' }, violence: { filtered: false, severity: 'safe' } };

const usageOf = (prompt: number, completion: number) => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion,
});

/** The chat.completion.chunk objects of a streamed reply, in the habit's shape. */
export function streamChunks(plan: ReplyPlan): Json[] {
  const quirks = QUIRKS[plan.habit];
  const placement = plan.usage ?? quirks.usage;
  const deltas: Json[] = [{ role: 'assistant', content: '' }];
  if (plan.reasoning && (quirks.reasoning === 'reasoning_content' || quirks.reasoning === 'reasoning')) {
    for (const piece of tokenize(plan.reasoning)) deltas.push({ [quirks.reasoning]: piece });
  }
  for (const piece of tokenize(contentWithReasoning(plan.text, plan.reasoning, quirks)))
    deltas.push({ content: piece });

  const whole = plan.toolCalls.map((call, i) => ({
    ...toolCallIndex(quirks, i),
    id: call.id,
    type: 'function',
    function: { name: call.name, arguments: call.arguments },
  }));
  const finishDelta: Json = {};
  if (whole.length > 0 && quirks.toolCalls === 'whole') deltas.push({ tool_calls: whole });
  if (whole.length > 0 && quirks.toolCalls === 'whole_in_finish') finishDelta.tool_calls = whole;
  if (quirks.toolCalls === 'deltas') {
    plan.toolCalls.forEach((call, i) => {
      const index = toolCallIndex(quirks, i);
      deltas.push({
        tool_calls: [{ ...index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }],
      });
      for (const piece of tokenize(call.arguments))
        deltas.push({ tool_calls: [{ ...index, function: { arguments: piece } }] });
    });
    const last = plan.toolCalls[plan.toolCalls.length - 1];
    if (last && quirks.trailingArguments !== 'none') {
      const repeated = quirks.trailingArguments === 'repeat' ? last.arguments : '';
      const index = toolCallIndex(quirks, plan.toolCalls.length - 1);
      finishDelta.tool_calls = [{ ...index, function: { arguments: repeated } }];
    }
  }

  const chunk = (delta: Json | null, finishReason: string | null, extra: Json = {}): Json => ({
    id: plan.id,
    object: 'chat.completion.chunk',
    created: plan.created,
    model: plan.model,
    choices: [{ index: 0, ...(delta ? { delta } : {}), logprobs: null, finish_reason: finishReason }],
    ...extra,
  });
  const finishReason =
    plan.toolCalls.length > 0 && plan.finishReason === 'tool_calls' ? quirks.toolFinishReason : plan.finishReason;
  const chunks = [...deltas.map((d) => chunk(d, null)), chunk(finishDelta, finishReason)];
  const { prompt, completion } = plan.tokens;
  const putUsage = (target: Json, completionSoFar: number) => {
    const usage = usageOf(prompt, completionSoFar);
    if (plan.habit === 'groq') target.x_groq = { id: `req_${plan.id}`, usage };
    else target.usage = usage;
  };
  if (placement === 'every') {
    chunks.forEach((c, i) => putUsage(c, Math.round((completion * (i + 1)) / chunks.length)));
  }
  if (placement === 'finish') putUsage(chunks[chunks.length - 1], completion);
  if (plan.habit === 'llamacpp') chunks[chunks.length - 1].timings = { predicted_n: completion };
  if (quirks.filterChunks) {
    chunks.unshift({
      id: '',
      object: '',
      created: 0,
      model: '',
      choices: [],
      prompt_filter_results: [{ prompt_index: 0, content_filter_results: FILTER_RESULTS }],
    });
    chunks.push(chunk(null, null));
    (chunks[chunks.length - 1].choices as Json[])[0].content_filter_results = FILTER_RESULTS;
  }
  if (placement === 'final' && plan.includeUsage) {
    const last: Json = {
      id: plan.id,
      object: 'chat.completion.chunk',
      created: plan.created,
      model: plan.model,
      choices: [],
    };
    putUsage(last, completion);
    chunks.push(last);
  }
  return chunks;
}

/** The chat.completion object of a non-streamed reply. */
export function completionBody(plan: ReplyPlan): Json {
  const quirks = QUIRKS[plan.habit];
  const message: Json = { role: 'assistant', content: contentWithReasoning(plan.text, plan.reasoning, quirks) || null };
  if (plan.reasoning && (quirks.reasoning === 'reasoning_content' || quirks.reasoning === 'reasoning')) {
    message[quirks.reasoning] = plan.reasoning;
  }
  if (plan.toolCalls.length > 0) {
    message.tool_calls = plan.toolCalls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: c.arguments },
    }));
  }
  return {
    id: plan.id,
    object: 'chat.completion',
    created: plan.created,
    model: plan.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: plan.finishReason }],
    usage: usageOf(plan.tokens.prompt, plan.tokens.completion),
  };
}
