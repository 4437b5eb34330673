import { spawn } from 'node:child_process';
import { COMMANDS, commandReply, turnReply, type Operation } from '@parley/conversation';
import { z } from 'zod';
import { QUERIES } from './query-table';

/** Where the typed client's operations file lives (libs/client, published as `@parley/client`). */
export const CLIENT_OPERATIONS_FILE = 'libs/client/src/operations.generated.ts';

type Schema = {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  description?: string;
};

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const key = (name: string) => (IDENTIFIER.test(name) ? name : JSON.stringify(name));
const comment = (text: string | undefined, indent: string) =>
  text ? `${indent}/** ${text.replace(/\*\//g, '*\\/')} */\n` : '';

/** A JSON Schema (what zod's toJSONSchema writes) as a TypeScript type. */
function typeOf(schema: Schema | boolean | undefined, indent = ''): string {
  if (schema === undefined || schema === true) return 'unknown';
  if (schema === false) return 'never';
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.enum) return schema.enum.map((v) => JSON.stringify(v)).join(' | ');
  const union = schema.anyOf ?? schema.oneOf;
  if (union) return union.map((s) => typeOf(s, indent)).join(' | ');
  if (schema.allOf) return schema.allOf.map((s) => `(${typeOf(s, indent)})`).join(' & ');
  if (Array.isArray(schema.type)) return schema.type.map((t) => typeOf({ ...schema, type: t }, indent)).join(' | ');
  switch (schema.type) {
    case 'string':
      return 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array': {
      const item = typeOf(schema.items, indent);
      return /[|&]/.test(item) ? `Array<${item}>` : `${item}[]`;
    }
    case 'object':
      return objectOf(schema, indent);
    default:
      return 'unknown';
  }
}

function objectOf(schema: Schema, indent: string): string {
  const inner = `${indent}  `;
  const required = new Set(schema.required ?? []);
  const fields = Object.entries(schema.properties ?? {}).map(
    ([name, s]) =>
      `${comment(s.description, inner)}${inner}${key(name)}${required.has(name) ? '' : '?'}: ${typeOf(s, inner)};`,
  );
  const extra = schema.additionalProperties;
  if (extra !== undefined && extra !== false) fields.push(`${inner}[key: string]: ${typeOf(extra, inner)};`);
  if (fields.length === 0) return 'Record<string, never>';
  return `{\n${fields.join('\n')}\n${indent}}`;
}

const jsonSchema = (schema: z.ZodType, io: 'input' | 'output') =>
  z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Schema;

/** `interface Name { op: Type; … }` over a table's entries. */
function table(name: string, doc: string, ops: readonly Operation[], type: (op: Operation) => string): string {
  const rows = ops.map((op) => `${comment(op.summary, '  ')}  ${op.name}: ${type(op)};`);
  return `${comment(doc, '')}export interface ${name} {\n${rows.join('\n')}\n}\n`;
}

/** The facts about an operation the client's transports need: kind, HTTP route, turn, null answer. */
function facts(op: Operation): string {
  const http = op.http
    ? `{ method: '${op.http.method}', path: '${op.http.path}'${op.http.nullIsNotFound ? ', nullIsNotFound: true' : ''} }`
    : 'null';
  return `  ${op.name}: { kind: '${op.kind}', startsTurn: ${op.startsTurn === true}, http: ${http} },`;
}

/**
 * The typed client's view of the command and query tables: each operation's input type (from
 * its zod schema, as a caller writes it: defaults optional), the reply types the tables describe,
 * and what the transports need to route a call. The client imports this file only, so it has no
 * dependency on the server (`npm run client:generate` writes it; a spec checks it is current).
 */
export function renderClientOperations(): string {
  const replyOf = (op: Operation) =>
    op.kind === 'command' && (op.startsTurn || op.reply === turnReply)
      ? 'TurnReply'
      : op.kind === 'command' && op.reply === commandReply
        ? 'CommandReply'
        : op.reply instanceof z.ZodUnknown
          ? 'unknown'
          : typeOf(jsonSchema(op.reply, 'output'), '  ');
  return [
    '// Generated from the command and query tables by `npm run client:generate`',
    '// (libs/transport/src/operations/client-operations.ts). Do not edit.',
    '',
    `${comment("A command's reply: pass `position` as a query's `minPosition` to read your own writes.", '')}export interface CommandReply ${typeOf(jsonSchema(commandReply, 'output'))}\n`,
    `${comment("A turn-running command's reply once the turn ended or paused (see docs/api.md, Waiting).", '')}export interface TurnReply ${typeOf(jsonSchema(turnReply, 'output'))}\n`,
    table(
      'CommandInputs',
      "Each command's input: the HTTP body with the path's fields by name (the NATS payload).",
      COMMANDS,
      (op) => typeOf(jsonSchema(op.input, 'input'), '  '),
    ),
    table('CommandReplies', "Each command's reply.", COMMANDS, replyOf),
    table(
      'QueryInputs',
      "Each query's input: the path's fields and the query string by name (the NATS payload).",
      QUERIES,
      (op) => typeOf(jsonSchema(op.input, 'input'), '  '),
    ),
    table(
      'QueryReplies',
      "Each query's reply (`unknown` where the table does not describe it yet); null where the query finds nothing.",
      QUERIES,
      replyOf,
    ),
    'export type CommandName = keyof CommandInputs;',
    'export type QueryName = keyof QueryInputs;',
    '',
    '/** How each operation is reached: its table, whether it runs a turn, its HTTP route (null: NATS only). */',
    'export const OPERATIONS = {',
    ...[...COMMANDS, ...QUERIES].map(facts),
    '} as const;',
    '',
  ].join('\n');
}

/** renderClientOperations, as prettier writes it for `path` (the file is checked with the rest). */
export async function formattedClientOperations(path: string): Promise<string> {
  // Prettier's CLI in a child process: its API loads plugins with dynamic imports that jest refuses.
  const child = spawn(process.execPath, [require.resolve('prettier/bin/prettier.cjs'), '--stdin-filepath', path], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  child.stdin.end(renderClientOperations());
  let out = '';
  for await (const chunk of child.stdout) out += String(chunk);
  const code = await new Promise((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`prettier exited with ${String(code)}`);
  return out;
}
