import { execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigModule, loadConfig } from '@parley/config';
import { Test } from '@nestjs/testing';
import { freePort, killProcess, startNatsServer } from '@parley/testing';
import { nkeys, type NatsConnection } from 'nats';
import { createHash } from 'node:crypto';
import { NATS_RETRY_MS, type NatsLink } from './nats-link';
import { natsConnectSettings } from './nats-options';
import { NATS_LINK, NatsModule } from './nats.module';

type KeyPair = ReturnType<typeof nkeys.createUser>;

/** A NATS JWT of `subject` signed by `issuer` (operator, account or user claims in `nats`). */
function natsJwt(issuer: KeyPair, subject: KeyPair, nats: Record<string, unknown>): string {
  const b64 = (text: string | Uint8Array) => Buffer.from(text).toString('base64url');
  const header = b64(JSON.stringify({ typ: 'JWT', alg: 'ed25519-nkey' }));
  const claims = {
    iat: Math.floor(Date.now() / 1000),
    iss: issuer.getPublicKey(),
    sub: subject.getPublicKey(),
    name: 'parley-test',
    nats,
  };
  const jti = createHash('sha256').update(JSON.stringify(claims)).digest('hex').toUpperCase().slice(0, 52);
  const payload = b64(JSON.stringify({ ...claims, jti }));
  return `${header}.${payload}.${b64(issuer.sign(new TextEncoder().encode(`${header}.${payload}`)))}`;
}

