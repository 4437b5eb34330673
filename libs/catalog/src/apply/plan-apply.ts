import type { FieldProblem } from '@parley/core';
import { CATALOG_DESCRIPTORS } from '../model/catalog-descriptors';
import type { Row } from '../model/entity-schemas';
import { MISSING_KEY_MESSAGE, type SecretCipher } from '../secrets/secret-cipher';
import { nextSecret, SECRET_SPECS, type Secret } from '../secrets/secret-specs';
import { sameJson, shapeRecord } from '../store/catalog-records';
import type { CatalogView } from '../store/catalog-store';
import type { BundleItem } from './parse-bundle';

export type ChangeStatus = 'created' | 'updated' | 'unchanged';

export interface PlannedChange {
  item: BundleItem;
  status: ChangeStatus;
  record: Row;
  /** undefined: keep the stored ciphertext as it is. */
  secret: Secret | undefined;
}

/** Per entity list, which keys an apply creates, updates or leaves as they are. */
export type ApplyDiff = Record<string, Record<ChangeStatus, string[]>>;

/**
 * Compares each valid item with what is stored, in dependency order (the order writes must
 * happen in). A secret is re-encrypted only when it changes, so an unchanged secret needs no key.
 */
export function planChanges(
  items: BundleItem[],
  view: CatalogView,
  cipher: SecretCipher,
): { changes: PlannedChange[]; problems: FieldProblem[] } {
  const changes: PlannedChange[] = [];
  const problems: FieldProblem[] = [];
  for (const d of CATALOG_DESCRIPTORS) {
    for (const item of items.filter((i) => i.d === d)) {
      const stored = view.get(d.kind)?.get(item.key) ?? null;
      const values = { ...item.values };
      let secret: Secret | null = null;
      if (d.secrets) {
        const spec = SECRET_SPECS[d.secrets];
        secret = nextSecret(spec, stored?.secret ?? null, spec.extract(values));
      }
      const links = Object.fromEntries(d.links.map((l) => [l.field, values[l.field] as Row[]]));
      const record = shapeRecord(d, values, links, secret);
      const secretChanged = !sameJson(secret ?? {}, stored?.secret ?? {});
      const status: ChangeStatus = !stored
        ? 'created'
        : sameJson(record, stored.record) && !secretChanged
          ? 'unchanged'
          : 'updated';
      if (secretChanged && secret && Object.keys(secret).length > 0 && !cipher.canEncrypt) {
        const prefix = d.secrets === 'tool' ? `${item.path}.config` : item.path;
        for (const name of Object.keys(secret))
          problems.push({ path: `${prefix}.${name}`, message: MISSING_KEY_MESSAGE });
      }
      changes.push({ item, status, record, secret: secretChanged ? (secret ?? {}) : undefined });
    }
  }
  return { changes, problems };
}

export function diffOf(changes: PlannedChange[]): ApplyDiff {
  const diff: ApplyDiff = {};
  for (const { item, status } of changes) {
    diff[item.d.kind] ??= { created: [], updated: [], unchanged: [] };
    diff[item.d.kind][status].push(item.key);
  }
  return diff;
}
