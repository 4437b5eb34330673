import { Inject, Injectable } from '@nestjs/common';
import type { CommandContext, CommandReply, TurnReply } from '../../api/replies';
import type { LifecycleRequest } from '../../api/requests';
import { CommandRunner } from '../command-runner';
import { commandReplyOf } from '../turn-reply';
import { TurnCommand } from '../turn-command';

type Ending = 'TerminateConversation' | 'KillConversation' | 'PauseConversation';
type Restart = 'ResumeConversation' | 'RecoverConversation';

/** Terminate, kill and pause end or hold a conversation; resume and recover restart its turn. */
@Injectable()
export class ChangeLifecycleHandler {
  constructor(
    @Inject(CommandRunner) private readonly runner: CommandRunner,
    @Inject(TurnCommand) private readonly turn: TurnCommand,
  ) {}

  async end(type: Ending, conversationId: string, input: LifecycleRequest, ctx: CommandContext): Promise<CommandReply> {
    const reason = input.reason ?? null;
    const done = await this.runner.execute(conversationId, ctx, { type, reason }, (meta) => ({
      type,
      data: { reason },
      meta,
    }));
    return commandReplyOf(conversationId, done.state, done.position);
  }

  restart(type: Restart, conversationId: string, ctx: CommandContext): Promise<TurnReply> {
    return this.turn.run(conversationId, ctx, { wait: false }, { type }, (meta) => ({ type, data: {}, meta }));
  }
}
