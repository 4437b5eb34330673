import { loadConfig } from '@parley/config';
import { maskSecrets } from '@parley/observability';
import { nkeys } from 'nats';
import { registerConfigSecrets } from './register-config-secrets';

describe('registerConfigSecrets', () => {
  it('masks the NATS password of NATS_URL or NATS_PASSWORD and the NKey seed in every log line', () => {
    const seed = new TextDecoder().decode(nkeys.createUser().getSeed());
    registerConfigSecrets(loadConfig({ NATS_URL: 'nats://parley:url-pass-1234@nats:4222' }));
    registerConfigSecrets(
      loadConfig({ NATS_URL: 'nats://nats:4222', NATS_USER: 'parley', NATS_PASSWORD: 'env-pass-5678' }),
    );
    registerConfigSecrets(loadConfig({ NATS_URL: 'nats://nats:4222', NATS_NKEY_SEED: seed }));
    expect(maskSecrets(`connect nats://parley:url-pass-1234@nats:4222 with env-pass-5678 or ${seed}`)).toBe(
      'connect nats://parley:[REDACTED]@nats:4222 with [REDACTED] or [REDACTED]',
    );
  });
});
