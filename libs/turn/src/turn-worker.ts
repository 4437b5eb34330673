import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { ConversationSignals, TIMER_QUEUE, TURN_QUEUE, type TimerJob, type TurnJob } from '@parley/conversation';
import { JOB_QUEUE, type JobHandler, type JobQueue } from '@parley/platform';
import { activeTraceId, newTraceId, runWithContext, withSpan, withTraceCarrier } from '@parley/observability';
import { TimerRunner } from './timer-runner';
import { TurnRunner } from './turn-runner';

/** Consumes the turn and timer queues in this process (the worker app, or the all-in-one server). */
@Injectable()
export class TurnWorker implements OnApplicationBootstrap {
  constructor(
    @Inject(JOB_QUEUE) private readonly jobs: JobQueue,
    @Inject(TurnRunner) private readonly turns: TurnRunner,
    @Inject(TimerRunner) private readonly timers: TimerRunner,
    @Inject(ConversationSignals) private readonly signals: ConversationSignals,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.jobs.process<TurnJob>(
      TURN_QUEUE,
      this.announcing((job, { local, attempt, signal }) =>
        withTraceCarrier(job.trace, () =>
          withSpan('parley.turn', { 'parley.conversation_id': job.conversationId, 'parley.turn': job.turnNo }, () =>
            runWithContext({ traceId: activeTraceId() ?? job.traceId ?? newTraceId() }, () =>
              this.turns.run(job, local && attempt === 1, signal),
            ),
          ),
        ),
      ),
      { concurrency: 64 },
    );
    // A timer may end a turn too (the stuck watchdog).
    await this.jobs.process<TimerJob>(
      TIMER_QUEUE,
      this.announcing((job) => this.timers.run(job)),
      { concurrency: 8 },
    );
  }

  /**
   * Runs `run`, then announces the conversation when the job was fetched from the queue: its
   * command may wait in another process. One started here was enqueued here, where the turn's
   * appends wake the waiter themselves. While any run goes on, the conversation is marked as
   * running here (a command waiting in this process then does not poll the store: the run's
   * appends wake it), and the run's end, however it ends, wakes that command. A run that fails
   * is not announced (it is retried).
   */
  private announcing<T extends { conversationId: string }>(run: JobHandler<T>): JobHandler<T> {
    return async (job, context) => {
      const ran = this.signals.runningHere(job.conversationId);
      try {
        await run(job, context);
      } finally {
        ran();
      }
      if (!context.local) await this.signals.announce(job.conversationId).catch(() => undefined);
    };
  }
}
