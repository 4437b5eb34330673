import { Inject, Injectable } from '@nestjs/common';
import type { CommandContext, TurnReply } from '../../api/replies';
import type { SubmitAnswersRequest } from '../../api/requests';
import { TurnCommand } from '../turn-command';

/** SubmitAnswers: the answers become the AskUserQuestion call's result and the turn continues. */
@Injectable()
export class SubmitAnswersHandler {
  constructor(@Inject(TurnCommand) private readonly turn: TurnCommand) {}

  execute(conversationId: string, input: SubmitAnswersRequest, ctx: CommandContext): Promise<TurnReply> {
    return this.turn.run(conversationId, ctx, input, { type: 'SubmitAnswers', answers: input.answers }, (meta) => ({
      type: 'SubmitAnswers',
      data: { answers: input.answers },
      meta,
    }));
  }
}
