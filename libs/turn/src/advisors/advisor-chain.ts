import type { AdvisorBinding } from '@parley/core';
import type { RecordAdvisorApplied, Unstamped } from '@parley/domain';
import type { AdvisedReply, Advisor, AdvisorContext, AdvisorOutcome, AdvisorRegistry, LlmRequest } from '@parley/llm';
import { sha256Of, stableJson } from './stable-json';

type Applied = {
  -readonly [K in keyof Unstamped<RecordAdvisorApplied>['data']]: Unstamped<RecordAdvisorApplied>['data'][K];
};

/** An advisor failed or is not registered in this process: the model call fails with this message. */
export class AdvisorFailed extends Error {}

/** What the advisors' `before` made of the request: the request to send, or a reply in the model's place. */
export interface BeforeResult {
  request: LlmRequest;
  reply: AdvisedReply | null;
  applied: Applied[];
}

/**
 * The action's advisors around one model call: `before` in the snapshot's order (llmAdvisorOrder
 * descending), `after` in the reverse order for those whose `before` ran — not for one that
 * answered in the model's place, nor those after it. Each change is returned as the data of an
 * AdvisorApplied event (hashes and indexes, not the content).
 */
export class AdvisorChain {
  private readonly attributes = new Map<string, unknown>();
  private entered: { binding: AdvisorBinding; impl: Advisor }[] = [];

  constructor(
    private readonly registry: AdvisorRegistry | undefined,
    private readonly bindings: readonly AdvisorBinding[],
    private readonly call: { conversationId: string; turnNo: number; callNo: number },
  ) {}

  get empty(): boolean {
    return this.bindings.length === 0;
  }

  async before(request: LlmRequest): Promise<BeforeResult> {
    const applied: Applied[] = [];
    this.entered = [];
    for (const binding of this.bindings) {
      const impl = this.implOf(binding);
      const outcome = impl.before
        ? await this.run(binding, 'before', () => impl.before!(request, this.ctx(binding)))
        : undefined;
      const next = outcome?.request ?? request;
      const record: Applied = { callNo: this.call.callNo, advisor: binding.code, bean: binding.bean, phase: 'before' };
      const messages = messagesChange(request, next);
      if (messages) record.messages = messages;
      if (stableJson(request.options) !== stableJson(next.options)) record.optionsChanged = true;
      if (outcome?.reply) record.replaced = true;
      if (outcome?.note) record.note = outcome.note;
      if (Object.keys(record).length > 4) applied.push(record);
      request = next;
      if (outcome?.reply) return { request, reply: outcome.reply, applied };
      this.entered.push({ binding, impl });
    }
    return { request, reply: null, applied };
  }

  async after(reply: AdvisedReply): Promise<{ reply: AdvisedReply; applied: Applied[] }> {
    const applied: Applied[] = [];
    for (const { binding, impl } of [...this.entered].reverse()) {
      if (!impl.after) continue;
      const outcome = await this.run(binding, 'after', () => impl.after!(reply, this.ctx(binding)));
      const next = outcome?.reply ?? reply;
      const record: Applied = { callNo: this.call.callNo, advisor: binding.code, bean: binding.bean, phase: 'after' };
      if (stableJson(next) !== stableJson(reply)) record.replyChanged = true;
      if (outcome?.note) record.note = outcome.note;
      if (Object.keys(record).length > 4) applied.push(record);
      reply = next;
    }
    return { reply, applied };
  }

  private implOf(binding: AdvisorBinding): Advisor {
    const found = this.registry?.get(binding.bean);
    if (!found) throw new AdvisorFailed(`Advisor '${binding.code}': no advisor '${binding.bean}' is registered.`);
    return found.impl;
  }

  private ctx(binding: AdvisorBinding): AdvisorContext {
    return { ...this.call, code: binding.code, config: binding.config, attributes: this.attributes };
  }

  private async run(
    binding: AdvisorBinding,
    phase: 'before' | 'after',
    fn: () => AdvisorOutcome | void | Promise<AdvisorOutcome | void>,
  ): Promise<AdvisorOutcome | void> {
    try {
      return await fn();
    } catch (err) {
      throw new AdvisorFailed(
        `Advisor '${binding.code}' (${binding.bean}) failed ${phase} the model call: ${(err as Error).message}`,
      );
    }
  }
}

/** The messages' hashes before and after, and the indexes that differ; null when none does. */
function messagesChange(from: LlmRequest, to: LlmRequest): Applied['messages'] | null {
  if (from.messages === to.messages) return null;
  const changed: number[] = [];
  for (let i = 0; i < Math.max(from.messages.length, to.messages.length); i++) {
    if (stableJson(from.messages[i]) !== stableJson(to.messages[i])) changed.push(i);
  }
  if (changed.length === 0) return null;
  return { before: sha256Of(from.messages), after: sha256Of(to.messages), changed };
}
