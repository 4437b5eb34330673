import { transcriptEntryOf } from './transcript';

const rejected = (reason: string | null) =>
  transcriptEntryOf({
    type: 'ToolCallRejected',
    data: { turnNo: 1, sequence: 3, toolCallId: 'd', name: 'delete_order', reason },
  })?.content;

describe('transcriptEntryOf: what the model reads of a rejected tool call', () => {
  it('ends a reason typed without a full stop as a sentence before the advice', () => {
    expect(rejected('Keep it')).toBe('The user rejected this tool call: Keep it. Do not retry it unless asked.');
  });

  it('keeps the punctuation a reason has, and says so plainly without one', () => {
    expect(rejected('Why?')).toBe('The user rejected this tool call: Why? Do not retry it unless asked.');
    expect(rejected(null)).toBe('The user rejected this tool call. Do not retry it unless asked.');
  });
});
