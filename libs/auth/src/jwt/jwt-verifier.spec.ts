import { execFile } from 'node:child_process';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = join(__dirname, '../../../..');
const SECRET = 'a-shared-secret-of-at-least-32-characters!';
const ISS = 'https://idp.test';
const ROLES = 'https://parley.dev/roles';

/** What the child process signs with jose: an HS secret, or an RSA private JWK under a kid. */
type Signing = { claims: object; secret?: string; jwk?: object; kid?: string };

// jose is ESM-only and Jest cannot load it, so the tokens are signed and verified in a plain Node
// process, as in production. It prints, per token, the principal or the error code.
const VERIFY = `
const { JwtVerifier } = require('./libs/auth/src/jwt/jwt-verifier.ts');
(async () => {
  const jose = await import('jose');
  const { options, tokens } = JSON.parse(process.argv[1]);
  const verifier = new JwtVerifier(options);
  const out = [];
  for (const t of tokens) {
    const token = t.secret
      ? await new jose.SignJWT(t.claims).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(t.secret))
      : await new jose.SignJWT(t.claims).setProtectedHeader({ alg: 'RS256', kid: t.kid }).sign(await jose.importJWK(t.jwk, 'RS256'));
    try { out.push(await verifier.verify(token)); } catch (err) { out.push({ error: err.code, message: err.message }); }
  }
  process.stdout.write(JSON.stringify(out));
})().catch((err) => { process.stderr.write(String(err && err.stack || err)); process.exit(1); });
`;

type Result = { subject?: string; roles?: string[]; error?: string; message?: string };

async function verify(options: object, tokens: Signing[]): Promise<Result[]> {
  const input = JSON.stringify({ options, tokens });
  const { stdout } = await run(process.execPath, ['-r', './tools/register.js', '-e', VERIFY, input], {
    cwd: ROOT,
    timeout: 25_000,
  });
  return JSON.parse(stdout) as Result[];
}

const now = () => Math.floor(Date.now() / 1000);
const hs256 = (claims: object, secret = SECRET): Signing => ({ claims, secret });
const rs256 = (claims: object, key: KeyObject, kid: string): Signing => ({
  claims,
  jwk: key.export({ format: 'jwk' }),
  kid,
});

describe('JwtVerifier', () => {
  const base = { secret: null, jwksUrl: null, issuer: ISS, audience: 'parley', maxAgeSeconds: 3600, rolesClaim: ROLES };
  const valid = () => ({ sub: 'svc-a', iss: ISS, aud: 'parley', iat: now(), exp: now() + 60 });

  it('accepts HS256 tokens signed with the secret, namespaces sub and reads the roles claim', async () => {
    const claims = { ...valid(), [ROLES]: ['client', 'bogus'] };
    const [ok, wrongSecret, expired, noSub] = await verify({ ...base, secret: SECRET }, [
      hs256(claims),
      hs256(claims, 'another-secret-another-secret-another'),
      hs256({ ...claims, exp: now() - 60 }),
      hs256({ ...claims, sub: undefined }),
    ]);
    expect(ok).toEqual({ subject: `jwt:${ISS}#svc-a`, roles: ['client'] });
    expect(wrongSecret.error).toBe('UNAUTHENTICATED');
    expect(expired).toMatchObject({ error: 'UNAUTHENTICATED', message: expect.stringContaining('ERR_JWT_EXPIRED') });
    expect(noSub.error).toBe('UNAUTHENTICATED');
  }, 30_000);

  it('refuses tokens without iss, aud or exp, and tokens that live longer than the maximum age', async () => {
    const { iss: _iss, ...noIss } = valid();
    const { aud: _aud, ...noAud } = valid();
    const { exp: _exp, ...noExp } = valid();
    const results = await verify({ ...base, secret: SECRET }, [
      hs256(noIss),
      hs256(noAud),
      hs256(noExp),
      hs256({ ...valid(), exp: now() + 7200 }),
      hs256({ ...valid(), iat: undefined, exp: now() + 7200 }),
    ]);
    expect(results.map((r) => r.error)).toEqual(Array(5).fill('UNAUTHENTICATED'));
    expect(results[3].message).toMatch(/lives longer than 3600 s/);
  }, 30_000);

  it('ignores a bare roles claim: only the configured, namespaced claim grants roles', async () => {
    const [bare, custom] = await verify({ ...base, secret: SECRET, rolesClaim: 'https://idp.test/parley' }, [
      hs256({ ...valid(), roles: ['admin'] }),
      hs256({ ...valid(), 'https://idp.test/parley': ['auditor'] }),
    ]);
    expect(bare).toEqual({ subject: `jwt:${ISS}#svc-a`, roles: [] });
    expect(custom.roles).toEqual(['auditor']);
  }, 30_000);

  describe('with a JWKS', () => {
    let server: Server;
    let jwksUrl: string;
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;

    beforeAll(async () => {
      const jwk = { ...publicKey.export({ format: 'jwk' }), kid: 'k1', alg: 'RS256', use: 'sig' };
      server = createServer((_req, res) => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ keys: [jwk] }));
      }).listen(0, '127.0.0.1');
      await once(server, 'listening');
      jwksUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}/.well-known/jwks.json`;
    });

    afterAll(async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    });

    it('accepts RS256 tokens of the issuer’s keys and checks issuer and audience', async () => {
      const claims = { ...valid(), sub: 'alice', [ROLES]: ['auditor'] };
      const options = { ...base, jwksUrl };
      const [ok, foreignKey, wrongAudience, wrongIssuer, hsWithoutSecret] = await verify(options, [
        rs256(claims, privateKey, 'k1'),
        rs256(claims, stranger, 'k1'),
        rs256({ ...claims, aud: 'someone-else' }, privateKey, 'k1'),
        rs256({ ...claims, iss: 'https://evil.test' }, privateKey, 'k1'),
        hs256(claims),
      ]);
      expect(ok).toEqual({ subject: `jwt:${ISS}#alice`, roles: ['auditor'] });
      expect(foreignKey.error).toBe('UNAUTHENTICATED');
      expect(wrongAudience.error).toBe('UNAUTHENTICATED');
      expect(wrongIssuer.error).toBe('UNAUTHENTICATED');
      expect(hsWithoutSecret.error).toBe('UNAUTHENTICATED');
    }, 30_000);
  });
});
