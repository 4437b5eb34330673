import { FAULT_KINDS, runSoak } from '../tools/soak/soak';

/**
 * The soak (`npm run soak`, docs/reliability.md) at smoke size, so it cannot rot: under a minute
 * of the mixed load with one fault of each kind, then its reconciliation. What it asserts is
 * what was stored against what the clients were told, never a rate or a timing.
 */
describe('the soak, at smoke size', () => {
  it('survives one fault of each kind and reconciles: no acknowledged command without its events, read models equal their folds, chains verify, nothing left behind', async () => {
    const lines: string[] = [];
    const result = await runSoak({
      minutes: 0.9,
      lanes: 6,
      faultEveryMs: 7_000,
      faults: FAULT_KINDS,
      sampleMs: 5_000,
      log: (line) => lines.push(line),
    });
    process.stderr.write(`${result.ok ? '' : `${lines.join('\n')}\n`}${result.table}\n`);
    expect(result.problems).toEqual([]);
    expect(result.faults.map((f) => f.kind).sort()).toEqual([...FAULT_KINDS].sort());
    expect(result.faults.every((f) => f.survived)).toBe(true);
    expect(result.inputsAcknowledged).toBeGreaterThan(0);
    for (const kind of ['plain', 'plain-nats', 'tool', 'mcp', 'question', 'approval'] as const)
      expect(result.turns[kind]).toBeGreaterThan(0);
    expect(result.table).toMatch(/^\| soak \| \|\n\|---\|---\|\n/);
    expect(result.table).toContain('| events lost | 0 |');
  }, 300_000);
});
