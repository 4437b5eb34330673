import { Inject, Injectable } from '@nestjs/common';
import { CONFIG, type Config } from '@parley/config';
import { currentTraceId, traceCarrier } from '@parley/observability';
import { JOB_QUEUE, type JobQueue } from '@parley/platform';
import type { ConversationEvent } from '@parley/domain';
import { TIMER_QUEUE, TURN_QUEUE, turnJobId, type TimerJob, type TurnJob } from '../turn-jobs';

/**
 * The durable reactions to appended events: a started or resumed turn gets a turn job; a
 * question gets its expiry timer, a call awaiting approval its approval timer, a remote tool call its deadline timer. The turn's stuck watchdog is stored by the run that works on
 * it (`watchdog`). Job ids make re-scheduling harmless.
 */
@Injectable()
export class TurnScheduler {
  constructor(
    @Inject(JOB_QUEUE) private readonly jobs: JobQueue,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  async afterAppend(conversationId: string, events: readonly ConversationEvent[], lastRevision: bigint): Promise<void> {
    const first = lastRevision - BigInt(events.length - 1);
    // A worker in this process starts a turn at once; the queue's copy is the fallback.
    const jobs = events.map((event, i) => this.schedule(conversationId, event, first + BigInt(i), true));
    // Sent together: on one Redis connection they travel as one pipeline.
    await Promise.all(jobs);
  }

  /**
   * Stores the job of a turn started or resumed at `revision`, or the expiry timer of a question
   * asked there, again (TurnDispatcher): a job that exists is left as it is, one that was lost is
   * stored anew, for any worker to fetch.
   */
  async reschedule(conversationId: string, event: ConversationEvent, revision: bigint): Promise<void> {
    await this.schedule(conversationId, event, revision, false);
  }

  private async schedule(
    conversationId: string,
    event: ConversationEvent,
    at: bigint,
    preferLocal: boolean,
  ): Promise<void> {
    const revision = String(at);
    if (event.type === 'TurnStarted' || event.type === 'TurnResumed') {
      const turnNo = event.data.turnNo;
      await this.jobs.enqueue<TurnJob>(
        TURN_QUEUE,
        turnJobId(conversationId, revision),
        { conversationId, turnNo, revision, trace: traceCarrier(), traceId: currentTraceId() },
        { preferLocal },
      );
    }
    if (event.type === 'QuestionAsked') {
      const delayMs = Math.max(0, Date.parse(event.data.expiresAt) - Date.now());
      await this.jobs.enqueue<TimerJob>(
        TIMER_QUEUE,
        `expire:${conversationId}:${event.data.toolCallId}`,
        { kind: 'question-expiry', conversationId, toolCallId: event.data.toolCallId },
        { delayMs },
      );
    }
    if (event.type === 'ToolCallApprovalRequested' && event.data.expiresAt) {
      const delayMs = Math.max(0, Date.parse(event.data.expiresAt) - Date.now());
      await this.jobs.enqueue<TimerJob>(
        TIMER_QUEUE,
        `approval:${conversationId}:${event.data.toolCallId}`,
        { kind: 'approval-expiry', conversationId, toolCallId: event.data.toolCallId },
        { delayMs },
      );
    }
    if (event.type === 'RemoteToolInvoked') {
      const delayMs = Math.max(0, Date.parse(event.data.deadline) - Date.now());
      await this.jobs.enqueue<TimerJob>(
        TIMER_QUEUE,
        `remote:${conversationId}:${event.data.toolCallId}`,
        { kind: 'remote-deadline', conversationId, toolCallId: event.data.toolCallId },
        { delayMs },
      );
    }
  }

  /**
   * Looks at a remote call's deadline again after `delayMs`: its conversation was paused when the
   * deadline came, and the call must still time out once it is resumed.
   */
  async remoteDeadlineAgain(conversationId: string, toolCallId: string, delayMs: number): Promise<void> {
    await this.jobs.enqueue<TimerJob>(
      TIMER_QUEUE,
      `remote:${conversationId}:${toolCallId}:${Date.now()}`,
      { kind: 'remote-deadline', conversationId, toolCallId },
      { delayMs },
    );
  }

  /** Looks at a running turn again after STUCK_AFTER_MS; `revision` is its TurnStarted/TurnResumed's. */
  async watchdog(conversationId: string, turnNo: number, revision: string): Promise<void> {
    await this.jobs.enqueue<TimerJob>(
      TIMER_QUEUE,
      `watchdog:${conversationId}:${revision}`,
      { kind: 'watchdog', conversationId, turnNo, revision },
      { delayMs: this.config.turn.stuckAfterMs },
    );
  }
}
