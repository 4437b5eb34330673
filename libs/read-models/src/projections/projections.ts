import { attachmentsProjection, messagesProjection } from './messages.projection';
import { conversationsProjection } from './conversations.projection';
import { modelCallsProjection } from './model-calls.projection';
import { pendingProjection } from './pending.projection';
import type { Projection } from './projection';
import { toolCallsProjection } from './tool-calls.projection';
import { usageProjection } from './usage.projection';

/** Every read model; they share one subscription, `read-models` (see runProjections). */
export const PROJECTIONS: readonly Projection[] = [
  conversationsProjection,
  messagesProjection,
  attachmentsProjection,
  toolCallsProjection,
  modelCallsProjection,
  pendingProjection,
  usageProjection,
];

/** The checkpoint of every projection's live tables. */
export const READ_MODELS_SUBSCRIPTION = 'read-models';

export function projectionNamed(name: string): Projection | undefined {
  return PROJECTIONS.find((p) => p.name === name);
}
