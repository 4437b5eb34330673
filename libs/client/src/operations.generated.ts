// Generated from the command and query tables by `npm run client:generate`
// (libs/transport/src/operations/client-operations.ts). Do not edit.

/** A command's reply: pass `position` as a query's `minPosition` to read your own writes. */
export interface CommandReply {
  conversationId: string;
  status: 'NS' | 'RU' | 'CO' | 'FA' | 'WA' | 'PA' | 'ST' | 'TE' | 'KI';
  position: string;
}

/** A turn-running command's reply once the turn ended or paused (see docs/api.md, Waiting). */
export interface TurnReply {
  conversationId: string;
  status: 'NS' | 'RU' | 'CO' | 'FA' | 'WA' | 'PA' | 'ST' | 'TE' | 'KI';
  position: string;
  reply: string | null;
  pendingQuestion?: {
    toolCallId: string;
    questions: {
      key: string;
      question: string;
      options?: string[];
      required?: boolean;
    }[];
    expiresAt: string;
  };
  pendingApprovals?: {
    toolCallId: string;
    name: string;
    arguments: string;
  }[];
  finishReason?: string | null;
  ragSources?: Array<{
    collection: string;
    documentId: string;
    chunkId: string;
    title: string | null;
    score: number;
  }>;
  /** The reply parsed as JSON and valid against the action's output schema; absent when the action has none. */
  output?: unknown;
  usage: {
    inputTokens: number;
    outputTokens: number;
    estimatedCost: number;
  };
  /** Status FA only: why the turn failed (LLM_RUNTIME_ERROR, LLM_LIMIT_EXCEEDED, TOOL_ERRORS, QUESTION_TIMEOUT, OUTPUT_INVALID, BUDGET_EXCEEDED). The command itself succeeded: HTTP 200, a NATS result. */
  error?: {
    code: string;
    message: string;
    details?: {
      [key: string]: unknown;
    };
  };
}

/** Each command's input: the HTTP body with the path's fields by name (the NATS payload). */
export interface CommandInputs {
  /** Start a conversation in which an agent runs an action */
  startConversation: {
    agentCode: string;
    actionCode: string;
    conversationId?: string;
    metadata?: {
      [key: string]: unknown;
    };
    autoConfirm?: boolean;
  };
  /** Send a message (with attachments) and run a turn */
  sendMessage: {
    conversationId: string;
    content: string;
    attachments?: {
      mediaType: string;
      url: string;
    }[];
    wait?: boolean;
    timeoutMs?: number;
  };
  /** Send a message (with attachments) and run a turn */
  sendMessageWithAttachments: {
    conversationId: string;
    content: string;
    attachments: {
      mediaType: string;
      url: string;
    }[];
    wait?: boolean;
    timeoutMs?: number;
  };
  /** Answer the pending question and continue the turn */
  submitAnswers: {
    conversationId: string;
    answers: {
      [key: string]: string;
    };
    wait?: boolean;
    timeoutMs?: number;
  };
  /** Approve a tool call waiting for approval */
  approveToolCall: {
    conversationId: string;
    toolCallId: string;
    reason?: string | null;
    wait?: boolean;
    timeoutMs?: number;
  };
  /** Reject a tool call waiting for approval */
  rejectToolCall: {
    conversationId: string;
    toolCallId: string;
    reason?: string | null;
    wait?: boolean;
    timeoutMs?: number;
  };
  /** Terminate the conversation */
  terminateConversation: {
    conversationId: string;
    reason?: string | null;
  };
  /** Kill the conversation, a running turn included (admin) */
  killConversation: {
    conversationId: string;
    reason?: string | null;
  };
  /** Pause the conversation (admin) */
  pauseConversation: {
    conversationId: string;
    reason?: string | null;
  };
  /** Resume a paused conversation (admin) */
  resumeConversation: {
    conversationId: string;
    reason?: string | null;
  };
  /** Recover a failed or stuck conversation (admin) */
  recoverConversation: {
    conversationId: string;
    reason?: string | null;
  };
  /** Clear the conversation's memory: later prompts start after its last message */
  clearMemory: {
    conversationId: string;
    reason?: string | null;
  };
  /** Erase the conversation: destroy its data key, so its content reads as erased everywhere (admin or owner) */
  eraseConversation: {
    conversationId: string;
  };
  /** Erase every conversation of a subject and delete its long-term memories (admin or the subject) */
  eraseSubject: {
    subject: string;
  };
  /** Add a tool repository to the conversation */
  addToolRepository: {
    conversationId: string;
    repositoryId: string;
    options?: {
      triggerOnce?: boolean;
      exclusive?: boolean;
    };
    tools: string[];
  };
  /** Seed 004's one-shot generate: answer, tokens and tool trace, recorded as a conversation */
  generate: {
    mode: 'chat' | 'rag';
    system_prompt?: string;
    messages: Array<{
      role: 'user' | 'assistant';
      content: string;
    }>;
    context_chunks?: Array<{
      doc_id: string;
      section_id: string;
      text: string;
      page_start?: number | null;
      page_end?: number | null;
    }>;
    generation_params?: {
      max_tokens?: number;
      temperature?: number;
      top_p?: number;
      presence_penalty?: number;
      frequency_penalty?: number;
      stop?: string[];
    };
    trace_id?: string;
  };
  /** Change a tool repository */
  changeToolRepository: {
    conversationId: string;
    repositoryId: string;
    options?: {
      triggerOnce?: boolean;
      exclusive?: boolean;
    };
    tools: string[];
  };
  /** Remove a tool repository */
  removeToolRepository: {
    conversationId: string;
    repositoryId: string;
  };
  /** Delete one long-term memory of the caller */
  deleteMemory: {
    memoryId: string;
  };
  /** Delete a subject's long-term memories (e.g. `scope=user&scopeId=u1`); answers how many went */
  deleteMemories: {
    scope?: 'session' | 'user' | 'agent' | 'organisation';
    scopeId?: string;
    userId?: string;
    owner?: string;
  };
}

