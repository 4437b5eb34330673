import { DomainError } from '@parley/core';
import { HttpErrorFilter } from './http-error.filter';

describe('HttpErrorFilter', () => {
  const filter = new HttpErrorFilter();
  const answer = (err: DomainError) => {
    const { status, body, headers } = filter.toResponse(err);
    return { status, code: body.error.code, retryAfter: headers['retry-after'] };
  };

  it('tells every 429 and 503 when to come back: the error’s own delay, else a default', () => {
    expect(answer(new DomainError('SERVICE_UNAVAILABLE', 'The MCP server is down.'))).toEqual({
      status: 503,
      code: 'SERVICE_UNAVAILABLE',
      retryAfter: '5',
    });
    expect(answer(new DomainError('SERVICE_UNAVAILABLE', 'Redis is down.', { retryAfterSeconds: 12 }))).toMatchObject({
      retryAfter: '12',
    });
    expect(answer(new DomainError('RATE_LIMITED', 'Too many MCP sessions.'))).toEqual({
      status: 429,
      code: 'RATE_LIMITED',
      retryAfter: '1',
    });
    expect(answer(new DomainError('RATE_LIMITED', 'Slow down.', { retryAfterSeconds: 30 }))).toMatchObject({
      retryAfter: '30',
    });
  });

  it('sends no Retry-After with other errors', () => {
    expect(answer(new DomainError('NOT_FOUND', 'No such conversation.'))).toEqual({
      status: 404,
      code: 'NOT_FOUND',
      retryAfter: undefined,
    });
    expect(answer(new DomainError('CONFLICT', 'It exists.', { retryAfterSeconds: 3 })).retryAfter).toBeUndefined();
  });
});
