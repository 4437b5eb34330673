import { GENESIS_HASH } from '../hash-chain';
import { caught, events, newStream, type ContractHarness } from './contract-kit';

/** The hash chain: every event links to the previous one; edits are caught. */
export function integrityContract(h: () => ContractHarness): void {
  describe('hash chain', () => {
    it('links each event to the previous one from the genesis hash, across appends', async () => {
      const { store } = h();
      const stream = newStream();
      await store.append(stream, events(2));
      await store.append(stream, events(2));
      const stored = await store.readStream(stream);
      expect(stored[0].prevHash).toBe(GENESIS_HASH);
      for (let i = 1; i < stored.length; i++) expect(stored[i].prevHash).toBe(stored[i - 1].hash);
      expect(new Set(stored.map((e) => e.hash)).size).toBe(4);
      expect(await store.verifyStream(stream)).toEqual({ ok: true, checked: 4 });
    });

    it('names the first revision whose content was changed behind the store’s back', async () => {
      const { store, tamper } = h();
      if (!tamper) return;
      const stream = newStream();
      await store.append(stream, events(5));
      await tamper(stream, 2n);
      expect(await store.verifyStream(stream)).toEqual({
        ok: false,
        checked: 3,
        firstBadRevision: 2n,
        reason: 'content does not match its hash',
      });
    });

    it('refuses to verify an unknown stream', async () => {
      expect(await caught(h().store.verifyStream(newStream()))).toMatchObject({ name: 'StreamNotFound' });
    });
  });
}
