import { ConfigError, loadConfig } from './config';

describe('loadConfig', () => {
  it('applies the defaults when nothing is set', () => {
    const config = loadConfig({});
    expect(config.http.port).toBe(3000);
    expect(config.database.url).toBeNull();
    expect(config.nats.url).toBeNull();
    expect(config.turn.maxToolSteps).toBe(10);
    expect(config.prefix).toBe('parley');
  });

  it('parses typed values from strings', () => {
    const config = loadConfig({
      PORT: '8080',
      DATABASE_URL: 'postgres://u@db:5432/parley',
      ENABLE_JSON_MODE: 'false',
      MAX_PROMPT_TOKENS: '4000',
      TOOL_HTTP_ALLOWED_HOSTS: 'api.example.com, tools.internal',
    });
    expect(config.http.port).toBe(8080);
    expect(config.database.url).toBe('postgres://u@db:5432/parley');
    expect(config.llm.enableJsonMode).toBe(false);
    expect(config.turn.maxPromptTokens).toBe(4000);
    expect(config.tools.httpAllowedHosts).toEqual(['api.example.com', 'tools.internal']);
  });

  it('names every malformed variable and what it expects', () => {
    let error: unknown;
    try {
      loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x', ENABLE_JSON_MODE: 'maybe' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const { problems } = error as ConfigError;
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^PORT: expected a whole number \(got "eighty"\)/),
        expect.stringMatching(/^DATABASE_URL: expected a URL starting with postgres:\/\/ or postgresql:\/\//),
        expect.stringMatching(/^ENABLE_JSON_MODE: expected true or false/),
      ]),
    );
  });

  it('never echoes a secret it refuses', () => {
    expect(() => loadConfig({ PARLEY_ENCRYPTION_KEY: 'hunter2-not-a-key' })).toThrow(
      /PARLEY_ENCRYPTION_KEY: expected a 256-bit key.*\(got "\*\*\*"\)/,
    );
  });

  it('requires an encryption key in production', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/PARLEY_ENCRYPTION_KEY: required in production/);
  });

  it('treats empty strings as unset', () => {
    expect(loadConfig({ NATS_URL: '  ', PORT: '' }).nats.url).toBeNull();
  });
});
