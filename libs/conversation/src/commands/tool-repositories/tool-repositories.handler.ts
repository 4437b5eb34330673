import { Inject, Injectable } from '@nestjs/common';
import type { CommandContext, CommandReply } from '../../api/replies';
import type { AddToolRepositoryRequest, ChangeToolRepositoryRequest } from '../../api/requests';
import { CommandRunner } from '../command-runner';
import { SNAPSHOT_SOURCE, type SnapshotSource } from '../snapshot-source';
import { commandReplyOf } from '../turn-reply';

/**
 * AddToolRepository / ChangeToolRepository / RemoveToolRepository (seed 002). Catalog tool
 * codes are resolved here, once, so the events carry the definitions a replay needs.
 */
@Injectable()
export class ToolRepositoriesHandler {
  constructor(
    @Inject(CommandRunner) private readonly runner: CommandRunner,
    @Inject(SNAPSHOT_SOURCE) private readonly snapshots: SnapshotSource,
  ) {}

  async add(conversationId: string, input: AddToolRepositoryRequest, ctx: CommandContext): Promise<CommandReply> {
    const tools = await this.snapshots.resolveTools(input.tools);
    const { repositoryId, options } = input;
    const done = await this.runner.execute(conversationId, ctx, { type: 'AddToolRepository', ...input }, (meta) => ({
      type: 'AddToolRepository',
      data: { repositoryId, options, tools },
      meta,
    }));
    return commandReplyOf(conversationId, done.state, done.position);
  }

  async change(
    conversationId: string,
    repositoryId: string,
    input: ChangeToolRepositoryRequest,
    ctx: CommandContext,
  ): Promise<CommandReply> {
    const tools = await this.snapshots.resolveTools(input.tools);
    const body = { type: 'ChangeToolRepository' as const, repositoryId, ...input };
    const done = await this.runner.execute(conversationId, ctx, body, (meta) => ({
      type: 'ChangeToolRepository',
      data: { repositoryId, options: input.options, tools },
      meta,
    }));
    return commandReplyOf(conversationId, done.state, done.position);
  }

  async remove(conversationId: string, repositoryId: string, ctx: CommandContext): Promise<CommandReply> {
    const type = 'RemoveToolRepository';
    const done = await this.runner.execute(conversationId, ctx, { type, repositoryId }, (meta) => ({
      type,
      data: { repositoryId },
      meta,
    }));
    return commandReplyOf(conversationId, done.state, done.position);
  }
}
