import { countPromptTokens, countTokens, countToolCallTokens } from '@parley/prompt';
import { LlmError } from './llm-error';
import type { FinishReason } from '@parley/core';
import type { LlmRequest, LlmStreamEvent, LlmToolCall, LlmUsage } from './llm.port';
import { finalAnswerForm } from './text-tools/tool-instructions';
import { TextToolStream } from './text-tools/text-tool-stream';
import { ThinkSplitter } from './think-splitter';
import { ToolCallAssembler, type ToolCallDelta } from './tool-call-assembler';

interface RawUsage {
  prompt_tokens?: number | null;
  completion_tokens?: number | null;
}

/** A streamed chunk as OpenAI-compatible servers send it: anything may be missing or extra. */
export interface RawChunk {
  model?: string | null;
  choices?: {
    delta?: {
      content?: string | null;
      reasoning_content?: string | null;
      reasoning?: string | null;
      tool_calls?: ToolCallDelta[] | null;
    } | null;
    finish_reason?: string | null;
  }[];
  usage?: RawUsage | null;
  x_groq?: { usage?: RawUsage | null } | null;
}

/** stop→ST, length→LE, content_filter→CF, tool_calls/function_call→TC, else OT; calls made under 'stop' are TC. */
export function mapFinishReason(raw: string, hasToolCalls: boolean): FinishReason {
  if (raw === 'length') return 'LE';
  if (raw === 'content_filter') return 'CF';
  if (raw === 'tool_calls' || raw === 'function_call' || (hasToolCalls && raw === 'stop')) return 'TC';
  return raw === 'stop' ? 'ST' : 'OT';
}

/**
 * Turns the chunks of one streamed completion into port events: text and reasoning as they
 * come, then each assembled tool call once, then the finish with the provider's usage (the
 * last seen wins) or a tokenizer estimate.
 */
export class ChunkReader {
  private readonly toolCalls = new ToolCallAssembler();
  private readonly think = new ThinkSplitter();
  /** For a model without a tools API: tool calls are read from the text. */
  private readonly textTools: TextToolStream | null;
  private output = '';
  private finishReason: string | null = null;
  private usage: { input: number; output: number } | null = null;
  private model: string | null = null;

  constructor(private readonly request: LlmRequest) {
    const answerObject = finalAnswerForm(request) === 'answer_object';
    this.textTools = request.toolProtocol?.kind === 'text' ? new TextToolStream(answerObject) : null;
  }

  push(chunk: RawChunk): LlmStreamEvent[] {
    if (!this.model && chunk.model) this.model = chunk.model;
    const usage = chunk.usage ?? chunk.x_groq?.usage;
    if (typeof usage?.prompt_tokens === 'number' && typeof usage.completion_tokens === 'number') {
      this.usage = { input: usage.prompt_tokens, output: usage.completion_tokens };
    }
    const events: LlmStreamEvent[] = [];
    for (const choice of chunk.choices ?? []) {
      const delta = choice.delta;
      const reasoning = delta?.reasoning_content || delta?.reasoning;
      if (reasoning) events.push({ type: 'reasoning', delta: reasoning });
      if (delta?.content) events.push(...this.throughTextTools(this.think.push(delta.content)));
      this.toolCalls.push(delta?.tool_calls);
      if (choice.finish_reason) this.finishReason = choice.finish_reason;
    }
    return this.track(events);
  }

  /** Closes the completion; a stream that never said why it finished was cut off. */
  end(): LlmStreamEvent[] {
    if (this.finishReason === null) {
      throw new LlmError('stream_interrupted', 'The stream ended without a finish reason.');
    }
    const events: LlmStreamEvent[] = this.track(this.throughTextTools(this.think.flush()));
    const calls: LlmToolCall[] = this.toolCalls.calls();
    if (this.textTools) {
      const { rest, calls: textCalls } = this.textTools.end();
      if (rest) events.push(...this.track([{ type: 'text' as const, delta: rest }]));
      calls.push(...textCalls);
    }
    for (const call of calls) events.push({ type: 'tool_call', call });
    const estimated = this.usage === null;
    const { model, messages, tools } = this.request;
    const usage: LlmUsage = {
      inputTokens: this.usage?.input ?? countPromptTokens(messages, tools, model),
      outputTokens: this.usage?.output ?? countTokens(this.output, model) + countToolCallTokens(calls, model),
      estimated,
    };
    events.push({
      type: 'finish',
      finishReason: mapFinishReason(this.finishReason, calls.length > 0),
      usage,
      responseModel: this.model,
    });
    return events;
  }

  /** Text held back while it may be a tool call written as text (TextToolStream). */
  private throughTextTools<T extends LlmStreamEvent>(events: T[]): LlmStreamEvent[] {
    if (!this.textTools) return events;
    return events.flatMap((e): LlmStreamEvent[] => {
      if (e.type !== 'text') return [e];
      const shown = this.textTools!.push(e.delta);
      return shown ? [{ type: 'text', delta: shown }] : [];
    });
  }

  private track<T extends LlmStreamEvent>(events: T[]): T[] {
    for (const e of events) if (e.type === 'text' || e.type === 'reasoning') this.output += e.delta;
    return events;
  }
}
