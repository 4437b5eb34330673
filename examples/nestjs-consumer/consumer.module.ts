import { Module } from '@nestjs/common';
import { ConversationEventsController, Outbox } from './conversation-events.controller';

@Module({ controllers: [ConversationEventsController], providers: [Outbox] })
export class ConsumerModule {}
