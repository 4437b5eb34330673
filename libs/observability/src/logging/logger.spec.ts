import { Writable } from 'node:stream';
import { runWithContext } from '../context/request-context';
import { createLogger } from './logger';
import { NestPinoLogger } from './nest-logger';
import { maskSecrets, registerSecrets, SecretMasker } from './secret-masker';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  return { stream, lines, text: () => lines.join('') };
}

describe('logger', () => {
  const providerKey = 'sk-live-7f3a9c1b2d4e5f60';
  const toolPassword = 'hunter2-"quoted"\\slash';

  it('never prints a secret, whether under a secret field name or only known by value', () => {
    const out = capture();
    const masker = new SecretMasker();
    masker.add(providerKey);
    masker.add(toolPassword);
    const logger = createLogger({ level: 'trace', masker }, out.stream);

    logger.info({ provider: { apiKey: providerKey }, headers: { authorization: `Bearer ${providerKey}` } }, 'fields');
    logger.info({ request: { body: `{"key":"${providerKey}"}` } }, 'a body that quotes the key');
    logger.warn(`calling the model with ${providerKey}`);
    logger.error({ err: new Error(`tool failed with password ${toolPassword}`) }, 'tool error');
    logger.debug({ tool: { config: { login: 'bot', note: toolPassword } } }, 'nested value');

    const text = out.text();
    expect(out.lines).toHaveLength(5);
    expect(text).not.toContain(providerKey);
    expect(text).not.toContain('hunter2');
    expect(text).toContain('[REDACTED]');
    for (const line of out.lines) expect(() => JSON.parse(line)).not.toThrow();
  });

  it('censors secret field names at any of four levels and in errors, without touching the logged object', () => {
    const out = capture();
    const logger = createLogger({ level: 'info', masker: new SecretMasker() }, out.stream).child({
      token: 'tok-child',
    });
    const logged = { a: { b: { headers: { authorization: 'Bearer unregistered-1' } } }, list: [{ password: 'pw-2' }] };
    const err = Object.assign(new Error('call failed'), {
      config: { headers: { authorization: 'Bearer unregistered-3' } },
    });

    logger.info(logged, 'nested');
    logger.error({ err }, 'an error with its request');
    logger.info({ plain: 'nothing secret', count: 3 }, 'plain');

    expect(out.text()).not.toMatch(/unregistered|pw-2/);
    expect(JSON.parse(out.lines[0]).a.b.headers.authorization).toBe('[REDACTED]');
    expect(JSON.parse(out.lines[0]).list[0].password).toBe('[REDACTED]');
    expect(JSON.parse(out.lines[1]).err.config.headers.authorization).toBe('[REDACTED]');
    expect(JSON.parse(out.lines[2])).toMatchObject({ plain: 'nothing secret', count: 3 });
    // The caller's objects are as they were.
    expect(logged.a.b.headers.authorization).toBe('Bearer unregistered-1');
    expect(err.config.headers.authorization).toBe('Bearer unregistered-3');
  });

  it('masks every string of a registered secret object in log lines and in foreign text', () => {
    const out = capture();
    const logger = createLogger({ level: 'info' }, out.stream);
    registerSecrets({ apiKey: 'sk-nested-0a1b2c3d', headers: { 'x-token': 'tok-9f8e7d6c' }, list: ['pw-5544332211'] });

    logger.info(`keys sk-nested-0a1b2c3d tok-9f8e7d6c pw-5544332211`);

    expect(out.text()).not.toMatch(/sk-nested|tok-9f8e|pw-5544/);
    expect(maskSecrets('401 Incorrect API key provided: sk-nested-0a1b2c3d.')).toBe(
      '401 Incorrect API key provided: [REDACTED].',
    );
  });

  it('stamps the trace id of the current request context on every line', () => {
    const out = capture();
    const logger = createLogger({ level: 'info', masker: new SecretMasker() }, out.stream);

    runWithContext({ traceId: 'abc-def-123' }, () => logger.info({ model_name: 'sim-chat', tool_steps: 2 }, 'turn'));
    logger.info('outside');

    const [inside, outside] = out.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(inside).toMatchObject({ trace_id: 'abc-def-123', model_name: 'sim-chat', tool_steps: 2, level: 'info' });
    expect(outside.trace_id).toBeUndefined();
  });

  it('writes Nest framework messages as JSON lines with their context', () => {
    const out = capture();
    const nest = new NestPinoLogger(createLogger({ level: 'info', masker: new SecretMasker() }, out.stream));

    nest.log('Mapped {/health, GET} route', 'RouterExplorer');
    nest.error('boom', 'Error: boom\n    at x', 'ExceptionsHandler');

    const [info, error] = out.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(info).toMatchObject({ level: 'info', context: 'RouterExplorer', msg: 'Mapped {/health, GET} route' });
    expect(error).toMatchObject({ level: 'error', context: 'ExceptionsHandler', msg: 'boom' });
    expect(String(error.stack)).toContain('at x');
  });
});