/** Each command's reply. */
export interface CommandReplies {
  /** Start a conversation in which an agent runs an action */
  startConversation: CommandReply;
  /** Send a message (with attachments) and run a turn */
  sendMessage: TurnReply;
  /** Send a message (with attachments) and run a turn */
  sendMessageWithAttachments: TurnReply;
  /** Answer the pending question and continue the turn */
  submitAnswers: TurnReply;
  /** Approve a tool call waiting for approval */
  approveToolCall: TurnReply;
  /** Reject a tool call waiting for approval */
  rejectToolCall: TurnReply;
  /** Terminate the conversation */
  terminateConversation: CommandReply;
  /** Kill the conversation, a running turn included (admin) */
  killConversation: CommandReply;
  /** Pause the conversation (admin) */
  pauseConversation: CommandReply;
  /** Resume a paused conversation (admin) */
  resumeConversation: TurnReply;
  /** Recover a failed or stuck conversation (admin) */
  recoverConversation: TurnReply;
  /** Clear the conversation's memory: later prompts start after its last message */
  clearMemory: CommandReply;
  /** Erase the conversation: destroy its data key, so its content reads as erased everywhere (admin or owner) */
  eraseConversation: {
    conversationId: string;
    status: 'NS' | 'RU' | 'CO' | 'FA' | 'WA' | 'PA' | 'ST' | 'TE' | 'KI';
    position: string;
    erasedAt: string;
  };
  /** Erase every conversation of a subject and delete its long-term memories (admin or the subject) */
  eraseSubject: {
    subject: string;
    conversations: number;
    memories: number;
  };
  /** Add a tool repository to the conversation */
  addToolRepository: CommandReply;
  /** Seed 004's one-shot generate: answer, tokens and tool trace, recorded as a conversation */
  generate: {
    answer: string;
    used_tokens: {
      prompt: number;
      completion: number;
    };
    tools_called: {
      name: string;
      arguments: unknown;
      result_summary: string;
    }[];
    meta: {
      model_name: string;
      latency_ms: number;
      tool_steps: number;
      trace_id: string | null;
      conversation_id: string;
    };
  };
  /** Change a tool repository */
  changeToolRepository: CommandReply;
  /** Remove a tool repository */
  removeToolRepository: CommandReply;
  /** Delete one long-term memory of the caller */
  deleteMemory: null;
  /** Delete a subject's long-term memories (e.g. `scope=user&scopeId=u1`); answers how many went */
  deleteMemories: {
    deleted: number;
  };
}

