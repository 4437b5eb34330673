import { Inject, Injectable } from '@nestjs/common';
import { v5 as uuidv5, v7 as uuidv7 } from 'uuid';
import type { CommandContext, CommandReply } from '../../api/replies';
import type { StartConversationRequest } from '../../api/requests';
import { CommandRunner } from '../command-runner';
import { SNAPSHOT_SOURCE, type SnapshotSource } from '../snapshot-source';
import { commandReplyOf } from '../turn-reply';

/** Namespace for conversation ids derived from an idempotency key (a retried start finds the same id). */
const IDEMPOTENT_START = '6f1c2d1e-3b7a-5c49-9a51-2a3f0e9b7c10';

@Injectable()
export class StartConversationHandler {
  constructor(
    @Inject(CommandRunner) private readonly runner: CommandRunner,
    @Inject(SNAPSHOT_SOURCE) private readonly snapshots: SnapshotSource,
  ) {}

  async execute(input: StartConversationRequest, ctx: CommandContext): Promise<CommandReply> {
    const conversationId =
      input.conversationId ??
      (ctx.idempotencyKey ? uuidv5(`${ctx.caller.subject}:${ctx.idempotencyKey}`, IDEMPOTENT_START) : uuidv7());
    const snapshot = await this.snapshots.resolve(input.agentCode, input.actionCode, ctx.caller);
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
}
