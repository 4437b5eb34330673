import type { Config } from '@parley/config';
import { readFileSync } from 'node:fs';
import { credsAuthenticator, nkeyAuthenticator, type ConnectionOptions } from 'nats';

export interface NatsConnectSettings {
  /** NATS_URL without its `user:password@`: the address logs, errors and events may show. */
  shownUrl: string;
  options: ConnectionOptions;
  /** The credential values, for the secret masker. */
  secrets: string[];
}

/**
 * How Parley connects to NATS at `url` with `settings` (config.nats): user and password (in the
 * URL or NATS_USER/NATS_PASSWORD), an NKey seed, or a `.creds` file, and TLS files. The
 * credentials never stay in the URL, so nothing that prints the address prints them. Throws a
 * sentence naming the setting when a file cannot be read.
 */
export function natsConnectSettings(url: string, settings: Config['nats']): NatsConnectSettings {
  const parsed = new URL(url);
  const user = parsed.username ? decodeURIComponent(parsed.username) : settings.user;
  const pass = parsed.username ? decodeURIComponent(parsed.password) : settings.password;
  parsed.username = '';
  parsed.password = '';
  const shownUrl = parsed.toString();
  // No stack captured per request (the relay sends one per event): Parley logs a NATS failure's
  // message, not where the request began.
  const options: ConnectionOptions = { servers: shownUrl, noAsyncTraces: true };
  const secrets: string[] = [];
  if (user) {
    options.user = user;
    options.pass = pass ?? '';
    if (pass) secrets.push(pass);
  }
  if (settings.nkeySeed) {
    options.authenticator = nkeyAuthenticator(new TextEncoder().encode(settings.nkeySeed));
    secrets.push(settings.nkeySeed);
  }
  if (settings.credsFile) {
    const creds = readSetting('NATS_CREDS', settings.credsFile);
    options.authenticator = credsAuthenticator(creds);
    secrets.push(...credsSecrets(creds));
  }
  const { caFile, certFile, keyFile } = settings.tls;
  if (caFile || certFile || keyFile) {
    options.tls = {
      ...(caFile ? { ca: readSetting('NATS_TLS_CA', caFile).toString() } : {}),
      ...(certFile ? { cert: readSetting('NATS_TLS_CERT', certFile).toString() } : {}),
      ...(keyFile ? { key: readSetting('NATS_TLS_KEY', keyFile).toString() } : {}),
    };
  }
  return { shownUrl, options, secrets };
}

function readSetting(name: string, path: string): Uint8Array {
  try {
    return readFileSync(path);
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    throw new Error(`${name}: cannot read ${path}: ${typeof code === 'string' ? code : String(err)}`, { cause: err });
  }
}

/** The user JWT and the NKey seed inside a `.creds` file. */
function credsSecrets(creds: Uint8Array): string[] {
  const text = new TextDecoder().decode(creds);
  return [...text.matchAll(/-{3,}[^\n]*-{3,}\s*\n\s*([A-Za-z0-9._=-]+)\s*\n/g)].map((m) => m[1]!);
}
