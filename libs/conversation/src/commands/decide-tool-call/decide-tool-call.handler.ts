import { Inject, Injectable } from '@nestjs/common';
import { z } from 'zod';
import { conversationId, reason, toolCallId, waitOptions } from '../../api/input-fields';
import type { OperationContext } from '../../api/operation';
import type { TurnReply } from '../../api/replies';
import { TurnCommand } from '../turn-command';

/** A human's decision on a tool call that needs approval; the turn goes on with it. */
export const toolCallDecisionInput = z.strictObject({ conversationId, toolCallId, reason, ...waitOptions });
type Decision = z.output<typeof toolCallDecisionInput>;

/** ApproveToolCall: the tool runs. */
@Injectable()
export class ApproveToolCallHandler {
  constructor(@Inject(TurnCommand) private readonly turn: TurnCommand) {}

  execute(input: Decision, ctx: OperationContext): Promise<TurnReply> {
    const { toolCallId } = input;
    return this.turn.run(input.conversationId, ctx, input, { type: 'ApproveToolCall', toolCallId }, (meta) => ({
      type: 'ApproveToolCall',
      data: { toolCallId },
      meta,
    }));
  }
}

/** RejectToolCall: the model hears the tool was refused, and why. */
@Injectable()
export class RejectToolCallHandler {
  constructor(@Inject(TurnCommand) private readonly turn: TurnCommand) {}

  execute(input: Decision, ctx: OperationContext): Promise<TurnReply> {
    const { toolCallId } = input;
    const reason = input.reason ?? null;
    return this.turn.run(input.conversationId, ctx, input, { type: 'RejectToolCall', toolCallId, reason }, (meta) => ({
      type: 'RejectToolCall',
      data: { toolCallId, reason },
      meta,
    }));
  }
}
