import type { Habit, UsagePlacement } from './simulator.types';

/**
 * How real OpenAI-compatible servers stream, as quirks. Each habit reproduces what a client
 * meets in the wild, so the adapter is tested against all of them:
 * - openai: tool-call deltas with index and id, usage in a final chunk with empty `choices`.
 * - vllm: `reasoning_content` deltas, a trailing empty arguments delta, usage on every chunk.
 * - ollama: `<think>` blocks in content, whole calls in one chunk without `index`, finish
 *   reason `stop` even for tool calls, usage in the finish chunk.
 * - gemini: whole calls without `index` in the finish chunk itself.
 * - azure: a first chunk with empty `choices` (prompt filter results) and a last one with
 *   content-filter results and no `delta`.
 * - deepseek: `reasoning_content` deltas, usage in the finish chunk.
 * - groq: `reasoning` deltas, whole calls in one chunk, usage under `x_groq`.
 * - mistral: whole calls in the finish chunk, every call at index 0, told apart by its id.
 * - lmstudio: `<think>` blocks, streamed calls all at index 0, a new call known by a new id.
 * - llamacpp: `reasoning_content`, deltas without `index`, the arguments repeated whole at the end.
 */
interface Quirks {
  reasoning: 'none' | 'reasoning_content' | 'reasoning' | 'think_tags';
  toolCalls: 'deltas' | 'whole' | 'whole_in_finish';
  index: 'present' | 'absent' | 'zero';
  trailingArguments: 'none' | 'empty' | 'repeat';
  toolFinishReason: 'tool_calls' | 'stop';
  usage: Exclude<UsagePlacement, 'none'>;
  filterChunks: boolean;
}

const base: Quirks = {
  reasoning: 'none',
  toolCalls: 'deltas',
  index: 'present',
  trailingArguments: 'none',
  toolFinishReason: 'tool_calls',
  usage: 'final',
  filterChunks: false,
};

export const QUIRKS: Record<Habit, Quirks> = {
  openai: base,
  vllm: { ...base, reasoning: 'reasoning_content', trailingArguments: 'empty', usage: 'every' },
  ollama: {
    ...base,
    reasoning: 'think_tags',
    toolCalls: 'whole',
    index: 'absent',
    toolFinishReason: 'stop',
    usage: 'finish',
  },
  gemini: { ...base, toolCalls: 'whole_in_finish', index: 'absent', usage: 'finish' },
  azure: { ...base, filterChunks: true },
  deepseek: { ...base, reasoning: 'reasoning_content', usage: 'finish' },
  groq: { ...base, reasoning: 'reasoning', toolCalls: 'whole', usage: 'finish' },
  mistral: { ...base, toolCalls: 'whole_in_finish', index: 'zero', usage: 'finish' },
  lmstudio: { ...base, reasoning: 'think_tags', index: 'zero' },
  llamacpp: { ...base, reasoning: 'reasoning_content', index: 'absent', trailingArguments: 'repeat', usage: 'finish' },
};

/** Token-ish pieces of at most four visible characters, whitespace kept: joining them gives the text back. */
export function tokenize(text: string): string[] {
  return text.match(/\s*\S{1,4}|\s+$/g) ?? [];
}

/** The content a habit streams: with think tags, the reasoning comes first inside a `<think>` block. */
export function contentWithReasoning(text: string, reasoning: string, quirks: Quirks): string {
  return quirks.reasoning === 'think_tags' && reasoning ? `<think>${reasoning}</think>\n\n${text}` : text;
}

export function toolCallIndex(quirks: Quirks, position: number): { index?: number } {
  if (quirks.index === 'absent') return {};
  return { index: quirks.index === 'zero' ? 0 : position };
}
