import { DomainError } from '@parley/core';
import { HttpErrorFilter } from './http-error.filter';

describe('HttpErrorFilter', () => {
  const filter = new HttpErrorFilter();
  const answer = (err: DomainError) => {
    const { status, body, headers } = filter.toResponse(err);
    return { status, code: body.error.code, retryAfter: headers['retry-after'] };
  };

  it.each([
    ['a 503 with no delay of its own', new DomainError('SERVICE_UNAVAILABLE', 'The MCP server is down.'), 503, '5'],
    [
      'a 503 with its delay',
      new DomainError('SERVICE_UNAVAILABLE', 'Redis is down.', { retryAfterSeconds: 12 }),
      503,
      '12',
    ],
    ['a 429 with no delay of its own', new DomainError('RATE_LIMITED', 'Too many MCP sessions.'), 429, '1'],
    ['a 429 with its delay', new DomainError('RATE_LIMITED', 'Slow down.', { retryAfterSeconds: 30 }), 429, '30'],
    ['a 404', new DomainError('NOT_FOUND', 'No such conversation.'), 404, undefined],
    ['a 409 that names a delay', new DomainError('CONFLICT', 'It exists.', { retryAfterSeconds: 3 }), 409, undefined],
  ])('answers %s with the Retry-After it should carry', (_what, err, status, retryAfter) => {
    expect(answer(err)).toEqual({ status, code: err.code, retryAfter });
  });
});
