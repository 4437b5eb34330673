import type { Config } from '@parley/config';
import { countTokens, encodingNameFor } from '@parley/prompt';
import { snapshotFixture } from '@parley/testing';
import type { OperationContext } from '../../api/operation';
import type { TurnReply } from '../../api/replies';
import type { ConversationCommand, SendMessage } from '@parley/domain';
import type { ConversationState } from '@parley/domain';
import type { CommandBuilder } from '../command-runner';
import type { TurnCommand } from '../turn-command';
import { SendMessageHandler } from './send-message.handler';

/** The SendMessage command the handler builds on a conversation whose model is `modelName`. */
async function built(content: string, modelName: string): Promise<SendMessage> {
  let command: ConversationCommand | undefined;
  const state = { status: 'CO', snapshot: snapshotFixture({ model: { ...snapshotFixture().model, name: modelName } }) };
  const turn = {
    run: async (_id: string, _ctx: OperationContext, _input: unknown, _body: unknown, build: CommandBuilder) => {
      command = build({ now: '2026-01-01T00:00:00.000Z', actor: 'alice' }, state as ConversationState);
      return {} as TurnReply;
    },
  };
  const limits = { maxMessageChars: 10_000, maxAttachments: 4 };
  const handler = new SendMessageHandler(turn as unknown as TurnCommand, { limits } as Config);
  const input = { conversationId: '0190a000-0000-7000-8000-000000000001', content, attachments: [], wait: true };
  await handler.execute(input, { caller: { subject: 'alice', roles: ['client'] } });
  return command as SendMessage;
}

describe('SendMessageHandler', () => {
  // Cyrillic text takes far fewer tokens in o200k_base than in cl100k_base.
  const content = 'Где мой заказ? Он должен был прийти вчера.';

  it("counts the user's message with the encoding of the conversation's model", async () => {
    expect(encodingNameFor('gpt-4')).toBe('cl100k_base');
    expect(countTokens(content, 'gpt-4')).not.toBe(countTokens(content, 'gpt-4o'));

    expect((await built(content, 'gpt-4')).data.tokenCount).toBe(countTokens(content, 'gpt-4'));
    expect((await built(content, 'gpt-4o')).data.tokenCount).toBe(countTokens(content, 'gpt-4o'));
  });

  it('counts a model tiktoken does not know with the fallback encoding', async () => {
    expect((await built(content, 'sim-chat')).data.tokenCount).toBe(countTokens(content, 'gpt-4o'));
  });
});
