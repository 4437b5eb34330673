/** The exhaustiveness check of a switch over a union: the compiler proves it unreachable. */
export function assertNever(value: never, what = 'value'): never {
  throw new Error(`Unhandled ${what}: ${JSON.stringify(value)}`);
}

/** A copy of `value` without its undefined properties (JSON and hashes see no difference). */
export function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** Costs are summed as floats and kept to nine decimals, so sums do not drift in their last digits. */
export const roundCost = (amount: number): number => Math.round(amount * 1e9) / 1e9;
