import { DomainError } from '@parley/core';

/** Where a page of conversations ended: the (created_at, id) of its last row, newest first. */
export interface Cursor {
  createdAt: string;
  id: string;
}

export const encodeCursor = (c: Cursor): string =>
  Buffer.from(JSON.stringify([c.createdAt, c.id])).toString('base64url');

export function decodeCursor(cursor: string): Cursor {
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (typeof createdAt === 'string' && !Number.isNaN(Date.parse(createdAt)) && typeof id === 'string')
      return { createdAt, id };
  } catch {
    // falls through to the validation error
  }
  throw DomainError.validation(
    [{ path: 'cursor', message: 'not a cursor this API returned' }],
    'The cursor is malformed.',
  );
}
