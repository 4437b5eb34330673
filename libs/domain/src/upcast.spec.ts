import type { ConversationEventType, TurnResumed } from './conversation.events';
import { CONVERSATION_EVENT_SCHEMAS, upcast, type EventSchemas } from './upcast';

const metadata = { occurredAt: '2026-11-20T10:00:00.000Z' };

/** TurnResumed as if it had gone through three versions: `why` became `reason`, then `turn` became `turnNo`. */
type V1 = { turn: number; why: string };
type V2 = { turn: number; reason: TurnResumed['data']['reason'] };
const schemas: EventSchemas = {
  current: { ...CONVERSATION_EVENT_SCHEMAS.current, TurnResumed: 3 },
  steps: {
    TurnResumed: {
      1: ({ turn, why }: V1): V2 => ({ turn, reason: why === 'user answered' ? 'answers' : 'resume' }),
      2: ({ turn, reason }: V2): TurnResumed['data'] => ({ turnNo: turn, reason }),
    },
  },
};

describe('upcasting conversation events', () => {
  it('takes an old event through every step to the current version, keeping its metadata', () => {
    const stored = { type: 'TurnResumed', schemaVersion: 1, data: { turn: 2, why: 'user answered' }, metadata };

    expect(upcast(stored, schemas)).toEqual({ type: 'TurnResumed', data: { turnNo: 2, reason: 'answers' }, metadata });
  });

  it('starts from the version the event was stored at', () => {
    const stored = { type: 'TurnResumed', schemaVersion: 2, data: { turn: 4, reason: 'approval' }, metadata };

    expect(upcast(stored, schemas)?.data).toEqual({ turnNo: 4, reason: 'approval' });
  });

  it('reads an event of the current version as it was stored', () => {
    const data = { turnNo: 1, reason: 'recover' };

    expect(upcast({ type: 'TurnResumed', schemaVersion: 3, data, metadata }, schemas)?.data).toBe(data);
    expect(upcast({ type: 'TurnStarted', schemaVersion: 1, data: { turnNo: 1 }, metadata }, schemas)).toEqual({
      type: 'TurnStarted',
      data: { turnNo: 1 },
      metadata,
    });
  });

  it('knows no type a newer Parley added, nor a version newer than its own', () => {
    expect(upcast({ type: 'ConversationRenamed', schemaVersion: 1, data: {}, metadata }, schemas)).toBeNull();
    expect(upcast({ type: 'TurnResumed', schemaVersion: 4, data: {}, metadata }, schemas)).toBeNull();
    expect(upcast({ type: 'toString', schemaVersion: 1, data: {}, metadata }, schemas)).toBeNull();
  });

  it('refuses to read past a missing step instead of folding data of the wrong shape', () => {
    const gap: EventSchemas = { ...schemas, steps: { TurnResumed: { 2: schemas.steps.TurnResumed![2] } } };

    expect(() => upcast({ type: 'TurnResumed', schemaVersion: 1, data: {}, metadata }, gap)).toThrow(
      'TurnResumed has no upcaster from version 1 to 2.',
    );
  });

  it("declares Parley's events with a step from every version below the current one, and none past it", () => {
    for (const [type, current] of Object.entries(CONVERSATION_EVENT_SCHEMAS.current)) {
      const steps = CONVERSATION_EVENT_SCHEMAS.steps[type as ConversationEventType] ?? {};
      expect([type, Object.keys(steps).map(Number)]).toEqual([
        type,
        Array.from({ length: current - 1 }, (_, i) => i + 1),
      ]);
    }
  });
});
