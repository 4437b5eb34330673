import { Inject, Injectable, Logger } from '@nestjs/common';
import { assertCanCommand, requireRoles } from '@parley/auth';
import { WrongExpectedVersion } from '@parley/event-store';
import { withSpan } from '@parley/observability';
import { DomainError } from '@parley/core';
import { createHash } from 'node:crypto';
import type { OperationContext } from '../api/operation';
import type { CommandMeta, ConversationCommand } from '@parley/domain';
import { decide, seenCommand } from '@parley/domain';
import type { ConversationEvent } from '@parley/domain';
import type { ConversationState } from '@parley/domain';
import { ConversationSignals } from '../repository/conversation-signals';
import { ConversationRepository, type LoadedConversation } from '../repository/conversation.repository';
import { TurnScheduler } from './turn-scheduler';

/**
 * Builds the command from its metadata and the state it will be decided on (the conversation's
 * model, for one, is in that state); called again on every retry after a conflict.
 */
export type CommandBuilder = (meta: CommandMeta, state: ConversationState) => ConversationCommand;

export interface Executed {
  state: ConversationState;
  revision: bigint;
  position: string;
  events: ConversationEvent[];
  /** The idempotency key was seen before with the same body: nothing was appended. */
  replayed: boolean;
}

const MAX_CONFLICT_RETRIES = 5;
/**
 * Kill and terminate must win over a running turn however often it appends: they retry every
 * conflict (after a short random wait, so they do not retry in step with the turn) for this long.
 */
const PREVAILING = new Set<ConversationCommand['type']>([
  'KillConversation',
  'TerminateConversation',
  'EraseConversation',
]);
const PREVAIL_FOR_MS = 30_000;

/**
 * What every conversation command does: load, check the caller and the idempotency key, decide,
 * append with the expected revision (re-deciding when another writer won), then schedule.
 */
@Injectable()
export class CommandRunner {
  private readonly logger = new Logger('CommandRunner');

  constructor(
    @Inject(ConversationRepository) private readonly repository: ConversationRepository,
    @Inject(TurnScheduler) private readonly scheduler: TurnScheduler,
    @Inject(ConversationSignals) private readonly signals: ConversationSignals,
  ) {}

  async execute(
    conversationId: string,
    ctx: OperationContext,
    body: { type: ConversationCommand['type'] } & Record<string, unknown>,
    build: CommandBuilder,
  ): Promise<Executed> {
    return withSpan('parley.command', { 'parley.command': body.type, 'parley.conversation_id': conversationId }, () =>
      this.run(conversationId, ctx, body, build),
    );
  }

  /**
   * Whose conversation it is: the subject its running turns count against, whoever sends the
   * command (the worker gives the slot back under the same one). Null when it does not exist.
   */
  async ownerOf(conversationId: string): Promise<string | null> {
    const { state } = await this.repository.loadForWrite(conversationId);
    return state.status === 'none' ? null : state.owner;
  }

  private async run(
    conversationId: string,
    ctx: OperationContext,
    body: { type: ConversationCommand['type'] } & Record<string, unknown>,
    build: CommandBuilder,
  ): Promise<Executed> {
    requireRoles(ctx.caller, ['client', 'admin']);
    const commandHash = ctx.idempotencyKey ? hashOf(body) : undefined;
    const giveUpAt = PREVAILING.has(body.type) ? Date.now() + PREVAIL_FOR_MS : 0;
    // The first attempt decides on the state this process folded last, without a read; a
    // refusal, a replay or a conflict on it is checked again on a fresh load before it counts.
    for (let attempt = 1; ; attempt++) {
      const loaded =
        attempt === 1
          ? await this.repository.loadForWrite(conversationId)
          : { ...(await this.repository.load(conversationId)), fresh: true };
      try {
        const executed = await this.attempt(conversationId, loaded, ctx, commandHash, build);
        if (executed) return executed;
      } catch (err) {
        if (!(err instanceof WrongExpectedVersion)) throw err;
        if (attempt >= MAX_CONFLICT_RETRIES && Date.now() >= giveUpAt) throw err;
        if (attempt >= MAX_CONFLICT_RETRIES) await new Promise((r) => setTimeout(r, Math.random() * 20));
      }
    }
  }

  private async attempt(
    conversationId: string,
    loaded: LoadedConversation & { fresh: boolean },
    ctx: OperationContext,
    commandHash: string | undefined,
    build: CommandBuilder,
  ): Promise<Executed | null> {
    const caller = ctx.caller;
    const { state } = loaded;
    if (state.status !== 'none') {
      // The owner never changes, so a kept state answers this as well as a fresh one.
      assertCanCommand(caller, state.owner);
      const seen = ctx.idempotencyKey ? seenCommand(state, ctx.idempotencyKey) : undefined;
      if (seen !== undefined) {
        if (!loaded.fresh) return null; // a replay is answered from a fresh load only
        if (seen !== commandHash) {
          throw new DomainError(
            'IDEMPOTENCY_KEY_REUSED',
            'This Idempotency-Key was already used with a different request.',
            {
              idempotencyKey: ctx.idempotencyKey,
            },
          );
        }
        const first = await this.repository.atCommand(conversationId, ctx.idempotencyKey!);
        return { ...first, events: [], replayed: true };
      }
    }
    const meta: CommandMeta = { now: new Date().toISOString(), actor: caller.subject, commandId: ctx.idempotencyKey };
    let events: ConversationEvent[];
    try {
      events = decide(build(meta, state), state);
    } catch (err) {
      // A refusal on a kept state counts only once a fresh load confirms it.
      if (err instanceof DomainError && !loaded.fresh) return null;
      throw err;
    }
    // Nothing to record (erasing an erased conversation): answered from the fresh state as it is.
    if (events.length === 0) {
      if (!loaded.fresh) return null;
      const head = await this.repository.atHead(conversationId);
      return { ...head, events, replayed: false };
    }
    const appended = await this.repository.append(conversationId, loaded, events, {
      occurredAt: meta.now,
      actor: caller.subject,
      commandId: ctx.idempotencyKey,
      commandHash,
      correlationId: ctx.correlationId,
    });
    // The events are recorded: the command has happened whatever the queue says. A job it could
    // not store (Redis failed) is stored by the TurnDispatcher once Redis answers; a turn started
    // in this process runs anyway.
    await this.scheduler
      .afterAppend(conversationId, events, appended.revision)
      .catch((err: unknown) =>
        this.logger.warn(
          `jobs of ${conversationId} at revision ${appended.revision} not stored now (${(err as Error).message}); the turn dispatcher stores them`,
        ),
      );
    if (events.some((e) => e.type === 'ConversationKilled' || e.type === 'ConversationPaused'))
      this.signals.abort(conversationId);
    return { ...appended, events, replayed: false };
  }
}

function hashOf(body: unknown): string {
  return createHash('sha256').update(JSON.stringify(body)).digest('hex');
}
