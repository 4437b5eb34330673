import {
  Inject,
  Injectable,
  Logger,
  Optional,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { CONFIG, type Config } from '@parley/config';
import { ConversationRepository, toEnvelope, TurnScheduler } from '@parley/conversation';
import { CONVERSATION_CATEGORY, conversationIdOf, endsTurn, TURN_ENDING_EVENTS } from '@parley/domain';
import {
  EVENT_STORE,
  runSubscription,
  StreamDeleted,
  type EventStore,
  type RecordedEvent,
  type SubscriptionRunner,
} from '@parley/event-store';
import { PG_POOL, REDIS, type Redis } from '@parley/platform';
import { openConversationIds } from '@parley/read-models';
import type { Pool } from 'pg';

/**
 * How long after a wake-up the dispatcher reads: by then the command's own enqueue has long
 * happened, and most turns have ended, so a batch seldom holds a turn still to look at.
 */
export const DISPATCH_AFTER_MS = 1_000;

/** How often the dispatcher checks that Redis still holds what the queue stored there. */
const LOSS_CHECK_MS = 5_000;

/** Events that start a turn, ask a question or wait for a remote tool: the ones whose job or timer may need storing again. */
const STARTS = new Set(['TurnStarted', 'TurnResumed', 'QuestionAsked', 'RemoteToolInvoked']);
/** Events that wait with a timer (a question's expiry, a remote call's deadline). */
const WAITS = new Set(['QuestionAsked', 'RemoteToolInvoked']);
/** Events after which a question asked before them is no longer pending. */
const ENDS_QUESTION = new Set([
  'AnswersSubmitted',
  'TurnResumed',
  'ConversationFailed',
  'ConversationTerminated',
  'ConversationKilled',
]);

/** An approval request's timer (tool_approval_timeout_ms) and the events that decide the call. */
const APPROVAL = 'ToolCallApprovalRequested';
const DECIDES_APPROVAL = new Set(['ToolCallApproved', 'ToolCallRejected']);
/** Events after which no call of the turn awaits approval any more. */
const ENDS_APPROVALS = new Set(['TurnResumed', 'ConversationFailed', 'ConversationTerminated', 'ConversationKilled']);

const WATCHED = [...new Set([...STARTS, ...TURN_ENDING_EVENTS, ...ENDS_QUESTION, APPROVAL, ...DECIDES_APPROVAL])];

/**
 * The safety net of turn scheduling (the write path's dispatcher): a checkpointed subscription
 * over conversation events that stores again the job of every turn still running and the expiry
 * timer of every question still pending, in case the command's enqueue was lost — its process
 * died between the append and the enqueue, or Redis failed it. Job ids dedup, so a job that
 * exists is left alone; a lost one is stored for any worker to fetch. A batch that cannot reach
 * Redis is retried until it can. One active instance across processes (the subscription's lock).
 * A queue that lost everything it held is restored from the open conversations (restoreIfLost).
 */
@Injectable()
export class TurnDispatcher implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('TurnDispatcher');
  private runner: SubscriptionRunner | null = null;
  private lossCheck: NodeJS.Timeout | null = null;
  private restoring: Promise<boolean> | null = null;
  /** With the in-process queue: whether this process has restored what the last one held. */
  private restored = false;

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(ConversationRepository) private readonly repository: ConversationRepository,
    @Inject(TurnScheduler) private readonly scheduler: TurnScheduler,
    @Inject(CONFIG) private readonly config: Config,
    @Optional() @Inject(REDIS) private readonly redis?: Redis | null,
  ) {}

  onApplicationBootstrap(): void {
    this.runner = runSubscription({
      pool: this.pool,
      feed: this.store,
      subscriptionId: `turn-dispatcher:${this.config.prefix}`,
      // Only what starts or ends a turn or a question: a small part of a conversation's events.
      filter: { categories: [CONVERSATION_CATEGORY], eventTypes: WATCHED },
      batchSize: 500,
      pollMs: this.config.eventStore.pollMs,
      coalesceMs: DISPATCH_AFTER_MS,
      retryMs: 1_000,
      // Outside the checkpoint's transaction: the dispatch reads streams through the pool.
      react: (events) => this.dispatch(events),
      onError: (err) => this.logger.warn(`turn jobs not checked; retrying: ${String(err)}`),
    });
    this.watchForLoss();
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.lossCheck) clearInterval(this.lossCheck);
    this.lossCheck = null;
    await this.restoring;
    await this.runner?.stop();
    this.runner = null;
  }

  /** Looks for a lost queue now, then every LOSS_CHECK_MS (the in-process queue: until it has restored once). */
  private watchForLoss(): void {
    void this.restoreIfLost();
    this.lossCheck = setInterval(() => void this.restoreIfLost(), LOSS_CHECK_MS);
    this.lossCheck.unref();
  }

  /**
   * Stores again the job of every running turn and the timer of every pending question when the
   * queue has lost what it held: the in-process queue keeps nothing across a restart, and a Redis
   * restarted without its data (or flushed) no longer holds the marker the dispatcher left there
   * after its last look. Resolves whether it restored; a failure is logged and tried again at the
   * next check.
   */
  restoreIfLost(): Promise<boolean> {
    this.restoring ??= this.restoreNow().finally(() => (this.restoring = null));
    return this.restoring;
  }

  private async restoreNow(): Promise<boolean> {
    const marker = `${this.config.prefix}:turn-dispatcher:marker`;
    try {
      if (this.redis ? (await this.redis.exists(marker)) === 1 : this.restored) return false;
      const open = await openConversationIds(this.pool);
      for (const conversationId of open) await this.rescheduleOpen(conversationId, 0n);
      if (this.redis) await this.redis.set(marker, new Date().toISOString());
      this.restored = true;
      if (open.length > 0) this.logger.log(`the queue held nothing: looked again at ${open.length} open conversations`);
      return true;
    } catch (err) {
      this.logger.warn(`could not check the queue for lost jobs; trying again: ${String(err)}`);
      return false;
    }
  }

  private async dispatch(events: RecordedEvent[]): Promise<void> {
    for (const [conversationId, started] of stillOpen(events)) {
      // What the batch left open, checked against everything the stream holds from it on: a turn
      // ended, paused or resumed since (a resumed one has a job of its own), or a question answered
      // since, needs nothing.
      const from = started.reduce((min, e) => (e.revision < min ? e.revision : min), started[0].revision);
      await this.rescheduleOpen(conversationId, from);
    }
  }

  /** Stores the job or timer of each turn start and question from `from` on that no later event ended. */
  private async rescheduleOpen(conversationId: string, from: bigint): Promise<void> {
    const since = await this.repository.eventsFrom(conversationId, from).catch((err: unknown) => {
      if (err instanceof StreamDeleted) return [];
      throw err;
    });
    for (const event of stillOpen(since).get(conversationId) ?? []) {
      const envelope = toEnvelope(event);
      if (envelope) await this.scheduler.reschedule(conversationId, envelope, event.revision);
    }
  }
}

