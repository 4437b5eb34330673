import { Inject, Injectable } from '@nestjs/common';
import { z } from 'zod';
import { conversationId, reason } from '../../api/input-fields';
import type { OperationContext } from '../../api/operation';
import type { CommandReply, TurnReply } from '../../api/replies';
import { CommandRunner } from '../command-runner';
import { commandReplyOf } from '../turn-reply';
import { TurnCommand } from '../turn-command';

export const lifecycleInput = z.strictObject({ conversationId, reason });
type LifecycleInput = z.output<typeof lifecycleInput>;

/** Terminate, kill and pause end or hold a conversation: one event each, the same steps. */
abstract class EndsConversation {
  protected abstract readonly type: 'TerminateConversation' | 'KillConversation' | 'PauseConversation';

  constructor(@Inject(CommandRunner) private readonly runner: CommandRunner) {}

  async execute(input: LifecycleInput, ctx: OperationContext): Promise<CommandReply> {
    const { type } = this;
    const reason = input.reason ?? null;
    const done = await this.runner.execute(input.conversationId, ctx, { type, reason }, (meta) => ({
      type,
      data: { reason },
      meta,
    }));
    return commandReplyOf(input.conversationId, done.state, done.position);
  }
}

@Injectable()
export class TerminateConversationHandler extends EndsConversation {
  protected readonly type = 'TerminateConversation';
}

@Injectable()
export class KillConversationHandler extends EndsConversation {
  protected readonly type = 'KillConversation';
}

@Injectable()
export class PauseConversationHandler extends EndsConversation {
  protected readonly type = 'PauseConversation';
}

/** Resume and recover restart a conversation's turn; the caller does not wait for it. */
abstract class RestartsTurn {
  protected abstract readonly type: 'ResumeConversation' | 'RecoverConversation';

  constructor(@Inject(TurnCommand) private readonly turn: TurnCommand) {}

  execute(input: LifecycleInput, ctx: OperationContext): Promise<TurnReply> {
    const { type } = this;
    return this.turn.run(input.conversationId, ctx, { wait: false }, { type }, (meta) => ({ type, data: {}, meta }));
  }
}

@Injectable()
export class ResumeConversationHandler extends RestartsTurn {
  protected readonly type = 'ResumeConversation';
}

@Injectable()
export class RecoverConversationHandler extends RestartsTurn {
  protected readonly type = 'RecoverConversation';
}
