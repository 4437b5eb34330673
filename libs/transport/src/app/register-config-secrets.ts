import type { Config } from '@parley/config';
import { registerSecret } from '@parley/observability';
import { natsConnectSettings } from '@parley/platform';

/**
 * Registers every secret of the configuration with the log masker: the encryption, admin and JWT
 * keys, and the NATS credentials (the password in NATS_URL or NATS_PASSWORD, the NKey seed, the
 * `.creds` file's JWT and seed).
 */
export function registerConfigSecrets(config: Config): void {
  const { security, eventStore } = config;
  for (const secret of [security.encryptionKey, security.adminApiKey, security.jwt.secret, eventStore.chainKey])
    registerSecret(secret);
  if (config.nats.url)
    for (const secret of natsConnectSettings(config.nats.url, config.nats).secrets) registerSecret(secret);
}