/**
 * Per conversation, the turn starts and questions among `events` that no later one of them has
 * ended: the ones whose job or timer may still be needed. The newest turn start only, since a
 * turn resumed later has a job of its own.
 */
export function stillOpen(events: RecordedEvent[]): Map<string, RecordedEvent[]> {
  const open = new Map<
    string,
    { turn?: RecordedEvent; question?: RecordedEvent; approvals?: Map<string, RecordedEvent> }
  >();
  for (const event of events) {
    const id = conversationIdOf(event.streamId);
    const o = open.get(id) ?? {};
    if (endsTurn(event.type)) o.turn = undefined;
    if (ENDS_QUESTION.has(event.type)) o.question = undefined;
    // A resumed turn has nothing left to approve; an ended one never will.
    if (ENDS_APPROVALS.has(event.type)) o.approvals = undefined;
    const { toolCallId = '', expiresAt } = (event.data ?? {}) as { toolCallId?: string; expiresAt?: string };
    if (event.type === APPROVAL) {
      if (expiresAt) (o.approvals ??= new Map()).set(toolCallId, event);
    } else if (DECIDES_APPROVAL.has(event.type)) o.approvals?.delete(toolCallId);
    else if (WAITS.has(event.type)) o.question = event;
    else if (STARTS.has(event.type)) o.turn = event;
    open.set(id, o);
  }
  const due = new Map<string, RecordedEvent[]>();
  for (const [id, o] of open) {
    const started = [o.turn, o.question, ...(o.approvals?.values() ?? [])].filter(
      (e): e is RecordedEvent => e !== undefined,
    );
    if (started.length > 0) due.set(id, started);
  }
  return due;
}
