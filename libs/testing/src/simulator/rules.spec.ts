import { Script, currentToolResults, lastUserMessage, matches } from './rules';
import type { SimChatRequest } from './simulator.types';

const chat = (...messages: SimChatRequest['messages']): SimChatRequest => ({ model: 'sim-chat', messages });
const user = (content: string) => ({ role: 'user', content });

const afterToolCall: SimChatRequest = chat(
  user('where is order 7?'),
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'c1', function: { name: 'get_order_status', arguments: '{}' } }],
  },
  { role: 'tool', tool_call_id: 'c1', content: 'shipped' },
);

describe('simulator rules', () => {
  it('reads the text protocol’s result and error messages as tool results, not as what the user said', () => {
    const request = chat(
      user('where is order 7?'),
      { role: 'assistant', content: '{"tool_name":"lookup","arguments":{}}' },
      user('{"tool_error":"bad","tool_name":"lookup"}'),
      { role: 'assistant', content: '{"tool_name":"lookup","arguments":{"id":7}}' },
      user('{"tool_result":"shipped","tool_name":"lookup"}'),
    );
    expect(lastUserMessage(request)).toBe('where is order 7?');
    expect(currentToolResults(request)).toEqual([
      { id: '', name: 'lookup', content: 'bad' },
      { id: '', name: 'lookup', content: 'shipped' },
    ]);
    expect(matches({ toolResult: { name: 'lookup' } }, request, 1)).toBe(true);
  });

  it('matches the last user message by regex or substring', () => {
    const request = chat(user('about my ticket'), { role: 'assistant', content: 'ok' }, user('and my ORDER 12'));
    expect(matches({ lastUserMessage: /order \d+/i }, request, 1)).toBe(true);
    expect(matches({ lastUserMessage: 'ticket' }, request, 1)).toBe(false);
  });

  it('reads the text parts of a multi-part user message', () => {
    const request = chat({
      role: 'user',
      content: [
        { type: 'text', text: 'order ' },
        { type: 'text', text: '9' },
      ],
    });
    expect(matches({ lastUserMessage: /order 9/ }, request, 1)).toBe(true);
  });

  it('matches a tool result of the current turn by tool name or call id', () => {
    expect(currentToolResults(afterToolCall)).toEqual([{ id: 'c1', name: 'get_order_status', content: 'shipped' }]);
    expect(matches({ toolResult: { name: 'get_order_status' } }, afterToolCall, 1)).toBe(true);
    expect(matches({ toolResult: { id: 'c1' } }, afterToolCall, 1)).toBe(true);
    expect(matches({ toolResult: { name: 'other' } }, afterToolCall, 1)).toBe(false);
    expect(matches({ noToolResult: true }, afterToolCall, 1)).toBe(false);
  });

  it('ignores tool results of earlier turns', () => {
    const nextTurn = chat(...afterToolCall.messages, { role: 'assistant', content: 'It shipped.' }, user('thanks'));
    expect(matches({ toolResult: { name: 'get_order_status' } }, nextTurn, 1)).toBe(false);
    expect(matches({ noToolResult: true }, nextTurn, 1)).toBe(true);
  });

  it('matches on model, call count and a predicate', () => {
    const request = chat(user('hi'));
    expect(matches({ model: /^sim-/, callCount: 2 }, request, 2)).toBe(true);
    expect(matches({ callCount: (n) => n > 3 }, request, 2)).toBe(false);
    expect(matches({ predicate: (r) => r.messages.length === 2 }, request, 1)).toBe(false);
  });

  it('answers with the first matching rule and retires a rule after its times', () => {
    const script = new Script();
    script.replace([
      { name: 'flaky', reply: { fail: { status: 503 } }, times: 2 },
      { name: 'ok', reply: { text: 'fine' } },
    ]);
    const rules = [1, 2, 3].map((n) => script.reply(chat(user('hi')), n).rule);
    expect(rules).toEqual(['flaky', 'flaky', 'ok']);
  });

  it('echoes the last user message when no rule matches', () => {
    const script = new Script();
    script.replace([{ when: { lastUserMessage: 'never' }, reply: { text: 'no' } }]);
    expect(script.reply(chat(user('ping')), 1)).toEqual({ reply: { text: 'You said: ping' }, rule: null });
  });

  it('builds a reply from the request when the rule gives a function', () => {
    const script = new Script();
    script.replace([{ reply: (request, { callCount }) => ({ text: `${request.model} #${callCount}` }) }]);
    expect(script.reply(chat(user('x')), 4).reply).toEqual({ text: 'sim-chat #4' });
  });
});
