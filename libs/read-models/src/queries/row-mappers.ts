/** Read-model rows in the API's shape: the seed's field names (LlmConversation, LlmMessage, LlmToolCall). */
type Row = Record<string, unknown>;

const iso = (v: unknown) => (v instanceof Date ? v.toISOString() : (v as string | null));
const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

export function conversationOf(r: Row) {
  return {
    conversationUuid: r.conversation_id as string,
    owner: r.owner as string,
    llmAgent: r.agent_code as string,
    llmAction: r.action_code as string,
    llmProcessStatus: r.status as string,
    llmFinishReason: r.finish_reason as string | null,
    llmResponseModel: r.response_model as string | null,
    biInputTokenCount: num(r.input_tokens),
    biOutputTokenCount: num(r.output_tokens),
    biEstimatedCost: num(r.estimated_cost),
    llmErrorDetail: r.error_detail as string | null,
    errorCode: r.error_code as string | null,
    model: { code: r.model_code, name: r.model_name, provider: r.provider_code },
    turnNo: r.turn_no as number,
    metadata: r.metadata,
    /** The last turn's reply parsed against the action's output schema (structured output); null: none. */
    output: r.output ?? null,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
    revision: num(r.last_revision),
    position: r.last_position as string,
  };
}

export interface ToolCallRefRow {
  id: string;
  name: string;
  arguments: string;
}

/** A document chunk an assistant's answer drew on (seed 001 `rag_sources`). */
export interface RagSourceRow {
  collection: string;
  documentId: string;
  chunkId: string;
  title: string | null;
  score: number;
}

export function messageOf(r: Row, attachments: Row[]) {
  return {
    messageSequence: r.sequence as number,
    llmMessageRole: r.role as string,
    llmMessageContent: r.content as string | null,
    biTokenCount: r.token_count as number | null,
    llmToolCallId: r.tool_call_id as string | null,
    toolCalls: ((r.tool_calls as ToolCallRefRow[] | null) ?? []).map((t) => ({
      llmToolCallId: t.id,
      llmToolCallName: t.name,
      llmToolCallArguments: t.arguments,
    })),
    ragSources: ((r.rag_sources as RagSourceRow[] | null) ?? []).map((s) => ({
      collection: s.collection,
      documentId: s.documentId,
      chunkId: s.chunkId,
      title: s.title,
      score: s.score,
    })),
    /** An assistant's answer parsed against the action's output schema; null for other messages. */
    output: r.output ?? null,
    attachments: attachments.map((a) => ({
      attachmentSequence: a.attachment_sequence as number,
      llmMediaType: a.media_type as string,
      attachmentUrl: a.url as string,
    })),
    turnNo: r.turn_no as number,
    createdAt: iso(r.created_at),
  };
}

export function toolCallOf(r: Row) {
  return {
    llmToolCallId: r.tool_call_id as string,
    llmToolCallName: r.name as string,
    llmToolCallArguments: r.arguments as string | null,
    kind: r.kind as string | null,
    status: r.status as string,
    approval: r.approval as string | null,
    result: r.result as string | null,
    errorCode: r.error_code as string | null,
    errorMessage: r.error_message as string | null,
    durationMs: r.duration_ms as number | null,
    turnNo: r.turn_no as number,
    requestedAt: iso(r.requested_at),
    completedAt: iso(r.completed_at),
  };
}

export function modelCallOf(r: Row) {
  return {
    turnNo: r.turn_no as number,
    callNo: r.call_no as number,
    model: r.model as string | null,
    provider: r.provider as string | null,
    status: r.status as string,
    attempts: r.attempts as number,
    finishReason: r.finish_reason as string | null,
    responseModel: r.response_model as string | null,
    inputTokens: r.input_tokens as number | null,
    outputTokens: r.output_tokens as number | null,
    usageEstimated: r.usage_estimated as boolean | null,
    estimatedCost: num(r.cost),
    latencyMs: r.latency_ms as number | null,
    error: r.error_kind ? { kind: r.error_kind as string, message: r.error_message as string } : null,
    startedAt: iso(r.started_at),
    completedAt: iso(r.completed_at),
  };
}

export type ConversationView = ReturnType<typeof conversationOf>;
