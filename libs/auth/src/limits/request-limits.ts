import { DomainError } from '@parley/core';

export interface MessageLimits {
  maxMessageChars: number;
  maxAttachments: number;
}

/** PAYLOAD_TOO_LARGE when a message is longer than MAX_MESSAGE_CHARS or has more than MAX_ATTACHMENTS. */
export function assertMessageWithinLimits(
  limits: MessageLimits,
  message: { content: string; attachments?: readonly unknown[] },
): void {
  if (message.content.length > limits.maxMessageChars)
    throw new DomainError('PAYLOAD_TOO_LARGE', `The message is over ${limits.maxMessageChars} characters.`, {
      field: 'content',
      limit: limits.maxMessageChars,
      actual: message.content.length,
    });
  const attachments = message.attachments?.length ?? 0;
  if (attachments > limits.maxAttachments)
    throw new DomainError('PAYLOAD_TOO_LARGE', `A message may carry at most ${limits.maxAttachments} attachments.`, {
      field: 'attachments',
      limit: limits.maxAttachments,
      actual: attachments,
    });
}

/** PAYLOAD_TOO_LARGE for a NATS request over NATS_MAX_PAYLOAD_BYTES (HTTP bodies are capped by the server). */
export function assertPayloadWithinLimit(bytes: number, maxBytes: number): void {
  if (bytes > maxBytes)
    throw new DomainError('PAYLOAD_TOO_LARGE', `The request is over ${maxBytes} bytes.`, {
      limit: maxBytes,
      actual: bytes,
    });
}
