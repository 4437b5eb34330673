import { appendContract } from './append.contract';
import { badInputContract } from './bad-input.contract';
import type { ContractHarness } from './contract-kit';
import { feedContract } from './feed.contract';
import { integrityContract } from './integrity.contract';
import { readContract } from './read.contract';
import { runnerContract } from './runner.contract';
import { subscriptionContract } from './subscription.contract';

export type { ContractHarness, OpenAppend } from './contract-kit';

/**
 * The contract (docs/event-store.md) that every adapter passes: its twelve points, bad input and
 * the hash chain. `setup` builds the adapter under test once for the suite.
 */
export function describeEventStoreContract(name: string, setup: () => Promise<ContractHarness>): void {
  describe(`${name} — event-store contract`, () => {
    let harness: ContractHarness | undefined;
    const h = (): ContractHarness => {
      if (!harness) throw new Error('the contract harness is not set up');
      return harness;
    };

    beforeAll(async () => {
      harness = await setup();
    });

    afterAll(async () => {
      await harness?.close();
    });

    appendContract(h);
    readContract(h);
    feedContract(h);
    subscriptionContract(h);
    runnerContract(h);
    badInputContract(h);
    integrityContract(h);
  });
}
