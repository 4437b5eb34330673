import type { DataSource } from 'typeorm';
import { CATALOG_LOCK_ID } from '../catalog-tokens';
import { CATALOG_DESCRIPTORS } from '../model/catalog-descriptors';
import { secretBinding } from '../store/catalog-store';
import type { SecretCipher } from './secret-cipher';

/**
 * Re-encrypts with the current key every catalog secret sealed under another key (one of
 * PARLEY_PREVIOUS_ENCRYPTION_KEYS), in one transaction. Returns how many rows per table.
 * After it, the previous keys can be removed from the configuration.
 */
export async function rotateEncryptionKeys(
  dataSource: DataSource,
  cipher: SecretCipher,
): Promise<Record<string, number>> {
  if (!cipher.currentKeyId) throw new Error('PARLEY_ENCRYPTION_KEY is not set: there is no key to rotate to.');
  const rotated: Record<string, number> = {};
  await dataSource.transaction(async (manager) => {
    await manager.query('select pg_advisory_xact_lock($1)', [CATALOG_LOCK_ID]);
    for (const d of CATALOG_DESCRIPTORS.filter((x) => x.secrets)) {
      const key = d.key.field;
      const rows: { key: string; key_id: string; ciphertext: string }[] = await manager.query(
        `select ${key} as key, secret_key_id as key_id, secret_ciphertext as ciphertext from ${d.table}
          where secret_ciphertext is not null and secret_key_id <> $1 for update`,
        [cipher.currentKeyId],
      );
      for (const row of rows) {
        const binding = secretBinding(d, row.key);
        const plaintext = cipher.decrypt({ keyId: row.key_id, ciphertext: row.ciphertext }, binding);
        const sealed = cipher.encrypt(plaintext, binding);
        await manager.query(`update ${d.table} set secret_key_id = $1, secret_ciphertext = $2 where ${key} = $3`, [
          sealed.keyId,
          sealed.ciphertext,
          row.key,
        ]);
      }
      rotated[d.table] = rows.length;
    }
  });
  return rotated;
}
