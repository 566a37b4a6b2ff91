import { Migration } from '@mikro-orm/migrations'

/**
 * Idempotency keys (docs/api/conventions.md, "Idempotency keys"): one row per caller, key, method
 * and path (`key_hash`, a SHA-256 of them, so no token is stored), the fingerprint of the first
 * request, its state (`in_flight` until its answer is kept, with a lease for a process that died),
 * the kept answer sealed with the service key, and when it expires (24 hours).
 */
export class Migration20261128203000_idempotency extends Migration {
  override name = 'Migration20261128203000_idempotency'

  override up(): void | Promise<void> {
    this.addSql(`create table "idempotency_keys" (
      "key_hash" varchar(64) primary key, "fingerprint" varchar(64) not null,
      "state" text check ("state" in ('in_flight', 'done')) not null,
      "answer_ciphertext" text null, "answer_key_id" varchar(64) null,
      "locked_until" timestamptz not null, "expires_at" timestamptz not null, "created_at" timestamptz not null);`)
    this.addSql(`create index "idempotency_keys_expires_at_index" on "idempotency_keys" ("expires_at");`)
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "idempotency_keys";`)
  }
}
