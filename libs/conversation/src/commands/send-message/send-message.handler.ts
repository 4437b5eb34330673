import { Inject, Injectable } from '@nestjs/common';
import { assertMessageWithinLimits } from '@parley/auth';
import { CONFIG, type Config } from '@parley/config';
import { countTokens } from '@parley/prompt';
import type { CommandContext, TurnReply } from '../../api/replies';
import type { SendMessageRequest } from '../../api/requests';
import { TurnCommand } from '../turn-command';

/** SendMessage (with attachments): records the user's message and starts a turn. */
@Injectable()
export class SendMessageHandler {
  constructor(
    @Inject(TurnCommand) private readonly turn: TurnCommand,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  async execute(conversationId: string, input: SendMessageRequest, ctx: CommandContext): Promise<TurnReply> {
    assertMessageWithinLimits(this.config.limits, input);
    const { content, attachments } = input;
    return this.turn.run(conversationId, ctx, input, { type: 'SendMessage', content, attachments }, (meta) => ({
      type: 'SendMessage',
      data: { content, attachments, tokenCount: countTokens(content, '') },
      meta,
    }));
  }
}
