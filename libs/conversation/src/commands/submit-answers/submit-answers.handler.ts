import { Inject, Injectable } from '@nestjs/common';
import { z } from 'zod';
import { conversationId, waitOptions } from '../../api/input-fields';
import type { OperationContext } from '../../api/operation';
import type { TurnReply } from '../../api/replies';
import { TurnCommand } from '../turn-command';

export const submitAnswersInput = z.strictObject({
  conversationId,
  answers: z.record(z.string().min(1).max(128), z.string().max(10_000)),
  ...waitOptions,
});

/** SubmitAnswers: the answers become the AskUserQuestion call's result and the turn continues. */
@Injectable()
export class SubmitAnswersHandler {
  constructor(@Inject(TurnCommand) private readonly turn: TurnCommand) {}

  execute(input: z.output<typeof submitAnswersInput>, ctx: OperationContext): Promise<TurnReply> {
    const { answers } = input;
    return this.turn.run(input.conversationId, ctx, input, { type: 'SubmitAnswers', answers }, (meta) => ({
      type: 'SubmitAnswers',
      data: { answers },
      meta,
    }));
  }
}
