import { Inject, Injectable, type OnModuleDestroy, Optional } from '@nestjs/common';
import { CONFIG, type Config } from '@parley/config';
import { REDIS, type Redis } from '@parley/platform';
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Appended } from './conversation.repository';

/** What this process just appended to a conversation (the event types), and the state it folded to. */
export interface AppendedSignal extends Appended {
  types: readonly string[];
}

/**
 * Notifications about conversations: a stream was appended to in this process (wakes waiters),
 * a running turn must stop now (kill), and, across processes through Redis pub/sub, a turn run
 * by another process than the one that took its command may have ended or paused (`announce`),
 * so a command waiting there reads the stream at once instead of at its next poll. Anything
 * else other processes do is noticed through the store. And which conversations have a turn
 * running in this process now (`runningHere`): a command waiting on one of those is woken by the
 * run's own appends, and by the run's end, and need not poll the store.
 */
@Injectable()
export class ConversationSignals implements OnModuleDestroy {
  private readonly emitter = new EventEmitter().setMaxListeners(0);
  /** This process, so it skips its own announcements (its waiters heard the append itself). */
  private readonly origin = randomUUID();
  private readonly channel: string;
  /** The connection announcements arrive on, opened when the first waiter listens for them. */
  private subscriber: Redis | null = null;
  /** Conversations with a turn running in this process, and how many runs (an entry per running turn). */
  private readonly runs = new Map<string, number>();

  constructor(
    @Optional() @Inject(REDIS) private readonly redis: Redis | null = null,
    @Optional() @Inject(CONFIG) config?: Config,
  ) {
    this.channel = `${config?.prefix ?? 'parley'}:turn-announcements`;
  }

  appended(conversationId: string, signal: AppendedSignal): void {
    this.emitter.emit(`appended:${conversationId}`, signal);
  }

  onAppended(conversationId: string, listener: (signal: AppendedSignal) => void): () => void {
    this.emitter.on(`appended:${conversationId}`, listener);
    return () => this.emitter.off(`appended:${conversationId}`, listener);
  }

  abort(conversationId: string): void {
    this.emitter.emit(`abort:${conversationId}`);
  }

  onAbort(conversationId: string, listener: () => void): () => void {
    this.emitter.on(`abort:${conversationId}`, listener);
    return () => this.emitter.off(`abort:${conversationId}`, listener);
  }

  /**
   * Marks a turn of `conversationId` as running in this process until the returned function is
   * called (once, when the run returns or fails); that call tells this process's listeners
   * (`onRanHere`), whose waiter reads the stream then if the turn has not ended.
   */
  runningHere(conversationId: string): () => void {
    this.runs.set(conversationId, (this.runs.get(conversationId) ?? 0) + 1);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      const left = (this.runs.get(conversationId) ?? 1) - 1;
      if (left > 0) this.runs.set(conversationId, left);
      else this.runs.delete(conversationId);
      this.emitter.emit(`ran:${conversationId}`);
    };
  }

  /** Whether a turn of `conversationId` runs in this process now. */
  isRunningHere(conversationId: string): boolean {
    return this.runs.has(conversationId);
  }

  /** `listener` runs when a run of a turn of `conversationId` in this process has returned or failed. */
  onRanHere(conversationId: string, listener: () => void): () => void {
    this.emitter.on(`ran:${conversationId}`, listener);
    return () => this.emitter.off(`ran:${conversationId}`, listener);
  }

  /** How many conversations have a turn running in this process (bounded by the workers' concurrency). */
  get runningCount(): number {
    return this.runs.size;
  }

  /** Tells the other processes that a turn of `conversationId` ran here and may have ended or paused. */
  async announce(conversationId: string): Promise<void> {
    await this.redis?.publish(this.channel, `${this.origin} ${conversationId}`);
  }

  /** `listener` runs when another process announces a turn of `conversationId` (see `announce`). */
  onAnnounced(conversationId: string, listener: () => void): () => void {
    this.listen();
    this.emitter.on(`announced:${conversationId}`, listener);
    return () => this.emitter.off(`announced:${conversationId}`, listener);
  }

  async onModuleDestroy(): Promise<void> {
    const subscriber = this.subscriber;
    this.subscriber = null;
    await subscriber?.quit().catch(() => subscriber.disconnect());
  }

  private listen(): void {
    if (!this.redis || this.subscriber) return;
    // A subscribed connection takes no other commands: this one is used for nothing else. Its
    // SUBSCRIBE waits for Redis however long it is down (the shared connection fails commands
    // instead), and ioredis subscribes again after a reconnect; meanwhile waiters fall back to
    // their polls.
    const subscriber = (this.subscriber = this.redis.duplicate({
      enableOfflineQueue: true,
      maxRetriesPerRequest: null,
    }));
    subscriber.on('error', () => undefined);
    subscriber.on('message', (_channel: string, message: string) => {
      const [origin, conversationId] = message.split(' ');
      if (origin !== this.origin) this.emitter.emit(`announced:${conversationId}`);
    });
    subscriber.subscribe(this.channel).catch(() => undefined);
  }
}
