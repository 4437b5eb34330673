import type { StreamMetadata as KurrentStreamMetadata } from '@kurrent/kurrentdb-client';
import type { StreamMetadata } from '../event-store.port';

const SYSTEM_KEYS = new Set(['maxAge', 'maxCount', 'truncateBefore', 'cacheControl', 'acl']);

/** Our stream metadata as KurrentDB's: system fields by name, custom keys alongside them. */
export function toKurrentMetadata(metadata: StreamMetadata): KurrentStreamMetadata {
  return {
    ...(metadata.custom ?? {}),
    ...(metadata.maxCount !== undefined ? { maxCount: metadata.maxCount } : {}),
    ...(metadata.maxAgeSeconds !== undefined ? { maxAge: metadata.maxAgeSeconds } : {}),
    ...(metadata.truncateBefore !== undefined ? { truncateBefore: Number(metadata.truncateBefore) } : {}),
  };
}

export function fromKurrentMetadata(metadata: KurrentStreamMetadata): StreamMetadata | null {
  const result: StreamMetadata = {};
  if (typeof metadata.maxCount === 'number') result.maxCount = metadata.maxCount;
  if (typeof metadata.maxAge === 'number') result.maxAgeSeconds = metadata.maxAge;
  if (typeof metadata.truncateBefore === 'number') result.truncateBefore = BigInt(metadata.truncateBefore);
  const custom = Object.fromEntries(Object.entries(metadata).filter(([key]) => !SYSTEM_KEYS.has(key)));
  if (Object.keys(custom).length > 0) result.custom = custom;
  return Object.keys(result).length > 0 ? result : null;
}
