import { Inject, Injectable } from '@nestjs/common';
import { assertMessageWithinLimits } from '@parley/auth';
import { CONFIG, type Config } from '@parley/config';
import { DomainError } from '@parley/core';
import { AttachmentUrlPolicy } from '@parley/tools';
import { countTokens } from '@parley/prompt';
import { z } from 'zod';
import { attachmentSchema, conversationId, waitOptions } from '../../api/input-fields';
import type { OperationContext } from '../../api/operation';
import type { TurnReply } from '../../api/replies';
import type { ConversationState } from '@parley/domain';
import { TurnCommand } from '../turn-command';

export const sendMessageInput = z.strictObject({
  conversationId,
  content: z.string().refine((s) => s.trim().length > 0, { message: 'must not be empty' }),
  attachments: z.array(attachmentSchema).default([]),
  ...waitOptions,
});

/** Seed 000's sendMessageWithAttachments: the same command, with at least one attachment. */
export const sendMessageWithAttachmentsInput = sendMessageInput.extend({
  attachments: z.array(attachmentSchema).min(1),
});

/** SendMessage (with attachments): records the user's message and starts a turn. */
@Injectable()
export class SendMessageHandler {
  private readonly urls: AttachmentUrlPolicy;

  constructor(
    @Inject(TurnCommand) private readonly turn: TurnCommand,
    @Inject(CONFIG) private readonly config: Config,
  ) {
    this.urls = new AttachmentUrlPolicy(config.limits.attachmentAllowedHosts ?? []);
  }

  async execute(input: z.output<typeof sendMessageInput>, ctx: OperationContext): Promise<TurnReply> {
    assertMessageWithinLimits(this.config.limits, input);
    await this.checkAttachmentUrls(input.attachments);
    const { content, attachments } = input;
    const body = { type: 'SendMessage' as const, content, attachments };
    return this.turn.run(input.conversationId, ctx, input, body, (meta, state) => ({
      type: 'SendMessage',
      data: { content, attachments, tokenCount: countTokens(content, modelNameOf(state)) },
      meta,
    }));
  }

  /** A model server fetches the URLs: none may send it into Parley's network. */
  private async checkAttachmentUrls(attachments: { url: string }[]): Promise<void> {
    const refusals = await Promise.all(attachments.map((a) => this.urls.refusal(a.url)));
    const problems = refusals.flatMap((message, i) => (message ? [{ path: `attachments.${i}.url`, message }] : []));
    if (problems.length > 0)
      throw DomainError.validation(problems, `Attachment URL refused: ${problems.map((p) => p.message).join('; ')}.`);
  }
}

/** The message is counted with its conversation's model; '' (the fallback encoding) when there is none. */
const modelNameOf = (state: ConversationState): string => (state.status === 'none' ? '' : state.snapshot.model.name);
