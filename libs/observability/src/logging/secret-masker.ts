/**
 * Known secret values (decrypted provider keys, tool credentials, the admin key) are masked in
 * the final text of every log line, whatever field or message they hide in. Redact paths catch
 * secrets by field name; this catches them by value.
 *
 * A few secrets are found with one regular expression, built when a text is masked after a
 * change. Past REGEX_LIMIT, every secret is indexed under a rolling hash of its first MIN_LENGTH
 * characters (raw and JSON-escaped forms), so masking costs one hash step and one map lookup per
 * character however many secrets there are, and adding one costs the same with ten thousand
 * registered: one alternation of every secret, rebuilt on every add, grew with each new key.
 */
const MIN_LENGTH = 6;
const REGEX_LIMIT = 64;
const BASE = 31;
const BASE_POW = BASE ** (MIN_LENGTH - 1);

export class SecretMasker {
  private readonly secrets = new Set<string>();
  /** Hash of the first MIN_LENGTH characters -> the forms that start so, longest first. */
  private readonly byPrefix = new Map<number, string[]>();
  private pattern: RegExp | null = null;
  private stale = false;

  /** Values shorter than 6 characters are ignored: masking them would garble ordinary text. */
  add(value: string | null | undefined): void {
    if (!value || value.length < MIN_LENGTH || this.secrets.has(value)) return;
    this.secrets.add(value);
    for (const form of formsOf(value)) {
      const key = prefixHash(form);
      const forms = this.byPrefix.get(key) ?? [];
      if (!forms.includes(form)) forms.push(form);
      forms.sort((a, b) => b.length - a.length);
      this.byPrefix.set(key, forms);
    }
    this.stale = true;
  }

  mask(text: string): string {
    if (this.secrets.size === 0 || text.length < MIN_LENGTH) return text;
    if (this.secrets.size > REGEX_LIMIT) return this.maskByIndex(text);
    if (this.stale) {
      const forms = [...new Set([...this.secrets].flatMap(formsOf))].sort((a, b) => b.length - a.length);
      this.pattern = new RegExp(forms.map(escapeRegExp).join('|'), 'g');
      this.stale = false;
    }
    return text.replace(this.pattern!, '[REDACTED]');
  }

  private maskByIndex(text: string): string {
    let out = '';
    let copied = 0;
    let hash = prefixHash(text);
    for (let i = 0; i <= text.length - MIN_LENGTH;) {
      const forms = this.byPrefix.get(hash);
      const found = forms && i >= copied ? forms.find((form) => text.startsWith(form, i)) : undefined;
      if (found !== undefined) {
        out += `${text.slice(copied, i)}[REDACTED]`;
        copied = i + found.length;
      }
      // Roll the window one character on (past a match too: the hash stays continuous).
      if (i + MIN_LENGTH < text.length)
        hash = (Math.imul(hash - Math.imul(text.charCodeAt(i), BASE_POW), BASE) + text.charCodeAt(i + MIN_LENGTH)) | 0;
      i++;
    }
    return copied === 0 ? text : out + text.slice(copied);
  }
}

const formsOf = (secret: string): string[] => [...new Set([secret, JSON.stringify(secret).slice(1, -1)])];

function prefixHash(text: string): number {
  let hash = 0;
  for (let i = 0; i < MIN_LENGTH; i++) hash = (Math.imul(hash, BASE) + text.charCodeAt(i)) | 0;
  return hash;
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
