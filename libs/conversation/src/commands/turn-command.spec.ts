import { TurnSlots } from '@parley/auth';
import type { Config } from '@parley/config';
import { DomainError } from '@parley/core';
import type { OperationContext } from '../api/operation';
import { initialState } from '@parley/domain';
import type { ConversationEvent } from '@parley/domain';
import type { CommandRunner, Executed } from './command-runner';
import { TurnCommand } from './turn-command';
import type { TurnWaiter } from './turn-waiter';

/** A command runner that answers `outcome` (or throws it) without a store: TurnCommand's slot rules alone. */
function turnCommand(slots: TurnSlots, outcome: () => Promise<Executed>, owner = 'alice') {
  const runner = { execute: jest.fn(outcome), ownerOf: async () => owner };
  const command = new TurnCommand(
    runner as unknown as CommandRunner,
    {} as TurnWaiter,
    { turn: { timeoutMs: 1_000 }, limits: { maxWaitMs: 30_000 } } as Config,
    slots,
  );
  const run = (conversationId: string, ctx: OperationContext) =>
    command.run(conversationId, ctx, { wait: false }, { type: 'SendMessage' }, () => {
      throw new Error('the runner builds no command here');
    });
  return { run, runner };
}

const executed = (events: ConversationEvent[], replayed = false): Executed => ({
  state: initialState(),
  revision: 1n,
  position: '1',
  events,
  replayed,
});
const turnStarted: ConversationEvent = { type: 'TurnStarted', data: { turnNo: 1 } } as ConversationEvent;
const alice: OperationContext = { caller: { subject: 'alice', roles: ['client'] } };
const oneSlot = () => new TurnSlots({ redis: null, prefix: 'test', maxPerSubject: 1, ttlMs: 60_000 });
const refused = (code: string) => new DomainError(code as 'RATE_LIMITED', `refused: ${code}`);

describe('TurnCommand', () => {
  it("awaits the front door's rate-limit verdict and gives back the slot it took when the verdict is a refusal", async () => {
    const slots = oneSlot();
    const { run, runner } = turnCommand(slots, async () => executed([turnStarted]));
    const verdict = Promise.reject(refused('RATE_LIMITED'));
    verdict.catch(() => undefined);

    await expect(run('c1', { ...alice, rateLimit: verdict })).rejects.toMatchObject({ code: 'RATE_LIMITED' });

    expect(runner.execute).not.toHaveBeenCalled();
    await expect(slots.acquire('alice', 'c2')).resolves.toBe('taken');
  });

  it('keeps the slot of a command that starts a turn, for the turn to give back', async () => {
    const slots = oneSlot();
    const { run } = turnCommand(slots, async () => executed([turnStarted]));

    await run('c1', { ...alice, rateLimit: Promise.resolve() });

    await expect(slots.acquire('alice', 'c2')).rejects.toMatchObject({ code: 'RATE_LIMITED' });
  });

  it("leaves a running turn's slot alone when a command on its conversation is refused", async () => {
    const slots = oneSlot();
    await slots.acquire('alice', 'c1');
    const { run } = turnCommand(slots, async () => {
      throw refused('CONVERSATION_BUSY');
    });

    await expect(run('c1', alice)).rejects.toMatchObject({ code: 'CONVERSATION_BUSY' });

    await expect(slots.acquire('alice', 'c2')).rejects.toMatchObject({ code: 'RATE_LIMITED' });
  });

  it('leaves the slot it took to a turn that started on its conversation while it was being admitted', async () => {
    const slots = oneSlot();
    const { run } = turnCommand(slots, async () => {
      throw new DomainError('CONVERSATION_BUSY', 'is running a turn', { conversationId: 'c1', status: 'RU' });
    });

    await expect(run('c1', alice)).rejects.toMatchObject({ code: 'CONVERSATION_BUSY' });

    await expect(slots.acquire('alice', 'c2')).rejects.toMatchObject({ code: 'RATE_LIMITED' });
  });

  it('gives back the slot it took for a replayed command whose turn has ended', async () => {
    const slots = oneSlot();
    const { run } = turnCommand(slots, async () => executed([], true));

    await run('c1', alice);

    await expect(slots.acquire('alice', 'c2')).resolves.toBe('taken');
  });

  it("takes the conversation owner's slot when an admin starts its turn, the one the worker gives back", async () => {
    const slots = oneSlot();
    const { run } = turnCommand(slots, async () => executed([turnStarted]));

    await run('c1', { caller: { subject: 'ops', roles: ['admin'] } });

    await expect(slots.acquire('alice', 'c2')).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    await expect(slots.acquire('ops', 'c2')).resolves.toBe('taken');
    await slots.release('alice', 'c1');
    await expect(slots.acquire('alice', 'c2')).resolves.toBe('taken');
  });

  it('gives back the slot it took when the command fails', async () => {
    const slots = oneSlot();
    const { run } = turnCommand(slots, async () => {
      throw refused('NOT_FOUND');
    });

    await expect(run('c1', alice)).rejects.toMatchObject({ code: 'NOT_FOUND' });

    await expect(slots.acquire('alice', 'c2')).resolves.toBe('taken');
  });
});
