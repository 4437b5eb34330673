import type { ToolErrorCode } from './codes';

/** How a failed tool call reads as the result the model is sent (the transcript's TO entry). */
export const toolErrorText = (code: ToolErrorCode, message: string): string => `Error (${code}): ${message}`;

const TOOL_ERROR = /^Error \(([A-Z_]+)\): ([\s\S]*)$/;

/** The message of a result written by toolErrorText, or null for a result the tool produced. */
export function toolErrorOf(content: string): string | null {
  const match = TOOL_ERROR.exec(content);
  return match ? match[2] : null;
}
