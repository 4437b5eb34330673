import type { MigrationInterface, QueryRunner } from 'typeorm';
import { APPEND_FUNCTION } from './1732200000000-event-store';

const OLD_SIGNATURE = 'es_append(text, text, int, bigint, text, uuid[], text[], text[], int[], text[], text[])';
const NEW_SIGNATURE =
  'es_append(text, text, int, bigint, text, uuid[], text[], text[], int[], text[], text[], bytea, bytea)';

const UNKEYED_HASH = `v_hash := encode(sha256(convert_to(v_hash || '{"data":'`;
const CANONICAL_END = `|| ',"type":' || p_type_json[i] || '}', 'UTF8')), 'hex');`;

/**
 * es_append learns the keyed hash chain: given HMAC's padded keys (p_hmac_inner, p_hmac_outer,
 * derived from EVENT_CHAIN_KEY by the adapter), each hash is `hmac:` and the HMAC-SHA256 of the
 * same input, computed with sha256() as HMAC defines it; without them, the plain sha-256 as
 * before. The key itself never reaches the database.
 */
export class KeyedHashChain1732200009100 implements MigrationInterface {
  name = 'KeyedHashChain1732200009100';

  async up(q: QueryRunner): Promise<void> {
    const keyed = keyedAppendFunction();
    await q.query(`drop function ${OLD_SIGNATURE}`);
    await q.query(keyed);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`drop function ${NEW_SIGNATURE}`);
    await q.query(APPEND_FUNCTION);
  }
}

/** es_append as this migration leaves it (the later migrations that replace it restore it on down). */
export function keyedAppendFunction(): string {
  if (!APPEND_FUNCTION.includes(UNKEYED_HASH) || !APPEND_FUNCTION.includes(CANONICAL_END))
    throw new Error('es_append no longer has the hash expression this migration rewrites');
  return APPEND_FUNCTION.replace(
    'p_ids uuid[], p_types text[], p_type_json text[], p_versions int[], p_data text[], p_metadata text[])',
    'p_ids uuid[], p_types text[], p_type_json text[], p_versions int[], p_data text[], p_metadata text[],\n  p_hmac_inner bytea, p_hmac_outer bytea)',
  )
    .replace('v_pos bigint;', 'v_pos bigint; v_input bytea;')
    .replace(UNKEYED_HASH, `v_input := convert_to(v_hash || '{"data":'`)
    .replace(
      CANONICAL_END,
      `|| ',"type":' || p_type_json[i] || '}', 'UTF8');
    v_hash := case when p_hmac_inner is null then encode(sha256(v_input), 'hex')
      else 'hmac:' || encode(sha256(p_hmac_outer || sha256(p_hmac_inner || v_input)), 'hex') end;`,
    );
}
