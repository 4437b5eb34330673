import { Inject, Injectable } from '@nestjs/common';
import { assertCanCommand, requireRoles } from '@parley/auth';
import { DomainError } from '@parley/core';
import { CONVERSATION_KEYS, type ConversationKeys } from '@parley/event-store';
import { PG_POOL } from '@parley/platform';
import type { Pool } from 'pg';
import { z } from 'zod';
import { conversationId } from '../../api/input-fields';
import type { OperationContext } from '../../api/operation';
import { commandReply } from '../../api/reply-schemas';
import { ConversationRepository } from '../../repository/conversation.repository';
import { CommandRunner } from '../command-runner';
import { withMemoryStore } from '../memories/memories.handler';
import { commandReplyOf } from '../turn-reply';

export const eraseConversationInput = z.strictObject({ conversationId });
type EraseConversationInput = z.output<typeof eraseConversationInput>;

export const eraseConversationReply = commandReply.extend({
  /** When the conversation was first erased (erasing again changes nothing). */
  erasedAt: z.string(),
});
export type EraseConversationReply = z.output<typeof eraseConversationReply>;

/**
 * Erasure by crypto-shredding (docs/security.md, "Erasure"): checks the caller (admin, or the
 * owner), destroys the conversation's data key, then records ConversationErased (closing the
 * conversation). From then on its content reads as `[erased]` everywhere; the events stay and
 * `verify` still checks them. Idempotent: erasing again answers the same.
 */
@Injectable()
export class EraseConversationHandler {
  constructor(
    @Inject(CommandRunner) private readonly runner: CommandRunner,
    @Inject(ConversationRepository) private readonly repository: ConversationRepository,
    @Inject(CONVERSATION_KEYS) private readonly keys: ConversationKeys,
  ) {}

  async execute(input: EraseConversationInput, ctx: OperationContext): Promise<EraseConversationReply> {
    requireRoles(ctx.caller, ['client', 'admin']);
    const owner = await this.runner.ownerOf(input.conversationId);
    if (owner === null) throw DomainError.notFound('Conversation', input.conversationId);
    // Before the key goes: nobody but the owner or an admin destroys it.
    assertCanCommand(ctx.caller, owner);
    const { erasedAt } = await this.keys.erase(input.conversationId, ctx.caller.subject);
    const done = await this.runner.execute(input.conversationId, ctx, { type: 'EraseConversation' }, (meta) => ({
      type: 'EraseConversation',
      data: {},
      meta,
    }));
    this.repository.forget(input.conversationId);
    return { ...commandReplyOf(input.conversationId, done.state, done.position), erasedAt };
  }
}

export const eraseSubjectInput = z.strictObject({ subject: z.string().trim().min(1).max(255) });
type EraseSubjectInput = z.output<typeof eraseSubjectInput>;

export const eraseSubjectReply = z.object({
  subject: z.string(),
  /** The subject's conversations now erased (those erased before included). */
  conversations: z.number().int(),
  /** Long-term memories deleted: those the subject owns and those kept about it as a user. */
  memories: z.number().int(),
});
export type EraseSubjectReply = z.output<typeof eraseSubjectReply>;

/**
 * Erases every conversation a subject owns and deletes its
 * long-term memories: the facts it owns, and the user-scope facts kept about it. Admins, or the
 * subject itself.
 */
@Injectable()
export class EraseSubjectHandler {
  constructor(
    @Inject(EraseConversationHandler) private readonly conversations: EraseConversationHandler,
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(CONVERSATION_KEYS) private readonly keys: ConversationKeys,
  ) {}

  async execute(input: EraseSubjectInput, ctx: OperationContext): Promise<EraseSubjectReply> {
    requireRoles(ctx.caller, ['client', 'admin']);
    if (!ctx.caller.roles.includes('admin') && ctx.caller.subject !== input.subject)
      throw new DomainError('FORBIDDEN', 'A client may erase only its own subject.');
    // Sealed conversations are known by their key at once; older ones (and those stored with
    // CONTENT_ENCRYPTION=false) through the read models.
    const { rows } = await this.pool.query<{ id: string }>(
      `select conversation_id::text as id from rm_conversations where owner = $1`,
      [input.subject],
    );
    const ids = [...new Set([...(await this.keys.conversationsOf(input.subject)), ...rows.map((r) => r.id)])];
    let erased = 0;
    for (const id of ids) {
      try {
        await this.conversations.execute({ conversationId: id }, ctx);
        erased++;
      } catch (err) {
        // A key whose conversation was never stored (its start failed after the key was made).
        if (!(err instanceof DomainError && err.code === 'NOT_FOUND')) throw err;
      }
    }
    return { subject: input.subject, conversations: erased, memories: await this.eraseMemories(input.subject) };
  }

  private eraseMemories(subject: string): Promise<number> {
    return withMemoryStore(
      this.pool,
      async (store) =>
        (await store.deleteMany({ owner: subject })) +
        (await store.deleteMany({ owner: null, scope: 'user', scopeId: subject })),
      0,
    );
  }
}
