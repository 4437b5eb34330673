import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { ConversationRepository } from '@parley/conversation';

/** Often enough that a kill written by another process stops a turn within a second. */
export const WATCH_MS = 250;

type OnRevision = (revision: bigint | null) => void;

/**
 * Tells the turns this process runs the current revision of their conversations, so a turn
 * notices a kill or pause written by another process. One query per tick for all running
 * turns, however many there are; no timer while none runs.
 */
@Injectable()
export class RunningTurnsWatch implements OnModuleDestroy {
  private readonly logger = new Logger('RunningTurnsWatch');
  private readonly watchers = new Map<string, Set<OnRevision>>();
  private timer: NodeJS.Timeout | null = null;
  private polling = false;

  constructor(@Inject(ConversationRepository) private readonly repository: ConversationRepository) {}

  /** Calls `onRevision` every tick while the returned function has not been called. */
  watch(conversationId: string, onRevision: OnRevision): () => void {
    const set = this.watchers.get(conversationId) ?? new Set<OnRevision>();
    set.add(onRevision);
    this.watchers.set(conversationId, set);
    this.timer ??= setInterval(() => void this.poll(), WATCH_MS).unref();
    return () => {
      set.delete(onRevision);
      if (set.size === 0) this.watchers.delete(conversationId);
      if (this.watchers.size === 0) this.stop();
    };
  }

  onModuleDestroy(): void {
    this.stop();
  }

  private stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async poll(): Promise<void> {
    if (this.polling || this.watchers.size === 0) return;
    this.polling = true;
    try {
      const revisions = await this.repository.currentRevisions([...this.watchers.keys()]);
      for (const [id, set] of this.watchers) for (const onRevision of set) onRevision(revisions.get(id) ?? null);
    } catch (err) {
      this.logger.warn(`could not read the running conversations' revisions: ${(err as Error).message}`);
    } finally {
      this.polling = false;
    }
  }
}
