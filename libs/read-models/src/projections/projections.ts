import { attachmentsProjection, messagesProjection } from './messages.projection';
import { conversationsProjection } from './conversations.projection';
import { modelCallsProjection } from './model-calls.projection';
import { pendingProjection } from './pending.projection';
import type { Projection } from './projection';
import { toolCallsProjection } from './tool-calls.projection';
import { usageProjection } from './usage.projection';

/** Every read model, each on a subscription of its own (`read-model:<name>`). */
export const PROJECTIONS: readonly Projection[] = [
  conversationsProjection,
  messagesProjection,
  attachmentsProjection,
  toolCallsProjection,
  modelCallsProjection,
  pendingProjection,
  usageProjection,
];

export const subscriptionIdOf = (projection: Projection | string): string =>
  `read-model:${typeof projection === 'string' ? projection : projection.name}`;

export function projectionNamed(name: string): Projection | undefined {
  return PROJECTIONS.find((p) => p.name === name);
}
