import { execFile } from 'node:child_process';
import { createHmac, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = join(__dirname, '../../../..');
const SECRET = 'a-shared-secret-of-at-least-32-characters!';

// jose is ESM-only and Jest cannot load it, so the verifier runs in a plain Node process, as in
// production. It prints, per token, the principal or the error code.
const VERIFY = `
const { JwtVerifier } = require('./libs/auth/src/jwt/jwt-verifier.ts');
(async () => {
  const { options, tokens } = JSON.parse(process.argv[1]);
  const verifier = new JwtVerifier(options);
  const out = [];
  for (const token of tokens) {
    try { out.push(await verifier.verify(token)); } catch (err) { out.push({ error: err.code, message: err.message }); }
  }
  process.stdout.write(JSON.stringify(out));
})().catch((err) => { process.stderr.write(String(err && err.stack || err)); process.exit(1); });
`;

type Result = { subject?: string; roles?: string[]; error?: string };

async function verify(options: object, tokens: string[]): Promise<Result[]> {
  const input = JSON.stringify({ options, tokens });
  const { stdout } = await run(process.execPath, ['-r', './tools/register.js', '-e', VERIFY, input], {
    cwd: ROOT,
    timeout: 25_000,
  });
  return JSON.parse(stdout) as Result[];
}

const b64 = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');
const now = () => Math.floor(Date.now() / 1000);

function hs256(claims: object, secret = SECRET): string {
  const head = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64(claims)}`;
  return `${head}.${createHmac('sha256', secret).update(head).digest('base64url')}`;
}

function rs256(claims: object, key: KeyObject, kid: string): string {
  const head = `${b64({ alg: 'RS256', typ: 'JWT', kid })}.${b64(claims)}`;
  return `${head}.${sign('sha256', Buffer.from(head), key).toString('base64url')}`;
}

describe('JwtVerifier', () => {
  const none = { secret: null, jwksUrl: null, issuer: null, audience: null };

  it('accepts HS256 tokens signed with the secret and reads sub and roles', async () => {
    const claims = { sub: 'svc-a', roles: ['client', 'bogus'], exp: now() + 60 };
    const [ok, wrongSecret, expired, noSub] = await verify({ ...none, secret: SECRET }, [
      hs256(claims),
      hs256(claims, 'another-secret-another-secret-another'),
      hs256({ ...claims, exp: now() - 60 }),
      hs256({ roles: ['admin'], exp: now() + 60 }),
    ]);
    expect(ok).toEqual({ subject: 'svc-a', roles: ['client'] });
    expect(wrongSecret.error).toBe('UNAUTHENTICATED');
    expect(expired).toMatchObject({ error: 'UNAUTHENTICATED', message: expect.stringContaining('ERR_JWT_EXPIRED') });
    expect(noSub.error).toBe('UNAUTHENTICATED');
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
      const claims = { sub: 'alice', roles: ['auditor'], iss: 'https://idp.test', aud: 'parley', exp: now() + 60 };
      const options = { ...none, jwksUrl, issuer: 'https://idp.test', audience: 'parley' };
      const [ok, foreignKey, wrongAudience, hsWithoutSecret] = await verify(options, [
        rs256(claims, privateKey, 'k1'),
        rs256(claims, stranger, 'k1'),
        rs256({ ...claims, aud: 'someone-else' }, privateKey, 'k1'),
        hs256(claims),
      ]);
      expect(ok).toEqual({ subject: 'alice', roles: ['auditor'] });
      expect(foreignKey.error).toBe('UNAUTHENTICATED');
      expect(wrongAudience.error).toBe('UNAUTHENTICATED');
      expect(hsWithoutSecret.error).toBe('UNAUTHENTICATED');
    }, 30_000);
  });
});
