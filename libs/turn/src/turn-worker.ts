import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { ConversationSignals, TIMER_QUEUE, TURN_QUEUE, type TimerJob, type TurnJob } from '@parley/conversation';
import { JOB_QUEUE, type JobQueue } from '@parley/platform';
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
      async (job, { local }) => {
        await withTraceCarrier(job.trace, () =>
          withSpan('parley.turn', { 'parley.conversation_id': job.conversationId, 'parley.turn': job.turnNo }, () =>
            runWithContext({ traceId: activeTraceId() ?? newTraceId() }, () => this.turns.run(job)),
          ),
        );
        // A job fetched from the queue may come from a command waiting in another process; one
        // started here was enqueued here, where the turn's appends wake the waiter themselves.
        if (!local) await this.signals.announce(job.conversationId).catch(() => undefined);
      },
      { concurrency: 64 },
    );
    await this.jobs.process<TimerJob>(
      TIMER_QUEUE,
      async (job, { local }) => {
        await this.timers.run(job);
        // A timer may end a turn (the stuck watchdog) that a command in another process waits on.
        if (!local) await this.signals.announce(job.conversationId).catch(() => undefined);
      },
      { concurrency: 8 },
    );
  }
}
