import { json, RecordingHttpServer } from '../testing/recording-http-server';
import { HostAllowList } from './host-allow-list';
import { OAuthTokenCache, type BearerConfig } from './oauth-token-cache';

describe('OAuthTokenCache against a real token endpoint', () => {
  let server: RecordingHttpServer;
  let elsewhere: RecordingHttpServer;
  let issued = 0;
  let now = 0;
  let cache: OAuthTokenCache;
  const signal = new AbortController().signal;

  beforeAll(async () => {
    server = await new RecordingHttpServer()
      .route('/token', (_req, res) => json(res, 200, { access_token: `tok-${++issued}`, expires_in: 60 }))
      .route('/token-with-refresh', (_req, res) =>
        json(res, 200, { access_token: `tok-${++issued}`, expires_in: 60, refresh_token: `ref-${issued}` }),
      )
      .route('/refresh', (req, res) =>
        json(res, 200, {
          access_token: `refreshed-from-${new URLSearchParams(req.body).get('refresh_token')}`,
          expires_in: 60,
        }),
      )
      .route('/denied', (_req, res) => json(res, 401, { error: 'invalid_client' }))
      .route('/moved', (_req, res) => res.writeHead(307, { location: elsewhere.url('/token') }).end())
      .start();
    elsewhere = await new RecordingHttpServer().route('/token', (_req, res) => json(res, 200, {})).start();
  });

  afterAll(async () => {
    await server.stop();
    await elsewhere.stop();
  });

  beforeEach(() => {
    server.requests.length = 0;
    issued = 0;
    now = 1_000_000;
    cache = new OAuthTokenCache(
      new HostAllowList([`127.0.0.1:${server.port}`, `127.0.0.1:${elsewhere.port}`]),
      () => now,
    );
  });

  const clientCredentials = (path: string, extra: Partial<BearerConfig> = {}): BearerConfig =>
    ({
      clientType: 'client_credentials',
      clientId: 'app',
      clientSecret: 'shh',
      tokenUrl: server.url(path),
      ...extra,
    }) as BearerConfig;

  it('keeps a token until shortly before it expires, then fetches a new one', async () => {
    const bearer = clientCredentials('/token');
    expect(await cache.accessToken(bearer, signal)).toBe('tok-1');
    now += 50_000;
    expect(await cache.accessToken(bearer, signal)).toBe('tok-1');
    now += 5_000; // 55 s of a 60 s token: inside the renewal margin
    expect(await cache.accessToken(bearer, signal)).toBe('tok-2');
    expect(server.requestsTo('/token')).toHaveLength(2);
  });

  it('refreshes an expired token with its refresh token at the refresh URL', async () => {
    const bearer = clientCredentials('/token-with-refresh', { refreshUrl: server.url('/refresh') });
    expect(await cache.accessToken(bearer, signal)).toBe('tok-1');
    now += 120_000;
    expect(await cache.accessToken(bearer, signal)).toBe('refreshed-from-ref-1');
    expect(Object.fromEntries(new URLSearchParams(server.requestsTo('/refresh')[0].body))).toMatchObject({
      grant_type: 'refresh_token',
      refresh_token: 'ref-1',
      client_id: 'app',
    });
  });

  it('shares one token request among concurrent callers', async () => {
    const bearer = clientCredentials('/token');
    const tokens = await Promise.all([1, 2, 3].map(() => cache.accessToken(bearer, signal)));
    expect(tokens).toEqual(['tok-1', 'tok-1', 'tok-1']);
    expect(server.requestsTo('/token')).toHaveLength(1);
  });

  it('keeps tokens of different users apart', async () => {
    const user = (username: string) =>
      ({ clientType: 'password', username, password: 'pw', tokenUrl: server.url('/token') }) as BearerConfig;
    expect(await cache.accessToken(user('ana'), signal)).toBe('tok-1');
    expect(await cache.accessToken(user('bo'), signal)).toBe('tok-2');
    expect(await cache.accessToken(user('ana'), signal)).toBe('tok-1');
  });

  it('keeps tokens of different audiences and secrets apart', async () => {
    expect(await cache.accessToken(clientCredentials('/token', { audience: 'billing' }), signal)).toBe('tok-1');
    expect(await cache.accessToken(clientCredentials('/token', { audience: 'calendar' }), signal)).toBe('tok-2');
    expect(
      await cache.accessToken(clientCredentials('/token', { audience: 'billing', clientSecret: 'other' }), signal),
    ).toBe('tok-3');
    expect(await cache.accessToken(clientCredentials('/token', { audience: 'billing' }), signal)).toBe('tok-1');
    expect(server.requestsTo('/token')).toHaveLength(3);
  });

  it('never sends the client secret on to another origin a token endpoint redirects to', async () => {
    await expect(cache.accessToken(clientCredentials('/moved'), signal)).rejects.toMatchObject({ code: 'NOT_ALLOWED' });
    expect(elsewhere.requests).toHaveLength(0);
  });

  it('reports a refusing token endpoint as UNAVAILABLE', async () => {
    await expect(cache.accessToken(clientCredentials('/denied'), signal)).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: `The token endpoint 127.0.0.1:${server.port} answered HTTP 401.`,
    });
  });
});
