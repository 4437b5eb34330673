import type { ConversationEventType } from './conversation.events';
import type { ConversationEnvelope } from './event-envelope';

/**
 * Schema evolution of conversation events. The data of each event type has a version, stored
 * beside it (`schemaVersion`): appends write the type's current version, and a stored event is
 * upcast when read, one version at a time, before anything folds or projects it. Stored events
 * are never rewritten (their hash chain covers the data as written).
 */

/** An event as the store holds it, as far as upcasting reads it. */
export interface StoredEvent {
  readonly type: string;
  readonly schemaVersion: number;
  readonly data: unknown;
  readonly metadata: Readonly<Record<string, unknown>>;
}

/**
 * Turns the data of one event type at version n into its shape at version n + 1. Written with
 * the old shape as its parameter type: `(data: MessageRecordedV1) => MessageRecorded['data']`.
 */
export type UpcastStep = (data: never) => unknown;

export interface EventSchemas {
  /** The version each type's data is written at now. */
  readonly current: Readonly<Record<ConversationEventType, number>>;
  /** `steps[type][n]` upcasts version n to n + 1: one for every version below the current one. */
  readonly steps: { readonly [T in ConversationEventType]?: Readonly<Record<number, UpcastStep>> };
}

/**
 * Parley's conversation events. Changing the shape of a type's data means: raise its version
 * here and add the step from the version before; the events already stored keep theirs.
 */
export const CONVERSATION_EVENT_SCHEMAS: EventSchemas = {
  current: {
    ConversationStarted: 1,
    MessageRecorded: 1,
    AttachmentRecorded: 1,
    TurnStarted: 1,
    TurnResumed: 1,
    ModelCallStarted: 1,
    ChunksReceived: 1,
    ModelCallCompleted: 1,
    ModelCallFailed: 1,
    ModelCallRetryScheduled: 1,
    ToolCallStarted: 1,
    ToolCallCompleted: 1,
    ToolCallFailed: 1,
    ToolCallApprovalRequested: 1,
    ToolCallApproved: 1,
    ToolCallRejected: 1,
    QuestionAsked: 1,
    RemoteToolInvoked: 1,
    AnswersSubmitted: 1,
    ConversationCompleted: 1,
    OutputValidated: 1,
    ConversationFailed: 1,
    ConversationStuck: 1,
    ConversationTerminated: 1,
    ConversationKilled: 1,
    ConversationPaused: 1,
    ConversationResumed: 1,
    ConversationErased: 1,
    SkillDisclosed: 1,
    ToolRepositoryAdded: 1,
    ToolRepositoryChanged: 1,
    ToolRepositoryRemoved: 1,
    AdvisorApplied: 1,
    MemoryCleared: 1,
    MemorySummarized: 1,
    MemoryRemembered: 1,
    MemoriesRecalled: 1,
    ContextRetrieved: 1,
  },
  steps: {},
};

/** Whether `schemas` knows `type` at all. */
export const knowsType = (schemas: EventSchemas, type: string): type is ConversationEventType =>
  Object.hasOwn(schemas.current, type);

/**
 * The stored event as a conversation event of the current version, or null when `schemas` does
 * not know its type or its version is newer than the current one: a newer Parley wrote it.
 */
export function upcast(
  stored: StoredEvent,
  schemas: EventSchemas = CONVERSATION_EVENT_SCHEMAS,
): ConversationEnvelope | null {
  const { type, schemaVersion } = stored;
  if (!knowsType(schemas, type) || schemaVersion > schemas.current[type]) return null;
  let data = stored.data;
  for (let version = schemaVersion; version < schemas.current[type]; version++) {
    const step = schemas.steps[type]?.[version];
    if (!step) throw new Error(`${type} has no upcaster from version ${version} to ${version + 1}.`);
    data = step(data as never);
  }
  return { type, data, metadata: stored.metadata } as unknown as ConversationEnvelope;
}
