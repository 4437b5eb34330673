import { Controller, Inject, Injectable } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import type { JetStreamContext } from './jetstream-events.strategy';

/** An integration event as Parley publishes it (docs/api.md, "Integration events"). */
export interface ParleyEvent {
  streamId: string;
  revision: number;
  position: string;
  eventId: string;
  type: string;
  schemaVersion: number;
  data: Record<string, unknown> | null;
  metadata: Record<string, unknown>;
  createdAt: string;
}

/** Stands for the service's own work: here it keeps the last replies it heard of. */
@Injectable()
export class Outbox {
  static readonly LIMIT = 100;
  readonly replies: { conversationId: string; text: string; eventId: string }[] = [];
  readonly started: string[] = [];

  reply(conversationId: string, text: string, eventId: string): void {
    // An event may come twice (at-least-once): its eventId tells.
    if (this.replies.some((r) => r.eventId === eventId)) return;
    this.replies.push({ conversationId, text, eventId });
    if (this.replies.length > Outbox.LIMIT) this.replies.shift();
  }

  start(conversationId: string): void {
    if (!this.started.includes(conversationId)) this.started.push(conversationId);
    if (this.started.length > Outbox.LIMIT) this.started.shift();
  }
}

/** `@EventPattern` handlers on Parley's integration events; the pattern is the subject after the prefix. */
@Controller()
export class ConversationEventsController {
  constructor(@Inject(Outbox) private readonly outbox: Outbox) {}

  @EventPattern('evt.ConversationStarted.*')
  onStarted(@Payload() event: ParleyEvent): void {
    this.outbox.start(event.streamId.replace(/^conversation-/, ''));
  }

  @EventPattern('evt.MessageRecorded.*')
  onMessage(@Payload() event: ParleyEvent, @Ctx() ctx: JetStreamContext): void {
    const conversationId = ctx.message.subject.split('.').at(-1)!;
    const data = event.data as { role?: string; content?: string } | null;
    // AS: the assistant's message (US is the user's).

    if (data?.role === 'AS' && typeof data.content === 'string')
      this.outbox.reply(conversationId, data.content, event.eventId);
  }
}
