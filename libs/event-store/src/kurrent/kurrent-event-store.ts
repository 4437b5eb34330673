import {
  BACKWARDS,
  END,
  FORWARDS,
  KurrentDBClient,
  NO_STREAM,
  START,
  jsonEvent,
  type JSONType,
} from '@kurrent/kurrentdb-client';
import { DuplicateEventIds, StreamDeleted, StreamNotFound, WrongExpectedVersion } from '../errors';
import type {
  AppendOptions,
  AppendResult,
  EventFilter,
  EventStore,
  EventToAppend,
  FeedPage,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  StreamMetadata,
  SubscribeOptions,
  SubscriptionItem,
  VerifyResult,
} from '../event-store.port';
import { canonicalEvent, chainHash, ChainVerifier, GENESIS_HASH, type ChainOptions } from '../hash-chain';
import { prepareEvents, type PreparedEvent } from '../prepare-events';
import { AppendNotifier } from '../subscription/append-notifier';
import {
  decodePosition,
  encodePosition,
  fromEsdbEvent,
  matches,
  toServerFilter,
  toStreamState,
  translateKurrentError,
  wrapMetadata,
} from './kurrent-mapping';
import { fromKurrentMetadata, toKurrentMetadata } from './kurrent-metadata';
import { readStreamHead } from './kurrent-stream-head';
import { subscribeKurrent } from './kurrent-subscription';

export interface KurrentEventStoreOptions {
  maxEventBytes: number;
  pollMs: number;
  /** EVENT_CHAIN_KEY: appends chain HMAC-SHA256 hashes and verify checks them (see ChainOptions). */
  chain?: ChainOptions;
}

const PINNED_RETRIES = 5;

/** The KurrentDB / EventStoreDB adapter over the official gRPC client. */
export class KurrentEventStore implements EventStore {
  /** KurrentDB holds no table of the app's: a write that must go with an append is made first. */
  readonly writesAlongside = false;
  private readonly notifier = new AppendNotifier();

  constructor(
    private readonly client: KurrentDBClient,
    private readonly options: KurrentEventStoreOptions,
  ) {}

  static connect(url: string, options: KurrentEventStoreOptions): KurrentEventStore {
    return new KurrentEventStore(KurrentDBClient.connectionString(url), options);
  }

  /**
   * The hash chain needs the stream's head, so `any` and `stream_exists` are pinned to the
   * revision just read and retried if another writer got in between.
   */
  async append(streamId: string, events: EventToAppend[], options: AppendOptions = {}): Promise<AppendResult> {
    if (options.alongside) throw new Error('KurrentDB cannot write a statement alongside an append (writesAlongside).');
    const expected = options.expected ?? 'any';
    const prepared = prepareEvents(streamId, events, this.options.maxEventBytes);
    for (let attempt = 0; ; attempt++) {
      const head = await readStreamHead(this.client, streamId);
      const pinned = expected === 'any' || expected === 'stream_exists';
      if (pinned) {
        const retry = await this.alreadyStored(streamId, prepared);
        if (retry) return retry;
      }
      if (expected === 'stream_exists' && head.revision === null) {
        throw new WrongExpectedVersion(streamId, expected, 'no_stream');
      }
      const state = pinned ? (head.revision ?? NO_STREAM) : toStreamState(expected);
      try {
        const result = await this.client.appendToStream(
          streamId,
          this.chain(streamId, prepared, head.last, head.hash),
          {
            streamState: state,
          },
        );
        this.notifier.notify();
        return {
          nextRevision: result.nextExpectedRevision,
          position: result.position ? encodePosition(result.position) : '',
        };
      } catch (err) {
        const translated = translateKurrentError(err, streamId, expected);
        if (pinned && translated instanceof WrongExpectedVersion && attempt < PINNED_RETRIES) continue;
        throw translated;
      }
    }
  }

  private chain(streamId: string, events: PreparedEvent[], last: bigint, prevHash: string) {
    let hash = prevHash;
    return events.map((e, i) => {
      const prev = hash;
      hash = chainHash(
        prev,
        canonicalEvent({ ...e, streamId, revision: last + 1n + BigInt(i) }),
        this.options.chain?.key ?? null,
      );
      const metadata = wrapMetadata(JSON.parse(e.metadataJson), {
        schemaVersion: e.schemaVersion,
        prevHash: prev,
        hash,
      });
      return jsonEvent({ id: e.eventId, type: e.type, data: JSON.parse(e.dataJson) as JSONType, metadata });
    });
  }

