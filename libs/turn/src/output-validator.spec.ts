import { MAX_COMPILED_OUTPUT_SCHEMAS, OutputValidator } from './output-validator';

const TICKET = {
  code: 'TICKET',
  jsonSchema: {
    type: 'object',
    properties: { email: { type: 'string', format: 'email' }, n: { type: 'integer' } },
    required: ['email', 'n'],
    additionalProperties: false,
  },
  unwrap: null,
};

describe('OutputValidator', () => {
  const validator = new OutputValidator();

  it('parses a valid reply, a fenced JSON block too', () => {
    expect(validator.check('{"email":"a@b.io","n":1}', TICKET)).toEqual({
      valid: true,
      output: { email: 'a@b.io', n: 1 },
    });
    expect(validator.check('```json\n{"email":"a@b.io","n":2}\n```', TICKET)).toEqual({
      valid: true,
      output: { email: 'a@b.io', n: 2 },
    });
  });

  it('names each problem with its JSON pointer, formats included', () => {
    const check = validator.check('{"email":"nope","extra":true}', TICKET);
    expect(check.valid).toBe(false);
    expect(!check.valid && check.errors).toEqual(
      expect.arrayContaining([
        { path: '/n', message: 'is required' },
        { path: '/extra', message: 'is not allowed' },
        { path: '/email', message: 'must match format "email"' },
      ]),
    );
  });

  it('reports a reply that is not JSON at the root', () => {
    const check = validator.check('Sure, here it is', TICKET);
    expect(check).toMatchObject({
      valid: false,
      errors: [{ path: '', message: expect.stringMatching(/not valid JSON/) }],
    });
    expect(validator.check(null, TICKET).valid).toBe(false);
  });

  it('unwraps a list from the response format wrapper', () => {
    const list = {
      code: 'ITEMS',
      jsonSchema: {
        type: 'object',
        properties: { items: { type: 'array', items: { type: 'integer' } } },
        required: ['items'],
      },
      unwrap: 'items',
    };
    expect(validator.check('{"items":[1,2]}', list)).toEqual({ valid: true, output: [1, 2] });
  });

  it('keeps at most MAX_COMPILED_OUTPUT_SCHEMAS compiled schemas', () => {
    const bounded = new OutputValidator();
    for (let i = 0; i < MAX_COMPILED_OUTPUT_SCHEMAS + 5; i++) {
      bounded.check('1', { code: 'N', jsonSchema: { type: 'integer', minimum: -i }, unwrap: null });
    }
    expect(bounded.compiledCount).toBe(MAX_COMPILED_OUTPUT_SCHEMAS);
  });
});
