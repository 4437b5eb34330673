import type { OutputSchema } from '@parley/core';
import { conversationDecider } from './conversation.decider';
import type { ConversationEvent } from './conversation.events';
import type { ConversationState } from './conversation.state';
import { transcriptEntryOf } from './transcript';
import type { ModelReply, OutputCheck } from './turn.commands';
import { at, fold, started } from './turn.fixtures';
import { nextTurnStep } from './turn.step';

const SCHEMA: OutputSchema = {
  code: 'TICKET',
  jsonSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
  unwrap: null,
};

const reply = (text: string): ModelReply => ({
  text,
  reasoning: '',
  toolCalls: [],
  finishReason: 'ST',
  responseModel: 'sim-chat-1',
  usage: { inputTokens: 10, outputTokens: 5, estimated: false },
  latencyMs: 3,
});

const recordReply = (state: ConversationState, text: string, outputCheck?: OutputCheck, callNo = 1) =>
  conversationDecider.decide(
    {
      type: 'RecordModelReply',
      data: { callNo, attempt: 1, reply: reply(text), ...(outputCheck ? { outputCheck } : {}) },
      meta: at(10),
    },
    state,
  );

const types = (events: ConversationEvent[]) => events.map((e) => e.type);
const INVALID: OutputCheck = { valid: false, errors: [{ path: '/n', message: 'must be integer' }] };

describe('structured output: repair or fail, from the recorded check', () => {
  const withSchema = () => started({ outputSchema: SCHEMA });

  it('completes a valid reply with its parsed output, after the check', () => {
    const events = recordReply(fold(withSchema()), '{"n":1}', { valid: true, output: { n: 1 } });
    expect(types(events)).toEqual([
      'ModelCallCompleted',
      'MessageRecorded',
      'OutputValidated',
      'ConversationCompleted',
    ]);
    expect(events[2].data).toEqual({ turnNo: 1, sequence: 2, valid: true, output: { n: 1 } });
    expect(events[3].data).toMatchObject({ reply: '{"n":1}', output: { n: 1 } });
    // The fold keeps the output on the answer (the turn reply reads it there).
    const after = fold([...withSchema(), ...events]);
    expect(after.status).toBe('CO');
    expect(after.status !== 'none' && after.transcript.at(-1)?.output).toEqual({ n: 1 });
  });

  it('gives an invalid reply one repair round: a system message with each error and its path, then another model call', () => {
    const events = recordReply(fold(withSchema()), '{"n":"x"}', INVALID);
    expect(types(events)).toEqual(['ModelCallCompleted', 'MessageRecorded', 'OutputValidated']);
    const validated = events[2];
    expect(validated.data).toMatchObject({ valid: false, errors: INVALID.errors, repair: { sequence: 3 } });
    const entry = transcriptEntryOf(validated);
    expect(entry).toMatchObject({ sequence: 3, role: 'SY', turnNo: 1 });
    expect(entry?.content).toContain('- /n: must be integer');
    const after = fold([...withSchema(), ...events]);
    expect(after.status).toBe('RU');
    expect(after.status !== 'none' && after.turn?.outputRepairs).toBe(1);
    expect(nextTurnStep(after, Date.parse(at(20).now)).kind).toBe('call_model');
  });

  it('fails the turn OUTPUT_INVALID when the repaired reply is still invalid', () => {
    const first = recordReply(fold(withSchema()), '{"n":"x"}', INVALID);
    const repaired = fold([...withSchema(), ...first]);
    const second = recordReply(
      repaired,
      'still wrong',
      { valid: false, errors: [{ path: '', message: 'is not valid JSON' }] },
      2,
    );
    expect(types(second)).toEqual(['ModelCallCompleted', 'MessageRecorded', 'OutputValidated', 'ConversationFailed']);
    expect(second[1].data).toMatchObject({ sequence: 4 });
    expect(second[2].data).not.toHaveProperty('repair');
    expect(second[3].data).toMatchObject({
      code: 'OUTPUT_INVALID',
      message: expect.stringMatching(/TICKET.*- \/: is not valid JSON/),
    });
    expect(fold([...withSchema(), ...first, ...second]).status).toBe('FA');
  });

  it('decides nothing new for a turn without a schema, or a reply the worker did not check', () => {
    expect(types(recordReply(fold(started()), 'free text', INVALID))).toEqual([
      'ModelCallCompleted',
      'MessageRecorded',
      'ConversationCompleted',
    ]);
    expect(types(recordReply(fold(withSchema()), 'free text'))).toEqual([
      'ModelCallCompleted',
      'MessageRecorded',
      'ConversationCompleted',
    ]);
  });

  it('never checks a reply that asks for tools: the turn goes on', () => {
    const state = fold(withSchema());
    const events = conversationDecider.decide(
      {
        type: 'RecordModelReply',
        data: {
          callNo: 1,
          attempt: 1,
          reply: { ...reply(''), toolCalls: [{ id: 't1', name: 'lookup', arguments: '{}' }], finishReason: 'TC' },
        },
        meta: at(10),
      },
      state,
    );
    expect(types(events)).not.toContain('OutputValidated');
  });
});