/** Each query's input: the path's fields and the query string by name (the NATS payload). */
export interface QueryInputs {
  /** Every action */
  getAllActions: {
    minPosition?: string;
  };
  /** The actions the caller may start a conversation on (their model and provider usable by it) */
  getAvailableActions: {
    minPosition?: string;
  };
  /** Active models of a type (default inference) on active providers the caller may use (seed 001) */
  getAvailableModels: {
    modelType?: 'inference' | 'embedding' | 'rerank';
    minPosition?: string;
  };
  /** Active providers the caller may use: owned, instance-wide or shared with it */
  getAvailableProviders: {
    minPosition?: string;
  };
  /** An action by its code */
  findActionByCode: {
    code: string;
    minPosition?: string;
  };
  /** An agent by its code */
  findAgentByCode: {
    code: string;
    minPosition?: string;
  };
  /** A tool by its code */
  findToolByCode: {
    code: string;
    minPosition?: string;
  };
  /** An MCP client by its name */
  findMcpClientByName: {
    name: string;
    minPosition?: string;
  };
  /** Conversations by status, agent, action, subject, text and time, cursor-paged */
  listConversations: {
    status?: 'NS' | 'RU' | 'CO' | 'FA' | 'WA' | 'PA' | 'ST' | 'TE' | 'KI';
    agentCode?: string;
    actionCode?: string;
    subject?: string;
    text?: string;
    from?: string;
    to?: string;
    minPosition?: string;
    limit?: number;
    cursor?: string;
  };
  /** How many conversations of each status the list filters find */
  countConversations: {
    agentCode?: string;
    actionCode?: string;
    subject?: string;
    text?: string;
    from?: string;
    to?: string;
    minPosition?: string;
  };
  /** A conversation */
  findConversation: {
    conversationId: string;
    minPosition?: string;
  };
  /** The messages of a conversation */
  getConversationMessages: {
    conversationId: string;
    minPosition?: string;
  };
  /** The question the conversation waits on */
  getPendingQuestions: {
    conversationId: string;
    minPosition?: string;
  };
  /** Tool calls waiting for approval */
  getPendingApprovals: {
    conversationId: string;
    minPosition?: string;
  };
  /** The tool calls of a conversation */
  getToolCalls: {
    conversationId: string;
    minPosition?: string;
  };
  /** The model calls of a conversation */
  getModelCalls: {
    conversationId: string;
    minPosition?: string;
  };
  /** Usage, cost, errors and latency grouped by day, subject, agent, action or model (a client: its own) */
  getUsage: {
    groupBy: 'day' | 'subject' | 'agent' | 'action' | 'model';
    from?: string;
    to?: string;
    subject?: string;
    agent?: string;
    action?: string;
    model?: string;
    minPosition?: string;
  };
  /** The caller's long-term memories, newest first, or the closest to `q` (admins may name an owner) */
  listMemories: {
    scope?: 'session' | 'user' | 'agent' | 'organisation';
    scopeId?: string;
    userId?: string;
    owner?: string;
    q?: string;
    limit?: number;
    cursor?: string;
    minPosition?: string;
  };
  /** One long-term memory of the caller */
  getMemory: {
    memoryId: string;
    minPosition?: string;
  };
  /** The raw event stream with metadata */
  getEvents: {
    conversationId: string;
    fromRevision?: number;
    limit?: number;
    minPosition?: string;
  };
  /** The folded state at a revision */
  getState: {
    conversationId: string;
    atRevision?: number;
    minPosition?: string;
  };
  /** Re-check the stream's hash chain */
  verifyConversation: {
    conversationId: string;
    minPosition?: string;
  };
  /** The global event feed */
  getGlobalFeed: {
    fromPosition?: string;
    limit?: number;
    minPosition?: string;
  };
}

