import { DiscoveryService } from '@nestjs/core';
import type { FinishReason } from '@parley/core';
import type { LlmRequest, LlmToolCall, LlmUsage } from '../llm.port';

/** How an advisor is registered; the catalog's llmAdvisorBeanName names it by `name`. */
export interface ParleyAdvisorOptions {
  /** The bean name (seed 000's llmAdvisorBeanName). */
  name: string;
  description?: string;
}

/** A model reply as an advisor sees it: the model's, or one an advisor gives in its place. */
export interface AdvisedReply {
  text: string;
  reasoning: string;
  toolCalls: LlmToolCall[];
  finishReason: FinishReason;
  responseModel: string | null;
  usage: LlmUsage;
  latencyMs: number;
}

/** What an advisor is told about the model call it runs around. */
export interface AdvisorContext {
  conversationId: string;
  turnNo: number;
  callNo: number;
  /** The catalog advisor's code, and its config (`{}` when it has none). */
  code: string;
  config: Record<string, unknown>;
  /** Shared by every advisor of this one model call (e.g. a cache key from `before` for `after`). */
  attributes: Map<string, unknown>;
}

/**
 * What `before` or `after` did. `request`/`reply`: the changed value (leave out to keep it);
 * a `reply` from `before` answers in place of the model, which is then not called. `note`:
 * what to record about it (JSON, no secret), e.g. a cache key or the number of redactions.
 */
export interface AdvisorOutcome {
  request?: LlmRequest;
  reply?: AdvisedReply;
  note?: Record<string, unknown>;
}

/**
 * An advisor (seed 000's Spring AI Advisor bean): runs around each model call of the actions
 * that link it, `before` in llmAdvisorOrder descending and `after` in the reverse order.
 */
export interface Advisor {
  before?(request: LlmRequest, ctx: AdvisorContext): AdvisorOutcome | void | Promise<AdvisorOutcome | void>;
  after?(reply: AdvisedReply, ctx: AdvisorContext): AdvisorOutcome | void | Promise<AdvisorOutcome | void>;
}

/** Marks an injectable class as an advisor; AdvisorRegistry finds it at module init. */
export const ParleyAdvisor = DiscoveryService.createDecorator<ParleyAdvisorOptions>();

/** The advisors Parley brings (libs/turn registers them). */
export const BUILT_IN_ADVISORS = ['logging', 'safeGuard', 'piiRedaction', 'responseCache'] as const;
