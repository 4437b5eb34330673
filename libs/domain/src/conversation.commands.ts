import type { ConversationSnapshot } from '@parley/core';
import type { Attachment, ContextRetrieved } from './conversation.events';
import type { ToolRepository } from './tool-repositories';

/** Who sends a command, when, and under which idempotency key. Time and ids come from here. */
export interface CommandMeta {
  now: string;
  actor: string;
  commandId?: string;
}

type Command<T extends string, D> = { readonly type: T; readonly data: Readonly<D>; readonly meta: CommandMeta };

export type StartConversation = Command<
  'StartConversation',
  {
    conversationId: string;
    agentCode: string;
    actionCode: string;
    metadata: Record<string, unknown>;
    snapshot: ConversationSnapshot;
    /**
     * Messages the conversation starts with, recorded before any turn (turn 0): a one-shot
     * caller's earlier messages (seed 004's generate) become the history its turn remembers.
     */
    history?: HistoryMessage[];
    /** A first message that starts the first turn in the same append (a one-shot caller's turn). */
    message?: FirstMessage;
  }
>;
export interface FirstMessage {
  content: string;
  tokenCount: number;
  /** A context block the caller brought, recorded as the turn's retrieval. */
  context?: Omit<ContextRetrieved['data'], 'turnNo'>;
}
export interface HistoryMessage {
  role: 'US' | 'AS';
  content: string;
  tokenCount: number;
}
export type SendMessage = Command<'SendMessage', { content: string; tokenCount: number; attachments: Attachment[] }>;
export type SubmitAnswers = Command<'SubmitAnswers', { answers: Record<string, string> }>;
export type ApproveToolCall = Command<'ApproveToolCall', { toolCallId: string }>;
export type RejectToolCall = Command<'RejectToolCall', { toolCallId: string; reason: string | null }>;
export type TerminateConversation = Command<'TerminateConversation', { reason: string | null }>;
export type KillConversation = Command<'KillConversation', { reason: string | null }>;
export type PauseConversation = Command<'PauseConversation', { reason: string | null }>;
export type ResumeConversation = Command<'ResumeConversation', Record<string, never>>;
export type RecoverConversation = Command<'RecoverConversation', Record<string, never>>;
/** Seed 000: memories can be cleared explicitly. The prompt starts after the clear; the stream keeps everything. */
export type ClearMemory = Command<'ClearMemory', { reason: string | null }>;
/** Erasure: the handler destroys the data key; the decider records it and closes the conversation. */
export type EraseConversation = Command<'EraseConversation', Record<string, never>>;
/** Tools arrive resolved (catalog codes turned into definitions by the handler). */
export type AddToolRepository = Command<'AddToolRepository', ToolRepository>;
export type ChangeToolRepository = Command<'ChangeToolRepository', ToolRepository>;
export type RemoveToolRepository = Command<'RemoveToolRepository', { repositoryId: string }>;

export type ConversationCommand =
  | StartConversation
  | SendMessage
  | SubmitAnswers
  | ApproveToolCall
  | RejectToolCall
  | TerminateConversation
  | KillConversation
  | PauseConversation
  | ResumeConversation
  | RecoverConversation
  | ClearMemory
  | EraseConversation
  | AddToolRepository
  | ChangeToolRepository
  | RemoveToolRepository;

export type ConversationCommandType = ConversationCommand['type'];
