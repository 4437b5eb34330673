import { Injectable } from '@nestjs/common';
import { EventEmitter } from 'node:events';
import type { Appended } from './conversation.repository';

/** What this process just appended to a conversation (the event types), and the state it folded to. */
export interface AppendedSignal extends Appended {
  types: readonly string[];
}

/**
 * In-process notifications about conversations: a stream was appended to (wakes waiters), or
 * a running turn must stop now (kill). Other processes notice the same through the store.
 */
@Injectable()
export class ConversationSignals {
  private readonly emitter = new EventEmitter().setMaxListeners(0);

  appended(conversationId: string, signal: AppendedSignal): void {
    this.emitter.emit(`appended:${conversationId}`, signal);
  }

  onAppended(conversationId: string, listener: (signal: AppendedSignal) => void): () => void {
    this.emitter.on(`appended:${conversationId}`, listener);
    return () => this.emitter.off(`appended:${conversationId}`, listener);
  }

  abort(conversationId: string): void {
    this.emitter.emit(`abort:${conversationId}`);
  }

  onAbort(conversationId: string, listener: () => void): () => void {
    this.emitter.on(`abort:${conversationId}`, listener);
    return () => this.emitter.off(`abort:${conversationId}`, listener);
  }
}
