import { DomainError } from '@parley/core';
import { streamIdOf } from '@parley/domain';
import type { EventStore } from '@parley/event-store';

export interface StreamHubOptions {
  store: EventStore;
  pollMs: number;
  maxPerSubject: number;
  maxTotal: number;
}

/** What the hub knows of one conversation with open streams: its newest revision and who waits for more. */
interface Watched {
  streams: number;
  revision: bigint;
  waiters: Set<() => void>;
}

/** One open stream's seat: `waitBeyond` sleeps until its conversation passes a revision. */
export interface StreamSeat {
  waitBeyond(revision: bigint, signal: AbortSignal): Promise<void>;
  release(): void;
}

const retryAfterSeconds = 5;

/**
 * The SSE streams of this process: caps them per subject and in all, and wakes a stream only
 * when its own conversation changed. One loop serves every stream: it sleeps until an append of
 * this process (or `pollMs` for the others'), asks the store for the newest revision of every
 * watched conversation in one query, and wakes the streams of those that moved. A conversation
 * leaves the map with its last stream.
 */
export class StreamHub {
  private readonly watched = new Map<string, Watched>();
  private readonly perSubject = new Map<string, number>();
  private total = 0;
  private loop: AbortController | null = null;

  constructor(private readonly options: StreamHubOptions) {}

  /** Open streams: all of them, or those of one subject. */
  count(subject?: string): number {
    return subject === undefined ? this.total : (this.perSubject.get(subject) ?? 0);
  }

  /** Conversations the loop watches. */
  get conversations(): number {
    return this.watched.size;
  }

  /** Takes a seat for `subject` on `conversationId`, or refuses with RATE_LIMITED when a cap is reached. */
  open(subject: string, conversationId: string): StreamSeat {
    const { maxPerSubject, maxTotal } = this.options;
    if (this.count(subject) >= maxPerSubject)
      throw new DomainError('RATE_LIMITED', `At most ${maxPerSubject} open streams per caller; close one first.`, {
        limit: maxPerSubject,
        retryAfterSeconds,
      });
    if (this.total >= maxTotal)
      throw new DomainError('RATE_LIMITED', 'This instance serves as many streams as it may; try again shortly.', {
        limit: maxTotal,
        retryAfterSeconds,
      });
    this.total += 1;
    this.perSubject.set(subject, this.count(subject) + 1);
    let watched = this.watched.get(conversationId);
    if (!watched) this.watched.set(conversationId, (watched = { streams: 0, revision: -1n, waiters: new Set() }));
    watched.streams += 1;
    this.start();
    let released = false;
    const seat = watched;
    return {
      waitBeyond: (revision, signal) => this.waitBeyond(seat, revision, signal),
      release: () => {
        if (released) return;
        released = true;
        this.total -= 1;
        const left = this.count(subject) - 1;
        if (left === 0) this.perSubject.delete(subject);
        else this.perSubject.set(subject, left);
        seat.streams -= 1;
        if (seat.streams === 0) this.watched.delete(conversationId);
        if (this.watched.size === 0) this.stop();
      },
    };
  }

  /** Stops the loop; open streams end through their own signals. */
  close(): void {
    this.stop();
  }

  private waitBeyond(watched: Watched, revision: bigint, signal: AbortSignal): Promise<void> {
    if (watched.revision > revision || signal.aborted) return Promise.resolve();
    // The stream has read this far, so the store holds it: the loop need not wake it for it.
    watched.revision = revision;
    return new Promise((resolve) => {
      const done = () => {
        watched.waiters.delete(done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      watched.waiters.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  private start(): void {
    if (this.loop) return;
    const loop = (this.loop = new AbortController());
    void this.run(loop.signal);
  }

  private stop(): void {
    this.loop?.abort();
    this.loop = null;
  }

  private async run(signal: AbortSignal): Promise<void> {
    const { store, pollMs } = this.options;
    let mark = store.appendMark();
    while (!signal.aborted) {
      await store.waitForAppend(pollMs, signal, mark);
      if (signal.aborted) return;
      // Taken before the read: an append while it runs ends the next wait at once.
      mark = store.appendMark();
      const ids = [...this.watched.keys()];
      // A store that cannot answer now is asked again at the next poll; the streams wait.
      const revisions = await store.streamRevisions(ids.map(streamIdOf)).catch(() => null);
      if (!revisions) continue;
      for (const id of ids) {
        const watched = this.watched.get(id);
        const revision = revisions.get(streamIdOf(id));
        if (!watched || revision === undefined || revision <= watched.revision) continue;
        watched.revision = revision;
        for (const wake of [...watched.waiters]) wake();
      }
    }
  }
}
