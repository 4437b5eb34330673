import { Inject, Injectable, Optional } from '@nestjs/common';
import { TurnSlots } from '@parley/auth';
import { CONFIG, type Config } from '@parley/config';
import type { CommandContext, TurnReply } from '../api/replies';
import type { CommandMeta, ConversationCommand } from '../domain/conversation.commands';
import { CommandRunner } from './command-runner';
import { turnReplyOf } from './turn-reply';
import { TurnWaiter } from './turn-waiter';

export interface WaitInput {
  wait: boolean;
  timeoutMs?: number;
}

/**
 * The shared tail of every command that starts or resumes a turn: take a running-turn slot,
 * run the command, then (with `wait`) wait for the turn to end or pause.
 */
@Injectable()
export class TurnCommand {
  constructor(
    @Inject(CommandRunner) private readonly runner: CommandRunner,
    @Inject(TurnWaiter) private readonly waiter: TurnWaiter,
    @Inject(CONFIG) private readonly config: Config,
    @Optional() @Inject(TurnSlots) private readonly slots?: TurnSlots,
  ) {}

  async run(
    conversationId: string,
    ctx: CommandContext,
    input: WaitInput,
    body: { type: ConversationCommand['type'] } & Record<string, unknown>,
    build: (meta: CommandMeta) => ConversationCommand,
  ): Promise<TurnReply> {
    await this.slots?.acquire(ctx.caller.subject, conversationId);
    const watch = input.wait ? this.waiter.watch(conversationId) : null;
    try {
      let executed;
      try {
        executed = await this.runner.execute(conversationId, ctx, body, build);
      } catch (err) {
        await this.slots?.release(ctx.caller.subject, conversationId);
        throw err;
      }
      const startsTurn = executed.events.some((e) => e.type === 'TurnStarted' || e.type === 'TurnResumed');
      if (!startsTurn && !executed.replayed) await this.slots?.release(ctx.caller.subject, conversationId);
      if (!watch) return turnReplyOf(conversationId, executed.state, executed.position, executed.state.status !== 'RU');
      const timeoutMs = input.timeoutMs ?? this.config.turn.timeoutMs;
      const waited = await watch.until(executed, timeoutMs, executed.replayed);
      return turnReplyOf(conversationId, waited.state, waited.position, waited.done);
    } finally {
      watch?.close();
    }
  }
}