/** Each query's reply (`unknown` where the table does not describe it yet); null where the query finds nothing. */
export interface QueryReplies {
  /** Every action */
  getAllActions: unknown;
  /** The actions the caller may start a conversation on (their model and provider usable by it) */
  getAvailableActions: unknown;
  /** Active models of a type (default inference) on active providers the caller may use (seed 001) */
  getAvailableModels: unknown;
  /** Active providers the caller may use: owned, instance-wide or shared with it */
  getAvailableProviders: unknown;
  /** An action by its code */
  findActionByCode: unknown;
  /** An agent by its code */
  findAgentByCode: unknown;
  /** A tool by its code */
  findToolByCode: unknown;
  /** An MCP client by its name */
  findMcpClientByName: unknown;
  /** Conversations by status, agent, action, subject, text and time, cursor-paged */
  listConversations: unknown;
  /** How many conversations of each status the list filters find */
  countConversations: unknown;
  /** A conversation */
  findConversation: unknown;
  /** The messages of a conversation */
  getConversationMessages: Array<{
    messageSequence: number;
    llmMessageRole: 'SY' | 'US' | 'AS' | 'TO' | 'QU';
    llmMessageContent: string | null;
    biTokenCount: number | null;
    llmToolCallId: string | null;
    toolCalls: {
      llmToolCallId: string;
      llmToolCallName: string;
      llmToolCallArguments: string;
    }[];
    ragSources: Array<{
      collection: string;
      documentId: string;
      chunkId: string;
      title: string | null;
      score: number;
    }>;
    output: unknown;
    attachments: {
      attachmentSequence: number;
      llmMediaType: string;
      attachmentUrl: string;
    }[];
    turnNo: number;
    createdAt: string;
  }>;
  /** The question the conversation waits on */
  getPendingQuestions: unknown;
  /** Tool calls waiting for approval */
  getPendingApprovals: unknown;
  /** The tool calls of a conversation */
  getToolCalls: unknown;
  /** The model calls of a conversation */
  getModelCalls: unknown;
  /** Usage, cost, errors and latency grouped by day, subject, agent, action or model (a client: its own) */
  getUsage: Array<{
    day?: string;
    subject?: string;
    agent?: string;
    action?: string;
    model?: string;
    conversations: number;
    turns: number;
    errors: number;
    modelCalls: number;
    inputTokens: number;
    outputTokens: number;
    estimatedCost: number;
    embeddingTokens: number;
    embeddingCost: number;
    latencyP50Ms: number | null;
    latencyP95Ms: number | null;
  }>;
  /** The caller's long-term memories, newest first, or the closest to `q` (admins may name an owner) */
  listMemories: unknown;
  /** One long-term memory of the caller */
  getMemory: unknown;
  /** The raw event stream with metadata */
  getEvents: unknown;
  /** The folded state at a revision */
  getState: unknown;
  /** Re-check the stream's hash chain */
  verifyConversation: unknown;
  /** The global event feed */
  getGlobalFeed: unknown;
}

export type CommandName = keyof CommandInputs;
export type QueryName = keyof QueryInputs;

