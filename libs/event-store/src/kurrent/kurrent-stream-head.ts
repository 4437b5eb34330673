import { BACKWARDS, END, streamNameFilter, type KurrentDBClient } from '@kurrent/kurrentdb-client';
import { GENESIS_HASH } from '../hash-chain';
import { fromEsdbEvent, translateKurrentError } from './kurrent-mapping';

/** The newest stored event of a stream, which the next append's hash chain links to. */
export interface StreamHead {
  /** null: the stream does not exist (or was soft-deleted: revisions still continue after `last`). */
  revision: bigint | null;
  /** The revision of the newest event ever stored, deleted ones included; -1n when none. */
  last: bigint;
  hash: string;
}

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export async function readStreamHead(client: KurrentDBClient, streamId: string): Promise<StreamHead> {
  try {
    for await (const resolved of client.readStream(streamId, {
      direction: BACKWARDS,
      fromRevision: END,
      maxCount: 1,
    })) {
      if (!resolved.event) continue;
      const event = fromEsdbEvent(resolved.event);
      return { revision: event.revision, last: event.revision, hash: event.hash };
    }
  } catch (err) {
    const translated = translateKurrentError(err, streamId);
    if ((translated as { name?: string }).name !== 'StreamNotFound') throw translated;
  }
  // A soft-deleted stream reads as not found, yet KurrentDB continues its revisions after the
  // deleted events: find the newest one in $all so the chain and revisions stay right.
  const filter = streamNameFilter({ regex: `^${escapeRegex(streamId)}$` });
  for await (const resolved of client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1, filter })) {
    if (!resolved.event) continue;
    const event = fromEsdbEvent(resolved.event);
    return { revision: null, last: event.revision, hash: event.hash };
  }
  return { revision: null, last: -1n, hash: GENESIS_HASH };
}
