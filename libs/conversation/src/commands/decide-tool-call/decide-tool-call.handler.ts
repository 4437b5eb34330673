import { Inject, Injectable } from '@nestjs/common';
import type { CommandContext, TurnReply } from '../../api/replies';
import type { ToolCallDecisionRequest } from '../../api/requests';
import { TurnCommand } from '../turn-command';

/** ApproveToolCall / RejectToolCall: a human decides on a tool call that needs approval. */
@Injectable()
export class DecideToolCallHandler {
  constructor(@Inject(TurnCommand) private readonly turn: TurnCommand) {}

  execute(
    decision: 'approve' | 'reject',
    conversationId: string,
    toolCallId: string,
    input: ToolCallDecisionRequest,
    ctx: CommandContext,
  ): Promise<TurnReply> {
    const reason = input.reason ?? null;
    if (decision === 'approve') {
      return this.turn.run(conversationId, ctx, input, { type: 'ApproveToolCall', toolCallId }, (meta) => ({
        type: 'ApproveToolCall',
        data: { toolCallId },
        meta,
      }));
    }
    return this.turn.run(conversationId, ctx, input, { type: 'RejectToolCall', toolCallId, reason }, (meta) => ({
      type: 'RejectToolCall',
      data: { toolCallId, reason },
      meta,
    }));
  }
}
