/** How a model call finished: ST stop, LE length, CF content filter, TC tool calls, OT other. */
export type FinishReason = 'ST' | 'LE' | 'CF' | 'TC' | 'OT';

/** Why a turn failed (ConversationFailed, and the `error` of a turn's reply). */
export type TurnFailureCode =
  | 'LLM_RUNTIME_ERROR'
  | 'LLM_LIMIT_EXCEEDED'
  | 'TOOL_ERRORS'
  | 'QUESTION_TIMEOUT'
  | 'OUTPUT_INVALID'
  | 'BUDGET_EXCEEDED';

/**
 * Why a tool call produced no result (ToolCallFailed); the model reads the message and may try
 * again. INTERRUPTED: a call that may not run twice was cut short by a crash and not run again.
 */
export type ToolErrorCode =
  | 'INVALID_ARGUMENTS'
  | 'INVALID_OUTPUT'
  | 'NOT_ALLOWED'
  | 'TIMEOUT'
  | 'TOOL_ERROR'
  | 'UNAVAILABLE'
  | 'ABORTED'
  | 'INTERRUPTED';

/**
 * What one tool execution produced. Failures are data for the model, never exceptions: the turn
 * records them (ToolCallFailed) and counts consecutive ones.
 */
export type ToolOutcome =
  | {
      ok: true;
      output: string;
      /** The output was cut at maxOutputBytes (and says so at its end). */
      truncated: boolean;
      durationMs: number;
      returnDirect: boolean;
      skipResponse: boolean;
    }
  | { ok: false; error: { code: ToolErrorCode; message: string }; durationMs: number };
