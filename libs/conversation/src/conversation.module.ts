import { Module } from '@nestjs/common';
import { CONVERSATION_COMMANDS } from './api/conversation-commands.port';
import { ChangeLifecycleHandler } from './commands/change-lifecycle/change-lifecycle.handler';
import { CommandRunner } from './commands/command-runner';
import { ConversationCommandsService } from './commands/conversation-commands.service';
import { DecideToolCallHandler } from './commands/decide-tool-call/decide-tool-call.handler';
import { SendMessageHandler } from './commands/send-message/send-message.handler';
import { StartConversationHandler } from './commands/start-conversation/start-conversation.handler';
import { SubmitAnswersHandler } from './commands/submit-answers/submit-answers.handler';
import { ToolRepositoriesHandler } from './commands/tool-repositories/tool-repositories.handler';
import { TurnCommand } from './commands/turn-command';
import { TurnScheduler } from './commands/turn-scheduler';
import { TurnWaiter } from './commands/turn-waiter';
import { ConversationSignals } from './repository/conversation-signals';
import { ConversationRepository } from './repository/conversation.repository';

/**
 * The write side of conversations: CONVERSATION_COMMANDS and the repository the turn worker
 * uses. Needs EVENT_STORE, JOB_QUEUE, CONFIG and SNAPSHOT_SOURCE from global modules
 * (TurnSlots from the auth module when present).
 */
@Module({
  providers: [
    ConversationSignals,
    ConversationRepository,
    TurnScheduler,
    CommandRunner,
    TurnWaiter,
    TurnCommand,
    StartConversationHandler,
    SendMessageHandler,
    SubmitAnswersHandler,
    DecideToolCallHandler,
    ChangeLifecycleHandler,
    ToolRepositoriesHandler,
    ConversationCommandsService,
    { provide: CONVERSATION_COMMANDS, useExisting: ConversationCommandsService },
  ],
  exports: [CONVERSATION_COMMANDS, ConversationRepository, ConversationSignals, TurnScheduler],
})
export class ConversationModule {}
