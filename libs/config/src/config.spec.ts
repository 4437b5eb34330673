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

  it('takes one complete way to authenticate to NATS, and a client certificate with its key', () => {
    expect(loadConfig({ NATS_URL: 'nats://n:4222', NATS_USER: 'parley', NATS_PASSWORD: 'pw' }).nats).toMatchObject({
      user: 'parley',
      password: 'pw',
    });
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig(env);
        return [];
      } catch (err) {
        return (err as ConfigError).problems;
      }
    };
    expect(problems({ NATS_URL: 'nats://u:p@n:4222', NATS_CREDS: '/run/parley.creds' })).toEqual([
      'NATS_USER: set one way to authenticate to NATS, not user:password in NATS_URL and NATS_CREDS',
    ]);
    expect(problems({ NATS_USER: 'parley' })).toEqual(['NATS_PASSWORD: required with NATS_USER (it is not set)']);
    expect(problems({ NATS_TLS_CERT: '/run/cert.pem' })).toEqual([
      'NATS_TLS_KEY: NATS_TLS_CERT and NATS_TLS_KEY go together (one is not set)',
    ]);
    expect(problems({ NATS_NKEY_SEED: 'SUnot-a-seed' })).toEqual([
      'NATS_NKEY_SEED: expected an NKey user seed (SU…, 58 characters) (got "***")',
    ]);
  });

  it('treats empty strings as unset', () => {
    expect(loadConfig({ NATS_URL: '  ', PORT: '' }).nats.url).toBeNull();
  });
});
