import { Migration } from '@mikro-orm/migrations';

export class Migration20261121093927 extends Migration {

  override name = 'Migration20261121093927';

  override up(): void | Promise<void> {
    this.addSql(`create table "shares" ("id" bigserial primary key, "resource_type" varchar(64) not null, "resource_id" bigint not null, "entity_type" text not null, "entity_id" bigint not null, "permission" text not null, "created_at" timestamptz not null, "updated_at" timestamptz not null);`);
    this.addSql(`create index "shares_entity_type_entity_id_resource_type_index" on "shares" ("entity_type", "entity_id", "resource_type");`);
    this.addSql(`alter table "shares" add constraint "shares_resource_type_resource_id_entity_type_entity_id_unique" unique ("resource_type", "resource_id", "entity_type", "entity_id");`);

    this.addSql(`create table "users" ("id" serial primary key, "name" varchar(255) not null, "first_name" varchar(255) not null, "last_name" varchar(255) not null, "email" varchar(320) not null, "password_hash" varchar(255) not null, "profile_photo_key" varchar(512) null, "service_id" varchar(64) null, "primary_workspace_id" bigint null, "created_at" timestamptz not null, "updated_at" timestamptz not null);`);
    this.addSql(`create unique index "users_service_id_email_unique" on "users" (coalesce("service_id", ''), "email");`);

    this.addSql(`create table "workspaces" ("id" bigserial primary key, "uuid" uuid not null, "slug" varchar(80) not null, "name" varchar(255) not null, "profile_photo_key" varchar(512) null, "service_id" varchar(64) null, "is_onboarded" boolean not null default false, "metadata" jsonb not null default '{}', "user_id" int not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "deleted_at" timestamptz null);`);
    this.addSql(`alter table "workspaces" add constraint "workspaces_uuid_unique" unique ("uuid");`);
    this.addSql(`alter table "workspaces" add constraint "workspaces_slug_unique" unique ("slug");`);
    this.addSql(`create index "workspaces_user_id_index" on "workspaces" ("user_id");`);

    this.addSql(`create table "access_tokens" ("id" bigserial primary key, "uuid" uuid not null, "user_id" int not null, "kind" text not null, "name" varchar(255) not null, "token_hash" varchar(64) not null, "prefix" varchar(16) not null, "abilities" jsonb not null, "workspace_id" bigint null, "service_id" varchar(64) null, "expires_at" timestamptz null, "last_used_at" timestamptz null, "revoked_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null);`);
    this.addSql(`alter table "access_tokens" add constraint "access_tokens_uuid_unique" unique ("uuid");`);
    this.addSql(`alter table "access_tokens" add constraint "access_tokens_token_hash_unique" unique ("token_hash");`);
    this.addSql(`create index "access_tokens_user_id_kind_index" on "access_tokens" ("user_id", "kind");`);

    this.addSql(`create table "workspace_members" ("id" bigserial primary key, "workspace_id" bigint not null, "user_id" int not null, "role" text not null, "created_at" timestamptz not null, "updated_at" timestamptz not null);`);
    this.addSql(`create index "workspace_members_user_id_index" on "workspace_members" ("user_id");`);
    this.addSql(`alter table "workspace_members" add constraint "workspace_members_workspace_id_user_id_unique" unique ("workspace_id", "user_id");`);

    this.addSql(`alter table "shares" add constraint "shares_entity_type_check" check ("entity_type" in ('user', 'workspace'));`);
    this.addSql(`alter table "shares" add constraint "shares_permission_check" check ("permission" in ('read', 'write', 'admin'));`);

    this.addSql(`alter table "users" add constraint "users_primary_workspace_id_foreign" foreign key ("primary_workspace_id") references "workspaces" ("id") on delete set null;`);

    this.addSql(`alter table "workspaces" add constraint "workspaces_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`);

    this.addSql(`alter table "access_tokens" add constraint "access_tokens_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`);
    this.addSql(`alter table "access_tokens" add constraint "access_tokens_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on delete cascade;`);
    this.addSql(`alter table "access_tokens" add constraint "access_tokens_kind_check" check ("kind" in ('basic', 'application'));`);

    this.addSql(`alter table "workspace_members" add constraint "workspace_members_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on delete cascade;`);
    this.addSql(`alter table "workspace_members" add constraint "workspace_members_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`);
    this.addSql(`alter table "workspace_members" add constraint "workspace_members_role_check" check ("role" in ('owner', 'admin', 'member'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "workspaces" drop constraint "workspaces_user_id_foreign";`);
    this.addSql(`alter table "access_tokens" drop constraint "access_tokens_user_id_foreign";`);
    this.addSql(`alter table "workspace_members" drop constraint "workspace_members_user_id_foreign";`);
    this.addSql(`alter table "users" drop constraint "users_primary_workspace_id_foreign";`);
    this.addSql(`alter table "access_tokens" drop constraint "access_tokens_workspace_id_foreign";`);
    this.addSql(`alter table "workspace_members" drop constraint "workspace_members_workspace_id_foreign";`);

    this.addSql(`drop table if exists "shares" cascade;`);
    this.addSql(`drop table if exists "users" cascade;`);
    this.addSql(`drop table if exists "workspaces" cascade;`);
    this.addSql(`drop table if exists "access_tokens" cascade;`);
    this.addSql(`drop table if exists "workspace_members" cascade;`);
  }

}
