export const STATUS_NAMES: Record<string, string> = {
  NS: 'not started',
  RU: 'running',
  CO: 'completed',
  FA: 'failed',
  WA: 'waiting',
  PA: 'paused',
  ST: 'stuck',
  TE: 'terminated',
  KI: 'killed',
};

export const when = (iso: string) => new Date(iso).toLocaleString();
export const num = (n: number | null | undefined) => (n === null || n === undefined ? '—' : n.toLocaleString());
export const cost = (n: number | null | undefined) =>
  n === null || n === undefined ? '—' : `$${n.toFixed(n < 0.01 && n > 0 ? 6 : 4)}`;
export const ms = (n: number | null | undefined) => (n === null || n === undefined ? '—' : `${Math.round(n)} ms`);

/** An error for people: the code and the sentence Parley gave. */
export const describe = (err: unknown) =>
  err instanceof Error && 'code' in err ? `${String(err.code)}: ${err.message}` : String(err);
