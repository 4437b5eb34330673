import { createHash } from 'node:crypto';

/** JSON with object keys sorted and undefined members left out: equal values give equal text. */
export function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => stableJson(v ?? null)).join(',')}]`;
  if (value && typeof value === 'object') {
    const members = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

export const sha256Of = (value: unknown): string => createHash('sha256').update(stableJson(value)).digest('hex');
