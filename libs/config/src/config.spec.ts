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

  it('chunks documents by 512 tokens with 50 of overlap unless told, and refuses an overlap as large as the chunk', () => {
    expect(loadConfig({}).ingestion).toEqual({
      chunkTokens: 512,
      chunkOverlap: 50,
      maxBytes: 10_485_760,
      batchSize: 256,
    });
    expect(loadConfig({ CHUNK_TOKENS: '64', CHUNK_OVERLAP: '8' }).ingestion).toMatchObject({
      chunkTokens: 64,
      chunkOverlap: 8,
    });
    expect(() => loadConfig({ CHUNK_TOKENS: '64', CHUNK_OVERLAP: '64' })).toThrow(
      /CHUNK_OVERLAP: expected fewer tokens than CHUNK_TOKENS \(64\), got 64/,
    );
  });

  it('treats empty strings as unset', () => {
    expect(loadConfig({ NATS_URL: '  ', PORT: '' }).nats.url).toBeNull();
  });
});

describe('loadConfig: security settings', () => {
  const KEY = 'a'.repeat(64);
  const JWT = { JWT_SECRET: 's'.repeat(32), JWT_ISSUER: 'https://idp.test', JWT_AUDIENCE: 'parley' };

  it('refuses to run production without authentication', () => {
    expect(() =>
      loadConfig({ NODE_ENV: 'production', PARLEY_ENCRYPTION_KEY: KEY, PARLEY_AUTH_ENABLED: 'false' }),
    ).toThrow(/PARLEY_AUTH_ENABLED: false is refused in production/);
    expect(loadConfig({ NODE_ENV: 'development', PARLEY_AUTH_ENABLED: 'false' }).security.authEnabled).toBe(false);
  });

  it('requires an issuer and an audience as soon as JWTs are accepted', () => {
    expect(() => loadConfig({ JWT_SECRET: 's'.repeat(32) })).toThrow(
      /JWT_ISSUER: required[\s\S]*JWT_AUDIENCE: required/,
    );
    expect(loadConfig(JWT).security.jwt).toMatchObject({
      issuer: 'https://idp.test',
      audience: 'parley',
      maxAgeSeconds: 3600,
      rolesClaim: 'https://parley.dev/roles',
    });
  });

  it('fetches JWKS over https only, or http from this host outside production', () => {
    const jwks =
      (url: string, env = 'development') =>
      () =>
        loadConfig({ ...JWT, JWT_SECRET: undefined, JWT_JWKS_URL: url, NODE_ENV: env, PARLEY_ENCRYPTION_KEY: KEY });
    expect(jwks('https://idp.example.com/jwks.json')).not.toThrow();
    expect(jwks('http://127.0.0.1:8080/jwks.json')).not.toThrow();
    expect(jwks('http://localhost/jwks.json', 'test')).not.toThrow();
    expect(jwks('http://idp.example.com/jwks.json')).toThrow(/JWT_JWKS_URL: expected https:\/\//);
    expect(jwks('http://127.0.0.1:8080/jwks.json', 'production')).toThrow(/JWT_JWKS_URL: expected https:\/\//);
  });
});
