/**
 * Which fields of each conversation event are content (what people and models wrote, and what
 * tools returned), by path: `a.b` a property, `[]` every element of an array, `*` every value
 * of an object. Everything else is structure and stays readable: types, ids, sequences, timing,
 * tokens, cost, statuses, tool names, error codes (docs/security.md, "Erasure").
 */
export const CONTENT_FIELDS: Readonly<Record<string, readonly string[]>> = {
  MessageRecorded: ['content', 'reasoning', 'toolCalls.[].arguments'],
  AttachmentRecorded: ['url'],
  ChunksReceived: ['text', 'reasoning'],
  ToolCallStarted: ['arguments'],
  ToolCallApprovalRequested: ['arguments'],
  ToolCallCompleted: ['output'],
  ToolCallFailed: ['message'],
  ToolCallRejected: ['reason'],
  QuestionAsked: ['questions.[].question', 'questions.[].options.[]'],
  AnswersSubmitted: ['answers.*'],
  ConversationCompleted: ['reply', 'output'],
  OutputValidated: ['output', 'errors.[].message', 'repair.prompt'],
  MemorySummarized: ['summary'],
  MemoryRemembered: ['text'],
  MemoriesRecalled: ['query', 'hits.[].text'],
  ContextRetrieved: ['query', 'chunks.[].text', 'context'],
};

const PATHS = new Map(Object.entries(CONTENT_FIELDS).map(([type, paths]) => [type, paths.map((p) => p.split('.'))]));

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function mapAt(value: unknown, segments: readonly string[], fn: (value: unknown) => unknown): unknown {
  if (segments.length === 0) return value === null || value === undefined ? value : fn(value);
  const [segment, ...rest] = segments;
  if (segment === '[]') return Array.isArray(value) ? value.map((v) => mapAt(v, rest, fn)) : value;
  if (!isObject(value)) return value;
  if (segment === '*') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapAt(v, rest, fn)]));
  if (!(segment in value)) return value;
  return { ...value, [segment]: mapAt(value[segment], rest, fn) };
}

/** A copy of an event's data with `fn` applied to each content value present (null and absent ones left alone). */
export function mapContent(type: string, data: unknown, fn: (value: unknown) => unknown): unknown {
  const paths = PATHS.get(type);
  if (!paths) return data;
  return paths.reduce((at, path) => mapAt(at, path, fn), data);
}