/** How each operation is reached: its table, whether it runs a turn, its HTTP route (null: NATS only). */
export const OPERATIONS = {
  startConversation: { kind: 'command', startsTurn: false, http: { method: 'post', path: '/api/v1/conversations' } },
  sendMessage: {
    kind: 'command',
    startsTurn: true,
    http: { method: 'post', path: '/api/v1/conversations/{conversationId}/messages' },
  },
  sendMessageWithAttachments: { kind: 'command', startsTurn: true, http: null },
  submitAnswers: {
    kind: 'command',
    startsTurn: true,
    http: { method: 'post', path: '/api/v1/conversations/{conversationId}/answers' },
  },
  approveToolCall: {
    kind: 'command',
    startsTurn: true,
    http: { method: 'post', path: '/api/v1/conversations/{conversationId}/tool-calls/{toolCallId}/approve' },
  },
  rejectToolCall: {
    kind: 'command',
    startsTurn: true,
    http: { method: 'post', path: '/api/v1/conversations/{conversationId}/tool-calls/{toolCallId}/reject' },
  },
  terminateConversation: {
    kind: 'command',
    startsTurn: false,
    http: { method: 'post', path: '/api/v1/conversations/{conversationId}/terminate' },
  },
  killConversation: {
    kind: 'command',
    startsTurn: false,
    http: { method: 'post', path: '/api/v1/conversations/{conversationId}/kill' },
  },
  pauseConversation: {
    kind: 'command',
    startsTurn: false,
    http: { method: 'post', path: '/api/v1/conversations/{conversationId}/pause' },
  },
  resumeConversation: {
    kind: 'command',
    startsTurn: true,
    http: { method: 'post', path: '/api/v1/conversations/{conversationId}/resume' },
  },
  recoverConversation: {
    kind: 'command',
    startsTurn: true,
    http: { method: 'post', path: '/api/v1/conversations/{conversationId}/recover' },
  },
  clearMemory: {
    kind: 'command',
    startsTurn: false,
    http: { method: 'post', path: '/api/v1/conversations/{conversationId}/memory/clear' },
  },
  eraseConversation: {
    kind: 'command',
    startsTurn: false,
    http: { method: 'post', path: '/api/v1/conversations/{conversationId}/erase' },
  },
  eraseSubject: {
    kind: 'command',
    startsTurn: false,
    http: { method: 'post', path: '/api/v1/subjects/{subject}/erase' },
  },
  addToolRepository: {
    kind: 'command',
    startsTurn: false,
    http: { method: 'post', path: '/api/v1/conversations/{conversationId}/tool-repositories' },
  },
  generate: { kind: 'command', startsTurn: false, http: { method: 'post', path: '/internal/llm/generate' } },
  changeToolRepository: {
    kind: 'command',
    startsTurn: false,
    http: { method: 'put', path: '/api/v1/conversations/{conversationId}/tool-repositories/{repositoryId}' },
  },
  removeToolRepository: {
    kind: 'command',
    startsTurn: false,
    http: { method: 'delete', path: '/api/v1/conversations/{conversationId}/tool-repositories/{repositoryId}' },
  },
  deleteMemory: { kind: 'command', startsTurn: false, http: { method: 'delete', path: '/api/v1/memories/{memoryId}' } },
  deleteMemories: { kind: 'command', startsTurn: false, http: { method: 'delete', path: '/api/v1/memories' } },
  getAllActions: { kind: 'query', startsTurn: false, http: { method: 'get', path: '/api/v1/actions' } },
  getAvailableActions: { kind: 'query', startsTurn: false, http: { method: 'get', path: '/api/v1/actions/available' } },
  getAvailableModels: { kind: 'query', startsTurn: false, http: { method: 'get', path: '/api/v1/models/available' } },
  getAvailableProviders: {
    kind: 'query',
    startsTurn: false,
    http: { method: 'get', path: '/api/v1/providers/available' },
  },
  findActionByCode: {
    kind: 'query',
    startsTurn: false,
    http: { method: 'get', path: '/api/v1/actions/{code}', nullIsNotFound: true },
  },
  findAgentByCode: {
    kind: 'query',
    startsTurn: false,
    http: { method: 'get', path: '/api/v1/agents/{code}', nullIsNotFound: true },
  },
  findToolByCode: {
    kind: 'query',
    startsTurn: false,
    http: { method: 'get', path: '/api/v1/tools/{code}', nullIsNotFound: true },
  },
  findMcpClientByName: {
    kind: 'query',
    startsTurn: false,
    http: { method: 'get', path: '/api/v1/mcp-clients/{name}', nullIsNotFound: true },
  },
  listConversations: { kind: 'query', startsTurn: false, http: { method: 'get', path: '/api/v1/conversations' } },
  countConversations: {
    kind: 'query',
    startsTurn: false,
    http: { method: 'get', path: '/api/v1/conversations/counts' },
  },
  findConversation: {
    kind: 'query',
    startsTurn: false,
    http: { method: 'get', path: '/api/v1/conversations/{conversationId}', nullIsNotFound: true },
  },
  getConversationMessages: {
    kind: 'query',
    startsTurn: false,
    http: { method: 'get', path: '/api/v1/conversations/{conversationId}/messages' },
  },
  getPendingQuestions: {
    kind: 'query',
    startsTurn: false,
    http: { method: 'get', path: '/api/v1/conversations/{conversationId}/pending-question', nullIsNotFound: true },
  },
  getPendingApprovals: {
    kind: 'query',
    startsTurn: false,
    http: { method: 'get', path: '/api/v1/conversations/{conversationId}/pending-approvals' },
  },
  getToolCalls: {
    kind: 'query',
    startsTurn: false,
    http: { method: 'get', path: '/api/v1/conversations/{conversationId}/tool-calls' },
  },
  getModelCalls: {
    kind: 'query',
    startsTurn: false,
    http: { method: 'get', path: '/api/v1/conversations/{conversationId}/model-calls' },
  },
  getUsage: { kind: 'query', startsTurn: false, http: { method: 'get', path: '/api/v1/usage' } },
  listMemories: { kind: 'query', startsTurn: false, http: { method: 'get', path: '/api/v1/memories' } },
  getMemory: {
    kind: 'query',
    startsTurn: false,
    http: { method: 'get', path: '/api/v1/memories/{memoryId}', nullIsNotFound: true },
  },
  getEvents: {
    kind: 'query',
    startsTurn: false,
    http: { method: 'get', path: '/api/v1/conversations/{conversationId}/events' },
  },
  getState: {
    kind: 'query',
    startsTurn: false,
    http: { method: 'get', path: '/api/v1/conversations/{conversationId}/state' },
  },
  verifyConversation: {
    kind: 'query',
    startsTurn: false,
    http: { method: 'get', path: '/api/v1/conversations/{conversationId}/verify' },
  },
  getGlobalFeed: { kind: 'query', startsTurn: false, http: { method: 'get', path: '/api/v1/events' } },
} as const;
