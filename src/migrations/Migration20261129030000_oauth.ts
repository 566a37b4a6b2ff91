import { Migration } from '@mikro-orm/migrations'

/**
 * The OAuth 2.1 authorization server of MCP clients (docs/api/mcp.md, "Authorization"): clients
 * registered dynamically (their secrets as SHA-256), authorization codes (60 seconds, used once,
 * keyed by a SHA-256) and refresh tokens (keyed by a SHA-256, each tied to the access token it
 * renews, so revoking the access token ends it). Expired codes are deleted whenever new ones are written.
 */
export class Migration20261129030000_oauth extends Migration {
  override name = 'Migration20261129030000_oauth'

  override up(): void | Promise<void> {
    this.addSql(`create table "oauth_clients" (
      "id" bigserial primary key, "client_id" varchar(64) not null, "client_secret_hash" varchar(64) null, "auth_method" text not null,
      "client_name" varchar(255) null, "redirect_uris" jsonb not null, "metadata" jsonb not null, "created_at" timestamptz not null);`)
    this.addSql(`alter table "oauth_clients" add constraint "oauth_clients_client_id_unique" unique ("client_id");`)
    this.addSql(`create table "oauth_codes" (
      "code_hash" varchar(64) primary key, "client_id" bigint not null, "user_id" int not null, "workspace_id" bigint not null,
      "redirect_uri" varchar(2048) not null, "code_challenge" varchar(128) not null, "resource" varchar(2048) null,
      "expires_at" timestamptz not null, "created_at" timestamptz not null);`)
    this.addSql(`create index "oauth_codes_expires_at_index" on "oauth_codes" ("expires_at");`)
    this.addSql(
      `alter table "oauth_codes" add constraint "oauth_codes_client_id_foreign" foreign key ("client_id") references "oauth_clients" ("id") on update cascade on delete cascade;`,
    )
    this.addSql(
      `alter table "oauth_codes" add constraint "oauth_codes_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`,
    )
    this.addSql(
      `alter table "oauth_codes" add constraint "oauth_codes_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    )
    this.addSql(`create table "oauth_refresh_tokens" (
      "token_hash" varchar(64) primary key, "client_id" bigint not null, "access_token_id" bigint not null, "resource" varchar(2048) null,
      "expires_at" timestamptz not null, "created_at" timestamptz not null);`)
    this.addSql(`create index "oauth_refresh_tokens_access_token_id_index" on "oauth_refresh_tokens" ("access_token_id");`)
    this.addSql(`create index "oauth_refresh_tokens_expires_at_index" on "oauth_refresh_tokens" ("expires_at");`)
    this.addSql(
      `alter table "oauth_refresh_tokens" add constraint "oauth_refresh_tokens_client_id_foreign" foreign key ("client_id") references "oauth_clients" ("id") on update cascade on delete cascade;`,
    )
    this.addSql(
      `alter table "oauth_refresh_tokens" add constraint "oauth_refresh_tokens_access_token_id_foreign" foreign key ("access_token_id") references "access_tokens" ("id") on update cascade on delete cascade;`,
    )
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "oauth_refresh_tokens";`)
    this.addSql(`drop table if exists "oauth_codes";`)
    this.addSql(`drop table if exists "oauth_clients";`)
  }
}
