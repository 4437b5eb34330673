import { Inject, Injectable, Optional } from '@nestjs/common';
import { TurnSlots } from '@parley/auth';
import { CONFIG, type Config } from '@parley/config';
import { DomainError } from '@parley/core';
import type { OperationContext } from '../api/operation';
import type { TurnReply } from '../api/replies';
import type { ConversationCommand, ConversationState } from '@parley/domain';
import { CommandRunner, type CommandBuilder } from './command-runner';
import { turnReplyOf } from './turn-reply';
import { TurnWaiter } from './turn-waiter';

export interface WaitInput {
  wait: boolean;
  timeoutMs?: number;
}

/**
 * The shared tail of every command that starts or resumes a turn: take a running-turn slot (with
 * the rate limit's verdict, when the front door left it here), run the command, then (with
 * `wait`) wait for the turn to end or pause.
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
    ctx: OperationContext,
    input: WaitInput,
    body: { type: ConversationCommand['type'] } & Record<string, unknown>,
    build: CommandBuilder,
  ): Promise<TurnReply> {
    return (await this.runFolded(conversationId, ctx, input, body, build)).reply;
  }

  /** `run`, with the state the reply was made from (a caller that needs more of it reads no stream). */
  async runFolded(
    conversationId: string,
    ctx: OperationContext,
    input: WaitInput,
    body: { type: ConversationCommand['type'] } & Record<string, unknown>,
    build: CommandBuilder,
  ): Promise<{ reply: TurnReply; state: ConversationState }> {
    const { took, subject } = await this.admit(conversationId, ctx);
    // Only a slot this command took is given back: one it found held is a running turn's.
    const giveBack = () => (took ? this.slots?.release(subject, conversationId) : undefined);
    const watch = input.wait ? this.waiter.watch(conversationId) : null;
    try {
      let executed;
      try {
        executed = await this.runner.execute(conversationId, ctx, body, build);
      } catch (err) {
        // Refused because a turn runs: the slot is that turn's, even one this command took while
        // the running turn's own command was on its way.
        if (!refusedWhileRunning(err)) await giveBack();
        throw err;
      }
      const startsTurn = executed.events.some((e) => e.type === 'TurnStarted' || e.type === 'TurnResumed');
      if (!startsTurn) await giveBack();
      if (!watch)
        return {
          reply: turnReplyOf(conversationId, executed.state, executed.position, executed.state.status !== 'RU'),
          state: executed.state,
        };
      // A request held open is a connection and a poll loop: never longer than MAX_WAIT_MS.
      const timeoutMs = Math.min(input.timeoutMs ?? this.config.turn.timeoutMs, this.config.limits.maxWaitMs);
      const waited = await watch.until(executed, timeoutMs, executed.replayed);
      return { reply: turnReplyOf(conversationId, waited.state, waited.position, waited.done), state: waited.state };
    } finally {
      watch?.close();
    }
  }

  /**
   * Takes the slot while the rate limit's verdict is still on its way: both Redis scripts are in
   * flight at once, so the command waits for Redis once instead of twice. A refusal by either
   * leaves no slot taken behind it. The slot is the owner's (an admin's command on a client's
   * conversation takes the client's, which the worker gives back when the turn ends). `took`:
   * the slot was taken here, not held already by a running turn.
   */
  private async admit(conversationId: string, ctx: OperationContext): Promise<{ took: boolean; subject: string }> {
    const { slots } = this;
    const owner = slots
      ? this.runner.ownerOf(conversationId).then((o) => o ?? ctx.caller.subject)
      : Promise.resolve(ctx.caller.subject);
    const [verdict, slot] = await Promise.allSettled([
      ctx.rateLimit,
      owner.then((subject) => slots?.acquire(subject, conversationId)),
    ]);
    const subject = await owner.catch(() => ctx.caller.subject);
    const took = slot.status === 'fulfilled' && slot.value === 'taken';
    if (verdict.status === 'rejected') {
      if (took) await this.slots?.release(subject, conversationId).catch(() => undefined);
      throw verdict.reason;
    }
    if (slot.status === 'rejected') throw slot.reason;
    return { took, subject };
  }
}

/** The decider's refusals name the conversation's status; RU means a turn is running now. */
const refusedWhileRunning = (err: unknown) => err instanceof DomainError && err.details?.status === 'RU';
