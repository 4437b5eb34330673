import type { ConversationCommand } from './conversation.commands';
import type { SystemCommand } from './turn.commands';
import { decide } from './conversation.decide';
import type { ConversationEvent } from './conversation.events';
import { evolve } from './conversation.evolve';
import { initialState, type ConversationState } from './conversation.state';
import type { ConversationEnvelope } from './event-envelope';

/**
 * decide + evolve + the initial state as one value, for the given/when/then helper. Events
 * given without metadata are stamped with a fixed time.
 */
export const conversationDecider = {
  decide: (command: ConversationCommand | SystemCommand, state: ConversationState): ConversationEvent[] =>
    decide(command, state),
  evolve: (state: ConversationState, event: ConversationEvent | ConversationEnvelope): ConversationState =>
    evolve(state, 'metadata' in event ? event : { ...event, metadata: { occurredAt: '2026-01-01T00:00:00.000Z' } }),
  initialState,
};
