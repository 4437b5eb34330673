import { Inject, Injectable, Optional } from '@nestjs/common';
import { CONFIG, type Config } from '@parley/config';
import { ConversationRepository, type TimerJob, TurnScheduler } from '@parley/conversation';
import { decide, isRunningTurn, type ConversationState } from '@parley/domain';
import { WrongExpectedVersion } from '@parley/event-store';
import { TOOL_METRICS, type ToolMetrics } from '@parley/tools';
import { countRemoteOutcomes } from './remote-completions';

/** How often the deadline of a remote call whose conversation is paused is looked at again. */
const PAUSED_RECHECK_MS = 5_000;

const pausedWhileWaiting = (state: ConversationState, toolCallId: string): boolean =>
  state.status === 'PA' && state.turn?.toolCalls.some((t) => t.id === toolCallId && t.status === 'invoked') === true;

/**
 * The delayed jobs of a conversation, each a question for the decider: a question left
 * unanswered past its expiry fails the turn (ExpireQuestion); a call awaiting approval past its
 * expiry is rejected as timed out and the turn goes on (ExpireApproval); a remote tool call unanswered by
 * its deadline fails as TIMEOUT and the turn goes on (ExpireRemoteTool), or, its conversation
 * paused, is looked at again until it is resumed; a running turn with no new event
 * for STUCK_AFTER_MS is marked stuck (MarkStuck), and one that is still moving is looked at
 * again later.
 */
@Injectable()
export class TimerRunner {
  constructor(
    @Inject(ConversationRepository) private readonly repository: ConversationRepository,
    @Inject(TurnScheduler) private readonly scheduler: TurnScheduler,
    @Inject(CONFIG) private readonly config: Config,
    @Optional() @Inject(TOOL_METRICS) private readonly metrics: ToolMetrics | null = null,
  ) {}

  async run(job: TimerJob): Promise<void> {
    const loaded = await this.repository.load(job.conversationId);
    const meta = { now: new Date().toISOString(), actor: job.kind === 'watchdog' ? 'watchdog' : 'timer' };
    const events = decide(
      job.kind === 'question-expiry'
        ? { type: 'ExpireQuestion', data: { toolCallId: job.toolCallId }, meta }
        : job.kind === 'approval-expiry'
          ? { type: 'ExpireApproval', data: { toolCallId: job.toolCallId }, meta }
          : job.kind === 'remote-deadline'
            ? { type: 'ExpireRemoteTool', data: { toolCallId: job.toolCallId }, meta }
            : { type: 'MarkStuck', data: { turnNo: job.turnNo, stuckAfterMs: this.config.turn.stuckAfterMs }, meta },
      loaded.state,
    );
    if (events.length === 0) {
      const { state } = loaded;
      if (job.kind === 'watchdog' && isRunningTurn(state) && state.turn.no === job.turnNo)
        await this.scheduler.watchdog(job.conversationId, job.turnNo, String(loaded.revision));
      if (job.kind === 'remote-deadline' && pausedWhileWaiting(state, job.toolCallId))
        await this.scheduler.remoteDeadlineAgain(job.conversationId, job.toolCallId, PAUSED_RECHECK_MS);
      return;
    }
    try {
      const appended = await this.repository.append(job.conversationId, loaded, events, { actor: meta.actor });
      if (job.kind === 'remote-deadline') countRemoteOutcomes(this.metrics, events);
      // A remote call past its deadline resumes the turn: its job (the dispatcher stores it again if this fails).
      await this.scheduler.afterAppend(job.conversationId, events, appended.revision);
    } catch (err) {
      // Someone else wrote first: the conversation moved on, which is what the timer checks for.
      if (!(err instanceof WrongExpectedVersion)) throw err;
    }
  }
}
