import { LlmError, parseRetryAfter } from './llm-error';

describe('parseRetryAfter', () => {
  it('prefers retry-after-ms', () => {
    expect(parseRetryAfter(new Headers({ 'retry-after-ms': '250', 'retry-after': '3' }))).toBe(250);
  });

  it('reads retry-after in seconds', () => {
    expect(parseRetryAfter(new Headers({ 'retry-after': '2' }))).toBe(2000);
  });

  it('reads retry-after as an HTTP date', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryAfter(new Headers({ 'retry-after': 'Wed, 01 Jan 2025 00:00:05 GMT' }), now)).toBe(5000);
  });

  it('is undefined when the provider said nothing usable', () => {
    expect(parseRetryAfter(new Headers({ 'retry-after': 'soon' }))).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
  });
});

describe('LlmError', () => {
  it('is retryable for transient kinds only', () => {
    expect(new LlmError('overloaded', 'x').retryable).toBe(true);
    expect(new LlmError('stream_interrupted', 'x').retryable).toBe(true);
    expect(new LlmError('bad_request', 'x').retryable).toBe(false);
    expect(new LlmError('aborted', 'x').retryable).toBe(false);
    expect(new LlmError('circuit_open', 'x').retryable).toBe(false);
  });
});
