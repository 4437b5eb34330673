/**
 * Known secret values (decrypted provider keys, tool credentials, the admin key) are masked in
 * the final text of every log line, whatever field or message they hide in. Redact paths catch
 * secrets by field name; this catches them by value.
 */
export class SecretMasker {
  private readonly secrets = new Set<string>();
  private pattern: RegExp | null = null;

  /** Values shorter than 6 characters are ignored: masking them would garble ordinary text. */
  add(value: string | null | undefined): void {
    if (!value || value.length < 6 || this.secrets.has(value)) return;
    this.secrets.add(value);
    const forms = [...this.secrets].flatMap((s) => [s, JSON.stringify(s).slice(1, -1)]);
    const unique = [...new Set(forms)].sort((a, b) => b.length - a.length);
    this.pattern = new RegExp(unique.map(escapeRegExp).join('|'), 'g');
  }

  mask(text: string): string {
    return this.pattern ? text.replace(this.pattern, '[REDACTED]') : text;
  }
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The process-wide masker every logger writes through; libraries register secrets they decrypt. */
export const secretMasker = new SecretMasker();

export function registerSecret(value: string | null | undefined): void {
  secretMasker.add(value);
}

/** Text from outside (a provider's error message) with every known secret value masked. */
export function maskSecrets(text: string): string {
  return secretMasker.mask(text);
}

/** Registers every string inside a decrypted secret (a key, or an object of headers, env, passwords). */
export function registerSecrets(value: unknown): void {
  if (typeof value === 'string') secretMasker.add(value);
  else if (Array.isArray(value)) value.forEach(registerSecrets);
  else if (typeof value === 'object' && value !== null) Object.values(value).forEach(registerSecrets);
}
