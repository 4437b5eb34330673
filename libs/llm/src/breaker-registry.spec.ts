import { setTimeout as sleep } from 'node:timers/promises';
import { BreakerRegistry } from './breaker-registry';
import { LlmError } from './llm-error';

const failWith = (kind: 'overloaded' | 'bad_request') => async () => {
  throw new LlmError(kind, kind);
};

describe('BreakerRegistry', () => {
  it('opens after consecutive retryable failures and then fails fast with circuit_open', async () => {
    const breakers = new BreakerRegistry({ threshold: 2, halfOpenAfterMs: 60_000 });
    await expect(breakers.execute('A', failWith('overloaded'))).rejects.toMatchObject({ kind: 'overloaded' });
    await expect(breakers.execute('A', failWith('overloaded'))).rejects.toMatchObject({ kind: 'overloaded' });
    let called = false;
    const blocked = breakers.execute('A', async () => {
      called = true;
    });
    await expect(blocked).rejects.toMatchObject({ kind: 'circuit_open', retryable: false });
    expect(called).toBe(false);
    expect(breakers.state('A')).toBe('open');
  });

  it('keeps a circuit per provider', async () => {
    const breakers = new BreakerRegistry({ threshold: 1 });
    await expect(breakers.execute('A', failWith('overloaded'))).rejects.toBeDefined();
    await expect(breakers.execute('B', async () => 'fine')).resolves.toBe('fine');
    expect(breakers.state('A')).toBe('open');
    expect(breakers.state('B')).toBe('closed');
    expect(breakers.states()).toEqual({ A: 'open', B: 'closed' });
  });

  it('does not count errors that are not retryable', async () => {
    const breakers = new BreakerRegistry({ threshold: 1 });
    await expect(breakers.execute('A', failWith('bad_request'))).rejects.toMatchObject({ kind: 'bad_request' });
    expect(breakers.state('A')).toBe('closed');
  });

  it('lets one trial call through after the cool-down and closes when it succeeds', async () => {
    const breakers = new BreakerRegistry({ threshold: 1, halfOpenAfterMs: 50 });
    await expect(breakers.execute('A', failWith('overloaded'))).rejects.toBeDefined();
    await expect(breakers.execute('A', async () => 'early')).rejects.toMatchObject({ kind: 'circuit_open' });
    await sleep(60);
    await expect(breakers.execute('A', async () => 'trial')).resolves.toBe('trial');
    expect(breakers.state('A')).toBe('closed');
  });
});
