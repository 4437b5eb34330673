import { Inject, Injectable } from '@nestjs/common';
import { z } from 'zod';
import { conversationId, repositoryIdSchema as repositoryId, toolRepositoryBody } from '../../api/input-fields';
import type { OperationContext } from '../../api/operation';
import type { CommandReply } from '../../api/replies';
import { CommandRunner } from '../command-runner';
import { SNAPSHOT_SOURCE, type SnapshotSource } from '../snapshot-source';
import { commandReplyOf } from '../turn-reply';

/** A conversation-level tool repository (seed 002), named by the conversation and its id. */
export const toolRepositoryInput = z.strictObject({ conversationId, repositoryId, ...toolRepositoryBody });
export const repositoryRef = z.strictObject({ conversationId, repositoryId });
type ToolRepositoryInput = z.output<typeof toolRepositoryInput>;

/**
 * AddToolRepository / ChangeToolRepository: catalog tool codes are resolved here, once, so the
 * events carry the definitions a replay needs — and with the caller, so only tools shared with
 * it (FORBIDDEN otherwise, nothing appended) reach its conversation.
 */
abstract class WritesToolRepository {
  protected abstract readonly type: 'AddToolRepository' | 'ChangeToolRepository';

  constructor(
    @Inject(CommandRunner) private readonly runner: CommandRunner,
    @Inject(SNAPSHOT_SOURCE) private readonly snapshots: SnapshotSource,
  ) {}

  async execute(input: ToolRepositoryInput, ctx: OperationContext): Promise<CommandReply> {
    const { type } = this;
    const tools = await this.snapshots.resolveTools(input.tools, ctx.caller);
    const { repositoryId, options } = input;
    const body = { type, repositoryId, options, tools: input.tools };
    const done = await this.runner.execute(input.conversationId, ctx, body, (meta) => ({
      type,
      data: { repositoryId, options, tools },
      meta,
    }));
    return commandReplyOf(input.conversationId, done.state, done.position);
  }
}

@Injectable()
export class AddToolRepositoryHandler extends WritesToolRepository {
  protected readonly type = 'AddToolRepository';
}

@Injectable()
export class ChangeToolRepositoryHandler extends WritesToolRepository {
  protected readonly type = 'ChangeToolRepository';
}

@Injectable()
export class RemoveToolRepositoryHandler {
  constructor(@Inject(CommandRunner) private readonly runner: CommandRunner) {}

  async execute(input: z.output<typeof repositoryRef>, ctx: OperationContext): Promise<CommandReply> {
    const { conversationId, repositoryId } = input;
    const type = 'RemoveToolRepository';
    const done = await this.runner.execute(conversationId, ctx, { type, repositoryId }, (meta) => ({
      type,
      data: { repositoryId },
      meta,
    }));
    return commandReplyOf(conversationId, done.state, done.position);
  }
}
