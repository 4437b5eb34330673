import { Module } from '@nestjs/common';
import { CommandRunner } from './commands/command-runner';
import { COMMAND_HANDLERS } from './commands/command-table';
import { TurnCommand } from './commands/turn-command';
import { TurnScheduler } from './commands/turn-scheduler';
import { TurnWaiter } from './commands/turn-waiter';
import { ConversationSignals } from './repository/conversation-signals';
import { ConversationRepository } from './repository/conversation.repository';

/**
 * The write side of conversations: the handlers of COMMANDS and the repository the turn worker
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
    ...COMMAND_HANDLERS,
  ],
  exports: [...COMMAND_HANDLERS, ConversationRepository, ConversationSignals, TurnScheduler],
})
export class ConversationModule {}
