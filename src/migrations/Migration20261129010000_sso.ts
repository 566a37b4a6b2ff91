import { Migration } from '@mikro-orm/migrations'

/**
 * Single sign-on (docs/api/sso.md): the provider identities linked to users (one user per issuer
 * and `sub`), the sign-ins waiting for the provider's answer (10 minutes, used once) and the
 * one-time codes of finished sign-ins (60 seconds, used once). States and codes are keyed by a
 * SHA-256 of their value; expired rows are deleted whenever new ones are written.
 */
export class Migration20261129010000_sso extends Migration {
  override name = 'Migration20261129010000_sso'

  override up(): void | Promise<void> {
    this.addSql(`create table "user_identities" (
      "id" bigserial primary key, "user_id" int not null, "issuer" varchar(512) not null, "subject" varchar(255) not null,
      "email" varchar(320) not null, "created_at" timestamptz not null);`)
    this.addSql(`alter table "user_identities" add constraint "user_identities_issuer_subject_unique" unique ("issuer", "subject");`)
    this.addSql(`create index "user_identities_user_id_index" on "user_identities" ("user_id");`)
    this.addSql(
      `alter table "user_identities" add constraint "user_identities_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`,
    )
    this.addSql(`create table "oidc_states" (
      "state_hash" varchar(64) primary key, "code_verifier" varchar(128) not null, "nonce" varchar(128) not null,
      "redirect" varchar(2048) not null, "expires_at" timestamptz not null, "created_at" timestamptz not null);`)
    this.addSql(`create index "oidc_states_expires_at_index" on "oidc_states" ("expires_at");`)
    this.addSql(`create table "oidc_login_codes" (
      "code_hash" varchar(64) primary key, "user_id" int not null, "expires_at" timestamptz not null, "created_at" timestamptz not null);`)
    this.addSql(`create index "oidc_login_codes_expires_at_index" on "oidc_login_codes" ("expires_at");`)
    this.addSql(
      `alter table "oidc_login_codes" add constraint "oidc_login_codes_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`,
    )
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "oidc_login_codes";`)
    this.addSql(`drop table if exists "oidc_states";`)
    this.addSql(`drop table if exists "user_identities";`)
  }
}
