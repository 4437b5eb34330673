import type { LlmMessage, LlmToolSpec } from '../llm.port';
import { textProtocolMessages, toolInstructions, toolProtocolFor } from './tool-instructions';

const LOOKUP: LlmToolSpec = {
  name: 'lookup',
  description: 'Looks a word up.',
  parameters: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] },
};

describe('the tool-instructions block', () => {
  it('lists each tool with its argument schema and the call form', () => {
    expect(toolInstructions([LOOKUP], 'text')).toBe(
      [
        'You may use the following tools:',
        '- lookup: Looks a word up. Arguments (JSON Schema): {"type":"object","properties":{"word":{"type":"string"}},"required":["word"]}',
        'Return tool calls in JSON format:',
        '{"tool_name": "...", "arguments": {...}}',
        'Call one tool per reply, and write nothing else in that reply. Its result comes back as {"tool_result": "...", "tool_name": "..."}, a failure as {"tool_error": "...", "tool_name": "..."}.',
        'When you need no tool, answer in plain text.',
      ].join('\n'),
    );
    expect(toolInstructions([LOOKUP], 'answer_object')).toMatch(/answer in JSON format: \{"answer": "\.\.\."\}$/);
  });

  it('picks the protocol from the model’s capabilities', () => {
    expect(toolProtocolFor(['FC', 'JM'])).toEqual({ kind: 'api' });
    expect(toolProtocolFor(['JM'])).toEqual({ kind: 'text', jsonMode: true });
    expect(toolProtocolFor([])).toEqual({ kind: 'text', jsonMode: false });
  });
});

describe('textProtocolMessages', () => {
  const history: LlmMessage[] = [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'What is an ox?' },
    { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{"word":"ox"}' }] },
    { role: 'tool', toolCallId: 'c1', content: 'Error (INVALID_ARGUMENTS): word: too short' },
    { role: 'assistant', content: 'Again.', toolCalls: [{ id: 'c2', name: 'lookup', arguments: '{"word":"oxen"' }] },
    { role: 'tool', toolCallId: 'c2', content: 'A bovine.' },
  ];

  it('appends the block to the system prompt, writes calls as JSON text and results as the seed’s objects', () => {
    expect(textProtocolMessages(history, [LOOKUP], 'text')).toEqual([
      { role: 'system', content: `Be brief.\n\n${toolInstructions([LOOKUP], 'text')}` },
      { role: 'user', content: 'What is an ox?' },
      { role: 'assistant', content: '{"tool_name":"lookup","arguments":{"word":"ox"}}' },
      { role: 'user', content: '{"tool_error":"word: too short","tool_name":"lookup"}' },
      { role: 'assistant', content: 'Again.\n{"tool_name":"lookup","arguments":"{\\"word\\":\\"oxen\\""}' },
      { role: 'user', content: '{"tool_result":"A bovine.","tool_name":"lookup"}' },
    ]);
  });

  it('adds a system message for the block when there is none, and no block without tools', () => {
    expect(textProtocolMessages(history.slice(1, 2), [LOOKUP], 'text')[0]).toEqual({
      role: 'system',
      content: toolInstructions([LOOKUP], 'text'),
    });
    expect(textProtocolMessages(history.slice(0, 2), [], 'text')).toEqual(history.slice(0, 2));
  });
});