describe('NatsModule', () => {
  const boot = (url: string | null) =>
    Test.createTestingModule({
      imports: [ConfigModule.forRoot(loadConfig({})), NatsModule.forRoot({ url })],
    }).compile();

  /** An app booted with a NATS URL nothing listens on yet. */
  const bootUnreachable = async () => {
    const port = await freePort();
    const app = await boot(`nats://127.0.0.1:${port}`);
    return { port, app, link: app.get<NatsLink>(NATS_LINK) };
  };

  let server: ChildProcess | null = null;
  afterEach(async () => {
    if (server) await killProcess(server);
    server = null;
  });

  it(
    'starts without a NATS it cannot reach, and connects once NATS answers',
    async () => {
      const { port, app, link } = await bootUnreachable();
      expect(link.enabled).toBe(true);
      expect(link.connection).toBeNull();
      const connected = new Promise<NatsConnection>((resolve) => link.onConnected(resolve));
      const taken = jest.fn();
      link.onConnected(taken)();

      server = await startNatsServer(port);
      const nats = await connected;
      await expect(nats.flush()).resolves.toBeUndefined();
      expect(link.connection).toBe(nats);
      expect(taken).not.toHaveBeenCalled();
      await app.close();
      expect(nats.isClosed()).toBe(true);
    },
    5 * NATS_RETRY_MS,
  );

  it(
    'stops trying when the app closes before NATS has answered',
    async () => {
      const { port, app, link } = await bootUnreachable();
      const waiting = jest.fn();
      link.onConnected(waiting);
      await app.close();

      server = await startNatsServer(port);
      await new Promise((r) => setTimeout(r, NATS_RETRY_MS + 500));
      expect(waiting).not.toHaveBeenCalled();
      expect(link.connection).toBeNull();
    },
    5 * NATS_RETRY_MS,
  );

  it('stops the start with a sentence naming NATS_URL and the address when NATS refuses the credentials', async () => {
    const port = await freePort();
    server = await startNatsServer(port, ['--user', 'parley', '--pass', 'secret']);
    const url = `nats://127.0.0.1:${port}`;
    const failed = await boot(url).then(
      () => null,
      (err: Error) => err,
    );
    expect(failed?.message).toBe(`NATS at ${url} (NATS_URL) could not be reached`);
    expect((failed?.cause as Error).message).toMatch(/AUTHORIZATION_VIOLATION|Authorization Violation/i);
  });

  it('takes the user and password from NATS_URL and shows the address without them', async () => {
    const port = await freePort();
    server = await startNatsServer(port, ['--user', 'parley', '--pass', 'url-secret-42']);
    const app = await boot(`nats://parley:url-secret-42@127.0.0.1:${port}`);
    const link = app.get<NatsLink>(NATS_LINK);
    await expect(link.connection!.flush()).resolves.toBeUndefined();
    expect(link.url).toBe(`nats://127.0.0.1:${port}`);
    await app.close();

    const wrong = `nats://parley:wrong-secret-42@127.0.0.1:${port}`;
    const failed = await boot(wrong).then(
      () => null,
      (err: Error) => err,
    );
    expect(failed?.message).toBe(`NATS at nats://127.0.0.1:${port} (NATS_URL) could not be reached`);
    expect(String(failed?.stack)).not.toContain('wrong-secret-42');
  });

  it('connects with NATS_USER and NATS_PASSWORD, and names an unreadable NATS_CREDS file', async () => {
    const port = await freePort();
    server = await startNatsServer(port, ['--user', 'parley', '--pass', 'env-secret-42']);
    const url = `nats://127.0.0.1:${port}`;
    const app = await Test.createTestingModule({
      imports: [
        ConfigModule.forRoot(loadConfig({ NATS_URL: url, NATS_USER: 'parley', NATS_PASSWORD: 'env-secret-42' })),
        NatsModule.forRoot(),
      ],
    }).compile();
    await expect(app.get<NatsLink>(NATS_LINK).connection!.flush()).resolves.toBeUndefined();
    await app.close();
    const missing = await Test.createTestingModule({
      imports: [
        ConfigModule.forRoot(loadConfig({ NATS_URL: url, NATS_CREDS: '/nonexistent/parley.creds' })),
        NatsModule.forRoot(),
      ],
    })
      .compile()
      .then(
        () => null,
        (err: Error) => err,
      );
    expect(missing?.message).toMatch(/^NATS_CREDS: cannot read \/nonexistent\/parley.creds: ENOENT/);
  });

  it('connects with a NATS_CREDS file to a server in operator mode, and knows its JWT and seed as secrets', async () => {
    const operator = nkeys.createOperator();
    const account = nkeys.createAccount();
    const user = nkeys.createUser();
    const limits = { subs: -1, data: -1, payload: -1, imports: -1, exports: -1, wildcards: true, conn: -1, leaf: -1 };
    const operatorJwt = natsJwt(operator, operator, { type: 'operator', version: 2 });
    const accountJwt = natsJwt(operator, account, { limits, type: 'account', version: 2 });
    const userJwt = natsJwt(account, user, {
      pub: {},
      sub: {},
      subs: -1,
      data: -1,
      payload: -1,
      type: 'user',
      version: 2,
    });
    const seed = new TextDecoder().decode(user.getSeed());
    const dir = mkdtempSync(join(tmpdir(), 'parley-nats-creds-'));
    writeFileSync(
      join(dir, 'operator.conf'),
      `operator: ${operatorJwt}\nresolver: MEMORY\nresolver_preload: {\n  ${account.getPublicKey()}: ${accountJwt}\n}\n`,
    );
    const creds = join(dir, 'parley.creds');
    writeFileSync(
      creds,
      `-----BEGIN NATS USER JWT-----\n${userJwt}\n------END NATS USER JWT------\n\n` +
        `************************* IMPORTANT *************************\nNKEY Seed printed below.\n\n` +
        `-----BEGIN USER NKEY SEED-----\n${seed}\n------END USER NKEY SEED------\n`,
    );
    const port = await freePort();
    // JetStream needs a system account in operator mode; this server runs without it.
    server = await startNatsServer(port, ['-c', join(dir, 'operator.conf'), '-js=false']);
    const env = { NATS_URL: `nats://127.0.0.1:${port}`, NATS_CREDS: creds };
    const app = await Test.createTestingModule({
      imports: [ConfigModule.forRoot(loadConfig(env)), NatsModule.forRoot()],
    }).compile();
    await expect(app.get<NatsLink>(NATS_LINK).connection!.flush()).resolves.toBeUndefined();
    await app.close();
    const config = loadConfig(env);
    expect(natsConnectSettings(config.nats.url!, config.nats).secrets).toEqual([userJwt, seed]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('connects over mutual TLS with NATS_TLS_CA, NATS_TLS_CERT and NATS_TLS_KEY, and stops the start when the CA did not sign the server’s certificate', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-nats-tls-'));
    const pem = (name: string) => join(dir, name);
    const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
    openssl(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=Parley test CA',
      '-keyout',
      pem('ca.key'),
      '-out',
      pem('ca.pem'),
    );
    for (const [name, ext] of [
      ['server', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth'],
      ['client', 'extendedKeyUsage=clientAuth'],
    ] as const) {
      openssl(
        'req',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-subj',
        `/CN=${name}`,
        '-keyout',
        pem(`${name}.key`),
        '-out',
        pem(`${name}.csr`),
      );
      writeFileSync(pem(`${name}.ext`), ext);
      openssl(
        'x509',
        '-req',
        '-in',
        pem(`${name}.csr`),
        '-CA',
        pem('ca.pem'),
        '-CAkey',
        pem('ca.key'),
        '-CAcreateserial',
        '-days',
        '1',
        '-extfile',
        pem(`${name}.ext`),
        '-out',
        pem(`${name}.pem`),
      );
    }
    writeFileSync(
      pem('tls.conf'),
      `tls {\n  cert_file: "${pem('server.pem')}"\n  key_file: "${pem('server.key')}"\n  ca_file: "${pem('ca.pem')}"\n  verify: true\n}\n`,
    );
    const port = await freePort();
    server = await startNatsServer(port, ['-c', pem('tls.conf')]);
    const url = `tls://127.0.0.1:${port}`;
    const tls = { NATS_URL: url, NATS_TLS_CA: pem('ca.pem') };
    const app = await Test.createTestingModule({
      imports: [
        ConfigModule.forRoot(loadConfig({ ...tls, NATS_TLS_CERT: pem('client.pem'), NATS_TLS_KEY: pem('client.key') })),
        NatsModule.forRoot(),
      ],
    }).compile();
    const nats = app.get<NatsLink>(NATS_LINK).connection!;
    await expect(nats.flush()).resolves.toBeUndefined();
    expect(nats.info?.tls_required).toBe(true);
    await app.close();

    // A CA that did not sign the server's certificate.
    const wrongCa = {
      ...tls,
      NATS_TLS_CA: pem('client.pem'),
      NATS_TLS_CERT: pem('client.pem'),
      NATS_TLS_KEY: pem('client.key'),
    };
    const refused = await Test.createTestingModule({
      imports: [ConfigModule.forRoot(loadConfig(wrongCa)), NatsModule.forRoot()],
    })
      .compile()
      .then(
        () => null,
        (err: Error) => err,
      );
    expect(refused?.message).toBe(`NATS at ${url} (NATS_URL) could not be reached`);
    expect((refused?.cause as { code?: string }).code).toBe('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    rmSync(dir, { recursive: true, force: true });
  });

  it('connects to a running NATS at once, and has no connection when NATS is off', async () => {
    const on = await boot('nats://127.0.0.1:4222');
    const nats = on.get<NatsLink>(NATS_LINK).connection!;
    await expect(nats.flush()).resolves.toBeUndefined();
    await on.close();
    expect(nats.isClosed()).toBe(true);
    const off = await boot(null);
    const link = off.get<NatsLink>(NATS_LINK);
    expect(link.enabled).toBe(false);
    expect(link.connection).toBeNull();
    const never = jest.fn();
    link.onConnected(never);
    expect(never).not.toHaveBeenCalled();
    await off.close();
  });
});
