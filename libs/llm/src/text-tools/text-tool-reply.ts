import { randomUUID } from 'node:crypto';
import type { LlmToolCall } from '../llm.port';

/** A reply of a model without a tools API, read: the text it says and the tool calls it makes. */
export interface TextReply {
  content: string;
  calls: LlmToolCall[];
}

const newId = () => `call_${randomUUID().replace(/-/g, '')}`;

/** Where the JSON object starting at `start` ends (one past its `}`), or -1 when it never closes. */
export function jsonObjectEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === '{') depth++;
    else if (ch === '}' && --depth === 0) return i + 1;
  }
  return -1;
}

const NAME = /"tool_name"\s*:\s*"((?:[^"\\]|\\.)*)"/;

/**
 * The tool call an object's text asks for, or null when it asks for none (no `tool_name`). A
 * call that cannot be read (broken JSON, a `tool_name` that is not a string) still becomes a
 * call, with the object's text as its arguments: the turn's argument check then answers the
 * model with a tool error, as it does for a tools-API call with malformed arguments. Missing
 * `arguments` are `{}`; `arguments` given as a JSON string (the tools API's habit) pass as is.
 */
export function toolCallOf(objectText: string): LlmToolCall | null {
  if (!objectText.includes('"tool_name"')) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(objectText);
  } catch {
    return { id: newId(), name: NAME.exec(objectText)?.[1] || 'unnamed', arguments: objectText };
  }
  if (typeof parsed !== 'object' || parsed === null || !('tool_name' in parsed)) return null;
  const { tool_name: name, arguments: args } = parsed as { tool_name: unknown; arguments?: unknown };
  if (typeof name !== 'string' || !name) return { id: newId(), name: String(name) || 'unnamed', arguments: objectText };
  const raw = args === undefined ? '{}' : typeof args === 'string' ? args : JSON.stringify(args);
  return { id: newId(), name, arguments: raw };
}

/** A line that opens or closes a fence: three backticks, indented by at most three spaces (as in CommonMark). */
export const FENCE = /^[ \t]{0,3}```/;

/** A fenced block: where it starts and ends in the reply (its fence lines included, with their line ends) and its body. */
export interface FencedBlock {
  start: number;
  end: number;
  body: string;
  /** `json` or no label: a block that may hold a tool call. */
  mayCall: boolean;
}

/**
 * The fenced blocks of a reply, line by line: an unclosed last block runs to the end (the model
 * may stop before its closing fence). Blocks labelled with another language are skipped whole,
 * so a fence inside them is not mistaken for one.
 */
export function fencedBlocks(text: string): { blocks: FencedBlock[]; openAt: number | null } {
  const blocks: FencedBlock[] = [];
  let open: { start: number; bodyStart: number; mayCall: boolean } | null = null;
  let at = 0;
  while (at < text.length) {
    const newline = text.indexOf('\n', at);
    const lineEnd = newline < 0 ? text.length : newline;
    const raw = text.slice(at, lineEnd);
    const line = raw.trim();
    const complete = newline >= 0;
    if (FENCE.test(raw)) {
      if (open) {
        if (line === '```') {
          blocks.push({
            start: open.start,
            end: complete ? newline + 1 : lineEnd,
            body: text.slice(open.bodyStart, at),
            mayCall: open.mayCall,
          });
          open = null;
        }
      } else if (complete) {
        const label = line.slice(3).trim().toLowerCase();
        open = { start: at, bodyStart: newline + 1, mayCall: label === '' || label === 'json' };
      }
    }
    at = complete ? newline + 1 : text.length;
  }
  if (open)
    blocks.push({ start: open.start, end: text.length, body: text.slice(open.bodyStart), mayCall: open.mayCall });
  return { blocks, openAt: open ? open.start : null };
}

/**
 * Reads a whole reply. A reply that starts with a JSON object is a call when the object has
 * `tool_name` (text after the object stays as the reply's text); otherwise, with `unwrapAnswers`, a
 * lone `{"answer": "…"}` is the answer's text, and any other reply is text as written. A reply
 * that does not start with `{` is text whose fenced ```json (or unlabelled) blocks holding a
 * `tool_name` object are calls: those blocks leave the text, the rest of it stays, as the text
 * beside the tool calls of a tools-API reply. JSON in the middle of prose is not a call.
 */
export function readTextReply(text: string, unwrapAnswers: boolean): TextReply {
  const start = text.length - text.trimStart().length;
  if (text[start] === '{') {
    const end = jsonObjectEnd(text, start);
    const call = toolCallOf(end < 0 ? text.slice(start) : text.slice(start, end));
    if (call) return { content: end < 0 ? '' : text.slice(end).trim(), calls: [call] };
    return { content: unwrapAnswers ? unwrapAnswer(text) : text, calls: [] };
  }
  const calls: LlmToolCall[] = [];
  let content = '';
  let at = 0;
  for (const block of fencedBlocks(text).blocks) {
    const body = block.body.trim();
    const call = block.mayCall && body.startsWith('{') ? toolCallOf(body) : null;
    if (!call) continue;
    calls.push(call);
    content += text.slice(at, block.start);
    at = block.end;
  }
  content += text.slice(at);
  return { content: calls.length ? content.trimEnd() : text, calls };
}

function unwrapAnswer(text: string): string {
  try {
    const parsed = JSON.parse(text) as unknown;
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
      const keys = Object.keys(parsed);
      const answer = (parsed as { answer?: unknown }).answer;
      if (keys.length === 1 && typeof answer === 'string') return answer;
    }
  } catch {
    // Not one JSON value: the text as written.
  }
  return text;
}
