import { Inject, Injectable } from '@nestjs/common';
import { CONFIG, type Config } from '@parley/config';
import { ConversationRepository, type TimerJob, TurnScheduler } from '@parley/conversation';
import { WrongExpectedVersion } from '@parley/event-store';

/**
 * The delayed jobs of a conversation: a question left unanswered past its expiry fails the
 * turn (QUESTION_TIMEOUT); a running turn with no new event for STUCK_AFTER_MS is marked stuck.
 */
@Injectable()
export class TimerRunner {
  constructor(
    @Inject(ConversationRepository) private readonly repository: ConversationRepository,
    @Inject(TurnScheduler) private readonly scheduler: TurnScheduler,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  async run(job: TimerJob): Promise<void> {
    try {
      if (job.kind === 'question-expiry') await this.expireQuestion(job.conversationId, job.toolCallId);
      else await this.watch(job.conversationId, job.turnNo);
    } catch (err) {
      // Someone else wrote first: the conversation moved on, which is what the timer checks for.
      if (!(err instanceof WrongExpectedVersion)) throw err;
    }
  }

  private async expireQuestion(conversationId: string, toolCallId: string): Promise<void> {
    const loaded = await this.repository.load(conversationId);
    const { state } = loaded;
    if (state.status !== 'WA' || state.pendingQuestion?.toolCallId !== toolCallId) return;
    if (Date.parse(state.pendingQuestion.expiresAt) > Date.now()) return;
    await this.repository.append(
      conversationId,
      loaded,
      [
        {
          type: 'ConversationFailed',
          data: {
            turnNo: state.turn?.no ?? 0,
            code: 'QUESTION_TIMEOUT',
            message: 'The question was not answered in time.',
          },
        },
      ],
      { actor: 'timer' },
    );
  }

  private async watch(conversationId: string, turnNo: number): Promise<void> {
    const loaded = await this.repository.load(conversationId);
    const { state } = loaded;
    if (state.status !== 'RU' || state.turn?.no !== turnNo) return;
    const idleMs = Date.now() - Date.parse(state.updatedAt);
    if (idleMs < this.config.turn.stuckAfterMs) {
      await this.scheduler.watchdog(conversationId, turnNo, String(loaded.revision));
      return;
    }
    await this.repository.append(conversationId, loaded, [{ type: 'ConversationStuck', data: { turnNo, idleMs } }], {
      actor: 'watchdog',
    });
  }
}
