import { Inject, Injectable } from '@nestjs/common';
import { requireRoles } from '@parley/auth';
import { CONFIG, type Config } from '@parley/config';
import { DomainError } from '@parley/core';
import { z } from 'zod';
import { code } from '../../api/input-fields';
import type { OperationContext } from '../../api/operation';
import type { CommandReply } from '../../api/replies';
import { CommandRunner } from '../command-runner';
import { ConversationRepository } from '../../repository/conversation.repository';
import { SNAPSHOT_SOURCE, type SnapshotSource } from '../snapshot-source';
import { commandReplyOf } from '../turn-reply';

export const startConversationInput = z.strictObject({
  agentCode: code(8),
  actionCode: code(12),
  // Version-5 ids are the ones derived from a caller's Idempotency-Key: a caller choosing one could
  // squat on the conversation another caller's retried start would find.
  conversationId: z
    .uuid()
    .refine((id) => id[14] !== '5', { message: 'expected a UUID of another version than 5 (derived ids)' })
    .optional(),
  metadata: z.record(z.string(), z.unknown()).default({}),
  /** Seed 001's auto_confirm for this conversation: tools that need approval run without waiting. */
  autoConfirm: z.boolean().optional(),
});

/** Namespace for conversation ids derived from an idempotency key (a retried start finds the same id). */
const IDEMPOTENT_START = '6f1c2d1e-3b7a-5c49-9a51-2a3f0e9b7c10';

/**
 * StartConversation: freezes the agent's and action's snapshot into a new conversation. The
 * caller's roles are checked first: resolving the snapshot may spawn or connect MCP servers.
 */
@Injectable()
export class StartConversationHandler {
  constructor(
    @Inject(CommandRunner) private readonly runner: CommandRunner,
    @Inject(SNAPSHOT_SOURCE) private readonly snapshots: SnapshotSource,
    @Inject(CONFIG) private readonly config: Config,
    @Inject(ConversationRepository) private readonly repository: ConversationRepository,
  ) {}

  async execute(input: z.output<typeof startConversationInput>, ctx: OperationContext): Promise<CommandReply> {
    this.checkMetadataSize(input.metadata);
    const conversationId =
      input.conversationId ?? this.repository.idForNew(IDEMPOTENT_START, ctx.caller.subject, ctx.idempotencyKey);
    requireRoles(ctx.caller, ['client', 'admin']);
    const resolved = await this.snapshots.resolve(input.agentCode, input.actionCode, ctx.caller);
    const snapshot = input.autoConfirm ? { ...resolved, autoConfirm: true as const } : resolved;
    const done = await this.runner.execute(conversationId, ctx, { type: 'StartConversation', ...input }, (meta) => ({
      type: 'StartConversation',
      data: {
        conversationId,
        agentCode: input.agentCode,
        actionCode: input.actionCode,
        metadata: input.metadata,
        snapshot,
      },
      meta,
    }));
    return commandReplyOf(conversationId, done.state, done.position);
  }

  /** Metadata travels in ConversationStarted to every reader and over NATS: it is kept small. */
  private checkMetadataSize(metadata: Record<string, unknown>): void {
    const limit = this.config.eventStore.maxMetadataBytes;
    const bytes = Buffer.byteLength(JSON.stringify(metadata));
    if (bytes > limit)
      throw new DomainError(
        'PAYLOAD_TOO_LARGE',
        `The conversation's metadata is too large: ${bytes} bytes as JSON, at most ${limit} (METADATA_MAX_BYTES).`,
        { field: 'metadata', limit, actual: bytes },
      );
  }
}
