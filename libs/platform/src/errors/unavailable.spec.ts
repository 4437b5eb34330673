import { runInNewContext } from 'node:vm';
import { DomainError } from '@parley/core';
import { raisedBy, unavailableError } from './unavailable';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('unavailableError', () => {
  it.each([
    ['a PostgreSQL connection exception (class 08)', withCode('connection failure', '08006'), 'postgres'],
    ['PostgreSQL shutting down', withCode('terminating connection due to administrator command', '57P01'), 'postgres'],
    ['PostgreSQL starting up', withCode('the database system is starting up', '57P03'), 'postgres'],
    ['too many connections', withCode('sorry, too many clients already', '53300'), 'postgres'],
    ['pg losing its connection', new Error('Connection terminated unexpectedly'), 'postgres'],
    ['pg-pool unable to connect in time', new Error('timeout exceeded when trying to connect'), 'postgres'],
    [
      'ioredis without its offline queue',
      new Error("Stream isn't writeable and enableOfflineQueue options is false"),
      'redis',
    ],
    [
      'ioredis with retries used up',
      Object.assign(new Error('Reached the max retries per request limit'), { name: 'MaxRetriesPerRequestError' }),
      'redis',
    ],
  ])('answers SERVICE_UNAVAILABLE naming the dependency for %s', (_, err, dependency) => {
    const unavailable = unavailableError(err);
    expect(unavailable).toBeInstanceOf(DomainError);
    expect(unavailable).toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { dependency, retryAfterSeconds: 5 } });
  });

  it('answers SERVICE_UNAVAILABLE without a name for a refused socket', () => {
    const unavailable = unavailableError(withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'));
    expect(unavailable?.code).toBe('SERVICE_UNAVAILABLE');
    expect(unavailable?.details).toEqual({ retryAfterSeconds: 5 });
  });

  it('names the dependency whose connection raised a socket error that names no peer', () => {
    const reset = withCode('read ECONNRESET', 'ECONNRESET');
    raisedBy(reset, 'postgres');
    expect(unavailableError(reset)?.details).toEqual({ dependency: 'postgres', retryAfterSeconds: 5 });
  });

  it('knows a reset socket whose error was made in another realm (Node core, under a test runner)', () => {
    const foreign = runInNewContext(`Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })`) as Error;
    expect(foreign instanceof Error).toBe(false);
    expect(unavailableError(foreign)?.code).toBe('SERVICE_UNAVAILABLE');
  });

  it.each([
    ['a unique violation', withCode('duplicate key value violates unique constraint', '23505')],
    ['a syntax error', withCode('syntax error at or near "x"', '42601')],
    ['a plain bug', new TypeError("Cannot read properties of undefined (reading 'x')")],
    ['a domain error', new DomainError('NOT_FOUND', 'no such conversation')],
    ['something not an Error', 'connection terminated'],
  ])('leaves %s alone', (_, err) => {
    expect(unavailableError(err)).toBeNull();
  });
});
