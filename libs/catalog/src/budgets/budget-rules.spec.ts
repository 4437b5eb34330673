import { periodStart, refusalMessage, worstCaseCost } from './budget-rules';

describe('budget rules', () => {
  it('puts a moment in its UTC day and month', () => {
    const at = new Date('2026-03-31T23:59:59.999Z');
    expect(periodStart('day', at)).toBe('2026-03-31');
    expect(periodStart('month', at)).toBe('2026-03-01');
    expect(periodStart('day', new Date('2026-04-01T00:00:00.000Z'))).toBe('2026-04-01');
    expect(periodStart('month', new Date('2026-04-01T00:00:00.000Z'))).toBe('2026-04-01');
  });

  it('reserves the prompt with headroom and every completion token at the model prices', () => {
    // (ceil(100 * 1.1) + 32) input tokens and 256 output tokens.
    expect(worstCaseCost({ inputTokenPrice: 0.001, outputTokenPrice: 0.002 }, 100, 256)).toBeCloseTo(
      142 * 0.001 + 256 * 0.002,
      12,
    );
    expect(worstCaseCost({ inputTokenPrice: 0, outputTokenPrice: 0 }, 1_000, 1_000)).toBe(0);
  });

  it('names the budget, its cap, spend and holds in a refusal', () => {
    const message = refusalMessage({
      budget: 'ALICE-DAY',
      scope: 'subject',
      target: 'alice',
      period: 'day',
      periodStart: '2026-03-31',
      cap: 1,
      spent: 0.75,
      reserved: 0.2,
      amount: 0.1,
    });
    expect(message).toBe(
      "The model call would pass budget 'ALICE-DAY' (subject alice, per day from 2026-03-31): cap 1, spent 0.75, reserved 0.2, this call up to 0.1.",
    );
  });
});
