import { assertMessageWithinLimits, assertPayloadWithinLimit } from './request-limits';

const limits = { maxMessageChars: 10, maxAttachments: 1 };
const codeOf = (fn: () => void) => {
  try {
    fn();
    return null;
  } catch (err) {
    return (err as { code: string }).code;
  }
};

describe('request limits', () => {
  it('accepts a message at the limits and refuses one over them with PAYLOAD_TOO_LARGE', () => {
    expect(codeOf(() => assertMessageWithinLimits(limits, { content: 'x'.repeat(10), attachments: [{}] }))).toBeNull();
    expect(codeOf(() => assertMessageWithinLimits(limits, { content: 'x'.repeat(11) }))).toBe('PAYLOAD_TOO_LARGE');
    expect(codeOf(() => assertMessageWithinLimits(limits, { content: 'hi', attachments: [{}, {}] }))).toBe(
      'PAYLOAD_TOO_LARGE',
    );
  });

  it('refuses a NATS payload over its byte limit', () => {
    expect(codeOf(() => assertPayloadWithinLimit(1024, 1024))).toBeNull();
    expect(codeOf(() => assertPayloadWithinLimit(1025, 1024))).toBe('PAYLOAD_TOO_LARGE');
  });
});
