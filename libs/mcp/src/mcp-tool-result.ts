import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** What a tool call produced: `isError` results are data for the model, not exceptions. */
export interface McpToolResult {
  isError: boolean;
  /** The result as text for the model: text parts verbatim, other parts described. */
  content: string;
}

type ContentPart = CallToolResult['content'][number];

function describe(part: ContentPart): string {
  switch (part.type) {
    case 'text':
      return part.text;
    case 'image':
    case 'audio':
      return `[${part.type} ${part.mimeType}, ${Math.floor((part.data.length * 3) / 4)} bytes]`;
    case 'resource':
      return 'text' in part.resource ? part.resource.text : `[resource ${part.resource.uri}]`;
    case 'resource_link':
      return `[resource link ${part.uri}${part.name ? ` (${part.name})` : ''}]`;
    default:
      return JSON.stringify(part);
  }
}

export function toToolResult(result: CallToolResult): McpToolResult {
  const parts = (result.content ?? []).map(describe);
  // A server that answers only with structured content still gives the model something to read.
  const content =
    parts.length === 0 && result.structuredContent !== undefined
      ? JSON.stringify(result.structuredContent)
      : parts.join('\n');
  return { isError: result.isError === true, content };
}
