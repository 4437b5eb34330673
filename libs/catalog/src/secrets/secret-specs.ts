import { z } from 'zod';
import type { SecretKind } from '../model/descriptor';
import type { Row } from '../model/entity-schemas';
import { extractToolSecrets, takeUrlSecret } from './tool-secrets';

/**
 * The write-only values of each entity with secrets. In a bundle or request a secret that is
 * absent keeps the stored value and `null` clears it; APIs show only the flags below.
 */
export type Secret = Record<string, unknown>;

export interface SecretSpec {
  /** Write-only input fields (zod shapes merged into the entity's bundle schema). */
  input: Record<string, z.ZodType>;
  /** merge: absent values keep the stored ones; replace: the given values are all there is. */
  mode: 'merge' | 'replace';
  /** Takes the secret values out of a parsed item (they never reach a plain column). */
  extract(item: Row): Secret;
  /** What the API shows instead of the values. */
  flags(secret: Secret): Row;
}

const stringMap = z.record(z.string(), z.string());

function takeFields(item: Row, names: string[]): Secret {
  const taken: Secret = {};
  for (const name of names) {
    taken[name] = item[name];
    delete item[name];
  }
  return taken;
}

const names = (v: unknown): string[] => Object.keys((v as Record<string, string> | null) ?? {}).sort();

export const SECRET_SPECS: Record<SecretKind, SecretSpec> = {
  provider: {
    input: {
      apiKey: z.string().min(1).max(4000).nullable().optional(),
      /** Extra connection settings; `headers` are sent with every call (e.g. Azure's api-key). */
      providerConfig: z.looseObject({ headers: stringMap.optional() }).nullable().optional(),
    },
    mode: 'merge',
    // A baseUrl's userinfo or query string is a secret too; the record keeps the URL without it.
    extract: (item) => ({ ...takeFields(item, ['apiKey', 'providerConfig']), ...takeUrlSecret(item, 'baseUrl') }),
    flags: (s) => ({
      apiKeySet: typeof s.apiKey === 'string',
      providerConfigSet: s.providerConfig != null,
      ...(typeof s.baseUrl === 'string' ? { baseUrlSecretSet: true } : {}),
    }),
  },
  mcpClient: {
    input: { env: stringMap.nullable().optional(), headers: stringMap.nullable().optional() },
    mode: 'merge',
    extract: (item) => ({ ...takeFields(item, ['env', 'headers']), ...takeUrlSecret(item, 'mcpConnectionUrl') }),
    flags: (s) => ({
      envSet: names(s.env),
      headersSet: names(s.headers),
      ...(typeof s.mcpConnectionUrl === 'string' ? { mcpConnectionUrlSecretSet: true } : {}),
    }),
  },
  tool: {
    input: {},
    // The tool's config was validated whole (stored secrets filled in); its secret paths are all there is.
    mode: 'replace',
    extract: (item) => extractToolSecrets(item.config as Row | null),
    flags: (s) => ({ secretsSet: Object.keys(s).sort() }),
  },
};

/** The secret to store: the given values over the stored ones (merge) or the given ones (replace). */
export function nextSecret(spec: SecretSpec, stored: Secret | null, given: Secret): Secret {
  const base = spec.mode === 'merge' ? { ...(stored ?? {}) } : {};
  for (const [name, value] of Object.entries(given)) {
    if (value === undefined) continue;
    if (value === null) delete base[name];
    else base[name] = value;
  }
  return base;
}
