import { Inject, Injectable } from '@nestjs/common';
import { z } from 'zod';
import { conversationId, reason } from '../../api/input-fields';
import type { OperationContext } from '../../api/operation';
import type { CommandReply } from '../../api/replies';
import { CommandRunner } from '../command-runner';
import { commandReplyOf } from '../turn-reply';

export const clearMemoryInput = z.strictObject({ conversationId, reason });
type ClearMemoryInput = z.output<typeof clearMemoryInput>;

/**
 * Clears the conversation's memory (seed 000): the next turn's prompt starts after the last
 * message recorded now. The stream and the messages read model keep every message.
 */
@Injectable()
export class ClearMemoryHandler {
  constructor(@Inject(CommandRunner) private readonly runner: CommandRunner) {}

  async execute(input: ClearMemoryInput, ctx: OperationContext): Promise<CommandReply> {
    const reason = input.reason ?? null;
    const done = await this.runner.execute(input.conversationId, ctx, { type: 'ClearMemory', reason }, (meta) => ({
      type: 'ClearMemory',
      data: { reason },
      meta,
    }));
    return commandReplyOf(input.conversationId, done.state, done.position);
  }
}
