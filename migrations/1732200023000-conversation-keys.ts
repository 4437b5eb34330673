import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Erasure by crypto-shredding: each conversation's data key, wrapped with PARLEY_ENCRYPTION_KEY
 * (`key_id` names the key that wrapped it, for rotation), and its owner (a subject's erasure
 * finds its conversations here at once, before the read models have them). Erasing a conversation deletes the
 * wrapped key and records when and by whom; the row stays, so every reader knows it is erased.
 */
export class ConversationKeys1732200023000 implements MigrationInterface {
  name = 'ConversationKeys1732200023000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create table conversation_keys (
        conversation_id uuid primary key,
        owner text,
        key_id text,
        wrapped_key text,
        created_at timestamptz not null default now(),
        erased_at timestamptz,
        erased_by text,
        check ((erased_at is null) = (wrapped_key is not null))
      )`);
    await q.query(`create index conversation_keys_owner on conversation_keys (owner)`);
    await q.query(`create index conversation_keys_key_id on conversation_keys (key_id) where wrapped_key is not null`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`drop table conversation_keys`);
  }
}
