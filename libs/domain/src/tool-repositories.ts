import { assertNever, DomainError, type ToolDefinition } from '@parley/core';
import type { AddToolRepository, ChangeToolRepository, RemoveToolRepository } from './conversation.commands';
import type { ConversationEvent } from './conversation.events';
import type { ConversationData, ExistingConversation } from './conversation.state';

/**
 * Seed 002's tool repositories at conversation level: named sets of tools a client adds,
 * changes and removes between turns. The application level is the catalog: the action's tools
 * (and its skills'), frozen into the snapshot when the conversation starts.
 */
export interface ToolRepositoryOptions {
  /** The repository goes away once one of its tools has completed (one choice among several). */
  triggerOnce: boolean;
  /**
   * One of its tools is expected to answer: while an exclusive repository is present, the model
   * is offered only the tools of exclusive repositories, plus AskUserQuestion to clarify.
   */
  exclusive: boolean;
}

export interface ToolRepository {
  repositoryId: string;
  options: ToolRepositoryOptions;
  tools: ToolDefinition[];
}

/**
 * Repositories change only while no turn runs: a turn's worker appends with the revision it
 * last saw, and a write under it would stop the turn.
 */
export function decideToolRepository(
  command: AddToolRepository | ChangeToolRepository | RemoveToolRepository,
  state: ExistingConversation,
  refuse: (code: 'CONVERSATION_CLOSED' | 'CONVERSATION_BUSY', why: string) => DomainError,
): ConversationEvent[] {
  if (state.status === 'TE' || state.status === 'KI') throw refuse('CONVERSATION_CLOSED', 'is closed');
  if (state.status === 'RU') throw refuse('CONVERSATION_BUSY', 'is running a turn; change its tools between turns');
  const { repositoryId } = command.data;
  const existing = state.toolRepositories.find((r) => r.repositoryId === repositoryId);
  switch (command.type) {
    case 'AddToolRepository':
      if (existing)
        throw new DomainError('CONFLICT', `Tool repository '${repositoryId}' already exists.`, { repositoryId });
      noClash(state, command.data);
      return [{ type: 'ToolRepositoryAdded', data: { ...command.data } }];
    case 'ChangeToolRepository':
      if (!existing) throw notFound(repositoryId);
      noClash(state, command.data);
      return [{ type: 'ToolRepositoryChanged', data: { ...command.data } }];
    case 'RemoveToolRepository':
      if (!existing) throw notFound(repositoryId);
      return [{ type: 'ToolRepositoryRemoved', data: { repositoryId, reason: 'removed' } }];
    default:
      return assertNever(command);
  }
}

/** The model calls tools by name, so a name may be offered once: a clash is refused, never renamed. */
function noClash(state: ConversationData, repository: ToolRepository): void {
  const taken = new Map<string, string>([
    ...state.snapshot.tools.map((t) => [t.name, 'the action'] as const),
    ...state.disclosedTools.map((t) => [t.name, 'a disclosed skill'] as const),
    ...state.toolRepositories
      .filter((r) => r.repositoryId !== repository.repositoryId)
      .flatMap((r) => r.tools.map((t) => [t.name, `tool repository '${r.repositoryId}'`] as const)),
  ]);
  const seen = new Set<string>();
  const clashes = repository.tools.flatMap((t) => {
    const owner = seen.has(t.name) ? 'this repository' : taken.get(t.name);
    seen.add(t.name);
    return owner ? [{ tool: t.name, offeredBy: owner }] : [];
  });
  if (clashes.length === 0) return;
  const list = clashes.map((c) => `'${c.tool}' (already offered by ${c.offeredBy})`).join(', ');
  throw new DomainError('CONFLICT', `Tool repository '${repository.repositoryId}' repeats tool names: ${list}.`, {
    repositoryId: repository.repositoryId,
    clashes,
  });
}

const notFound = (repositoryId: string) =>
  new DomainError('NOT_FOUND', `Tool repository '${repositoryId}' was not found in this conversation.`, {
    repositoryId,
  });

/** The repository a tool the model may call comes from, if it comes from one. */
export const repositoryOf = (c: ConversationData, toolName: string): ToolRepository | undefined =>
  c.toolRepositories.find((r) => r.tools.some((t) => t.name === toolName));
