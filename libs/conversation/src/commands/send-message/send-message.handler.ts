import { Inject, Injectable } from '@nestjs/common';
import { assertMessageWithinLimits } from '@parley/auth';
import { CONFIG, type Config } from '@parley/config';
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
  constructor(
    @Inject(TurnCommand) private readonly turn: TurnCommand,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  async execute(input: z.output<typeof sendMessageInput>, ctx: OperationContext): Promise<TurnReply> {
    assertMessageWithinLimits(this.config.limits, input);
    const { content, attachments } = input;
    const body = { type: 'SendMessage' as const, content, attachments };
    return this.turn.run(input.conversationId, ctx, input, body, (meta, state) => ({
      type: 'SendMessage',
      data: { content, attachments, tokenCount: countTokens(content, modelNameOf(state)) },
      meta,
    }));
  }
}

/** The message is counted with its conversation's model; '' (the fallback encoding) when there is none. */
const modelNameOf = (state: ConversationState): string => (state.status === 'none' ? '' : state.snapshot.model.name);
