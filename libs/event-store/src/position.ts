import { DomainError } from '@parley/core';

/** A PostgreSQL position: the writing transaction's xid8 and the identity value. */
export interface PgPosition {
  kind: 'pg';
  tx: bigint;
  pos: bigint;
}

/** A KurrentDB position: the commit and prepare offsets of the transaction file. */
export interface EsdbPosition {
  kind: 'esdb';
  commit: bigint;
  prepare: bigint;
}

export type ParsedPosition = PgPosition | EsdbPosition;

const PATTERN = /^(pg|esdb):(\d+):(\d+)$/;

export function parsePosition(position: string): ParsedPosition {
  const match = PATTERN.exec(position);
  if (!match) {
    throw DomainError.validation(
      [{ path: 'position', message: `expected pg:<xid8>:<position> or esdb:<commit>:<prepare>, got '${position}'` }],
      `'${position}' is not an event-store position.`,
    );
  }
  const [, kind, a, b] = match;
  return kind === 'pg'
    ? { kind: 'pg', tx: BigInt(a), pos: BigInt(b) }
    : { kind: 'esdb', commit: BigInt(a), prepare: BigInt(b) };
}

export const pgPosition = (tx: bigint | string, pos: bigint | string): string => `pg:${tx}:${pos}`;
export const esdbPosition = (commit: bigint, prepare: bigint): string => `esdb:${commit}:${prepare}`;

const sign = (a: bigint, b: bigint): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Orders two positions of the same store: negative, zero or positive. PostgreSQL positions
 * order by (transaction, identity) — the ordering rule — never by the identity alone.
 */
export function comparePositions(a: string, b: string): number {
  const x = parsePosition(a);
  const y = parsePosition(b);
  if (x.kind === 'pg' && y.kind === 'pg') return sign(x.tx, y.tx) || sign(x.pos, y.pos);
  if (x.kind === 'esdb' && y.kind === 'esdb') return sign(x.commit, y.commit) || sign(x.prepare, y.prepare);
  throw DomainError.validation(
    [{ path: 'position', message: `cannot compare a ${x.kind} position with a ${y.kind} position` }],
    `Positions '${a}' and '${b}' come from different event stores.`,
  );
}

/** The earlier of two positions, null counting as "before everything". */
export function minPosition(a: string | null, b: string | null): string | null {
  if (a === null || b === null) return null;
  return comparePositions(a, b) <= 0 ? a : b;
}

/** The later of two positions, null counting as "before everything". */
export function maxPosition(a: string | null, b: string | null): string | null {
  if (a === null) return b;
  if (b === null) return a;
  return comparePositions(a, b) >= 0 ? a : b;
}