  /** An idempotent retry under `any`: the batch is already the run of events it would have made. */
  private async alreadyStored(streamId: string, events: PreparedEvent[]): Promise<AppendResult | null> {
    const recent = await this.readStream(streamId, { direction: BACKWARDS, maxCount: 100 }).catch(() => []);
    const found = recent.filter((e) => events.some((p) => p.eventId === e.eventId)).reverse();
    if (found.length === 0) return null;
    const sameRun = found.length === events.length && found.every((e, i) => e.eventId === events[i].eventId);
    if (!sameRun)
      throw new DuplicateEventIds(
        streamId,
        found.map((e) => e.eventId),
      );
    const last = found[found.length - 1];
    return { nextRevision: last.revision, position: last.position };
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const backwards = options.direction === 'backwards';
    const out: RecordedEvent[] = [];
    try {
      const read = this.client.readStream(streamId, {
        direction: backwards ? BACKWARDS : FORWARDS,
        fromRevision: options.fromRevision ?? (backwards ? END : START),
        ...(options.maxCount ? { maxCount: options.maxCount } : {}),
      });
      for await (const resolved of read) if (resolved.event) out.push(fromEsdbEvent(resolved.event));
    } catch (err) {
      throw translateKurrentError(err, streamId);
    }
    return out;
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    return (await this.readPage(options.fromPosition ?? null, options.filter, options.maxCount ?? null)).events;
  }

  /** `full` is judged on what the server returned, before the client-side half of the filter. */
  async readPage(after: string | null, filter: EventFilter | undefined, maxCount: number | null): Promise<FeedPage> {
    const limit = maxCount === null ? Number.MAX_SAFE_INTEGER : maxCount + (after ? 1 : 0);
    const read = this.client.readAll({
      direction: FORWARDS,
      fromPosition: after ? decodePosition(after) : START,
      maxCount: limit,
      filter: toServerFilter(filter),
    });
    const events: RecordedEvent[] = [];
    let served = 0;
    let lastServed: string | null = null;
    for await (const resolved of read) {
      if (!resolved.event) continue;
      const event = fromEsdbEvent(resolved.event, resolved.event.position);
      if (event.position === after) continue;
      served++;
      lastServed = event.position;
      if (matches(filter, event)) events.push(event);
    }
    const full = maxCount !== null && served >= maxCount;
    return { events, scannedTo: full ? lastServed : ((await this.headPosition()) ?? lastServed) };
  }

  appendMark(): number {
    return this.notifier.mark;
  }

  waitForAppend(timeoutMs: number, signal?: AbortSignal, mark?: number): Promise<void> {
    return this.notifier.wait(timeoutMs, signal, mark);
  }

  subscribeToAll(options: SubscribeOptions = {}): AsyncIterable<SubscriptionItem> {
    return subscribeKurrent(this.client, options);
  }

  async setStreamMetadata(streamId: string, metadata: StreamMetadata): Promise<void> {
    await this.client.setStreamMetadata(streamId, toKurrentMetadata(metadata)).catch((err: unknown) => {
      throw translateKurrentError(err, streamId);
    });
  }

  async getStreamMetadata(streamId: string): Promise<StreamMetadata | null> {
    const result = await this.client.getStreamMetadata(streamId).catch((err: unknown) => {
      throw translateKurrentError(err, streamId);
    });
    return result.metadata ? fromKurrentMetadata(result.metadata) : null;
  }

  async deleteStream(streamId: string): Promise<void> {
    await this.client.deleteStream(streamId).catch((err: unknown) => {
      throw translateKurrentError(err, streamId);
    });
  }

  async tombstoneStream(streamId: string): Promise<void> {
    await this.client.tombstoneStream(streamId).catch((err: unknown) => {
      throw translateKurrentError(err, streamId);
    });
  }

  /** Checks the visible events; a truncated stream's first visible event anchors the chain. */
  async verifyStream(streamId: string): Promise<VerifyResult> {
    const events = await this.readStream(streamId);
    const anchor = events[0] && events[0].revision > 0n ? events[0].prevHash : GENESIS_HASH;
    const verifier = new ChainVerifier(anchor, this.options.chain);
    for (const event of events) if (!verifier.check(event)) break;
    return verifier.result();
  }

  async headPosition(): Promise<string | null> {
    const read = this.client.readAll({
      direction: BACKWARDS,
      fromPosition: END,
      maxCount: 1,
      filter: toServerFilter(undefined),
    });
    for await (const resolved of read) if (resolved.event?.position) return encodePosition(resolved.event.position);
    return null;
  }

  /** KurrentDB has no batch read of stream heads: one backwards read of one event per stream. */
  async streamRevisions(streamIds: readonly string[]): Promise<Map<string, bigint>> {
    const heads = await Promise.all(
      streamIds.map(async (id) => {
        // Only a missing or deleted stream is left out; an unreachable server is an error, not "no streams".
        const [last] = await this.readStream(id, { direction: 'backwards', maxCount: 1 }).catch((err: unknown) => {
          if (err instanceof StreamNotFound || err instanceof StreamDeleted) return [];
          throw err;
        });
        return last ? ([id, last.revision] as const) : null;
      }),
    );
    return new Map(heads.filter((h) => h !== null));
  }

  async close(): Promise<void> {
    this.notifier.notify();
    await this.client.dispose();
  }
}
