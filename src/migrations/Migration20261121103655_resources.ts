import { Migration } from '@mikro-orm/migrations';

/** Agents, prompts, providers, accounts, tools, workflows, media, categories, favorites, threads. */

export class Migration20261121103655_resources extends Migration {

  override name = 'Migration20261121103655_resources';

  override up(): void | Promise<void> {
    this.addSql(`create table "categories" ("id" bigserial primary key, "uuid" uuid not null, "slug" varchar(80) not null, "name" varchar(255) not null, "description" text not null default '', "position" int not null default 0, "created_at" timestamptz not null, "updated_at" timestamptz not null);`);
    this.addSql(`alter table "categories" add constraint "categories_uuid_unique" unique ("uuid");`);
    this.addSql(`alter table "categories" add constraint "categories_slug_unique" unique ("slug");`);

    this.addSql(`create table "workflows" ("id" bigserial primary key, "uuid" uuid not null, "name" varchar(255) not null, "description" text not null default '', "profile_photo_key" varchar(512) null, "profile_photo_config" jsonb null, "visibility" text not null default 'private', "is_active" boolean not null default false, "is_template" boolean not null default false, "nodes" jsonb not null default '[]', "edges" jsonb not null default '[]', "settings" jsonb not null default '{}', "static_data" jsonb not null default '{}', "pin_data" jsonb not null default '{}', "trigger_count" int not null default 0, "user_id" int not null, "workspace_id" bigint not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "deleted_at" timestamptz null);`);
    this.addSql(`alter table "workflows" add constraint "workflows_uuid_unique" unique ("uuid");`);
    this.addSql(`create index "workflows_workspace_id_created_at_index" on "workflows" ("workspace_id", "created_at");`);
    this.addSql(`create index "workflows_user_id_index" on "workflows" ("user_id");`);

    this.addSql(`create table "workflow_categories" ("id" bigserial primary key, "workflow_id" bigint not null, "category_id" bigint not null);`);
    this.addSql(`create index "workflow_categories_category_id_index" on "workflow_categories" ("category_id");`);
    this.addSql(`alter table "workflow_categories" add constraint "workflow_categories_workflow_id_category_id_unique" unique ("workflow_id", "category_id");`);

    this.addSql(`create table "favorites" ("id" bigserial primary key, "user_id" int not null, "resource_type" varchar(64) not null, "resource_id" bigint not null, "created_at" timestamptz not null);`);
    this.addSql(`create index "favorites_resource_type_resource_id_index" on "favorites" ("resource_type", "resource_id");`);
    this.addSql(`alter table "favorites" add constraint "favorites_user_id_resource_type_resource_id_unique" unique ("user_id", "resource_type", "resource_id");`);

    this.addSql(`create table "providers" ("id" bigserial primary key, "uuid" uuid not null, "slug" varchar(80) not null, "name" varchar(255) not null, "description" text not null default '', "type" text not null, "driver" text not null, "base_url" varchar(2048) null, "auth_scheme" text not null default 'bearer', "auth_parameter" varchar(255) null, "is_builtin" boolean not null default false, "visibility" text not null default 'workspace', "metadata" jsonb not null default '{}', "user_id" int null, "workspace_id" bigint null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "deleted_at" timestamptz null);`);
    this.addSql(`alter table "providers" add constraint "providers_uuid_unique" unique ("uuid");`);
    this.addSql(`create index "providers_workspace_id_created_at_index" on "providers" ("workspace_id", "created_at");`);
    this.addSql(`create unique index "providers_workspace_id_slug_unique" on "providers" (coalesce("workspace_id", 0), "slug") where "deleted_at" is null;`);

    this.addSql(`create table "tools" ("id" bigserial primary key, "uuid" uuid not null, "name" varchar(255) not null, "description" text not null default '', "profile_photo_key" varchar(512) null, "profile_photo_config" jsonb null, "visibility" text not null default 'private', "type" text not null default 'api', "provider_id" bigint null, "method" text not null default 'GET', "url" varchar(2048) not null, "input_schema" jsonb not null default '{}', "credits" numeric(12,4) not null default 0, "metadata" jsonb not null default '{}', "user_id" int not null, "workspace_id" bigint not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "deleted_at" timestamptz null);`);
    this.addSql(`alter table "tools" add constraint "tools_uuid_unique" unique ("uuid");`);
    this.addSql(`create index "tools_workspace_id_created_at_index" on "tools" ("workspace_id", "created_at");`);
    this.addSql(`create index "tools_user_id_index" on "tools" ("user_id");`);

    this.addSql(`create table "prompts" ("id" bigserial primary key, "uuid" uuid not null, "name" varchar(255) not null, "description" text not null default '', "profile_photo_key" varchar(512) null, "profile_photo_config" jsonb null, "visibility" text not null default 'private', "content" text not null, "metadata" jsonb not null default '{}', "user_id" int not null, "workspace_id" bigint not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "deleted_at" timestamptz null);`);
    this.addSql(`alter table "prompts" add constraint "prompts_uuid_unique" unique ("uuid");`);
    this.addSql(`create index "prompts_workspace_id_created_at_index" on "prompts" ("workspace_id", "created_at");`);
    this.addSql(`create index "prompts_user_id_index" on "prompts" ("user_id");`);

    this.addSql(`create table "media" ("id" bigserial primary key, "uuid" uuid not null, "key" varchar(255) not null, "disk" varchar(32) not null default 'local', "path" varchar(1024) not null, "original_name" varchar(255) not null, "mime_type" varchar(255) not null, "size" bigint not null, "user_id" int not null, "workspace_id" bigint not null, "created_at" timestamptz not null, "updated_at" timestamptz not null);`);
    this.addSql(`alter table "media" add constraint "media_uuid_unique" unique ("uuid");`);
    this.addSql(`alter table "media" add constraint "media_key_unique" unique ("key");`);
    this.addSql(`create index "media_workspace_id_created_at_index" on "media" ("workspace_id", "created_at");`);

    this.addSql(`create table "agents" ("id" bigserial primary key, "uuid" uuid not null, "name" varchar(255) not null, "description" text not null default '', "profile_photo_key" varchar(512) null, "profile_photo_config" jsonb null, "visibility" text not null default 'private', "instruction" text not null default '', "metadata" jsonb not null default '{}', "is_template" boolean not null default false, "usage_count" int not null default 0, "last_used_at" timestamptz null, "user_id" int not null, "workspace_id" bigint not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "deleted_at" timestamptz null);`);
    this.addSql(`alter table "agents" add constraint "agents_uuid_unique" unique ("uuid");`);
    this.addSql(`create index "agents_workspace_id_created_at_index" on "agents" ("workspace_id", "created_at");`);
    this.addSql(`create index "agents_user_id_index" on "agents" ("user_id");`);

    this.addSql(`create table "threads" ("id" bigserial primary key, "uuid" uuid not null, "name" varchar(255) null, "agent_id" bigint not null, "messages_count" int not null default 0, "metadata" jsonb not null default '{}', "user_id" int not null, "workspace_id" bigint not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "deleted_at" timestamptz null);`);
    this.addSql(`alter table "threads" add constraint "threads_uuid_unique" unique ("uuid");`);
    this.addSql(`create index "threads_workspace_id_created_at_index" on "threads" ("workspace_id", "created_at");`);
    this.addSql(`create index "threads_agent_id_index" on "threads" ("agent_id");`);
    this.addSql(`create index "threads_user_id_index" on "threads" ("user_id");`);

    this.addSql(`create table "agent_workflows" ("id" bigserial primary key, "agent_id" bigint not null, "workflow_id" bigint not null, "position" int not null default 0, "created_at" timestamptz not null);`);
    this.addSql(`create index "agent_workflows_workflow_id_index" on "agent_workflows" ("workflow_id");`);
    this.addSql(`alter table "agent_workflows" add constraint "agent_workflows_agent_id_workflow_id_unique" unique ("agent_id", "workflow_id");`);

    this.addSql(`create table "agent_files" ("id" bigserial primary key, "agent_id" bigint not null, "media_id" bigint not null, "position" int not null default 0, "created_at" timestamptz not null);`);
    this.addSql(`alter table "agent_files" add constraint "agent_files_agent_id_media_id_unique" unique ("agent_id", "media_id");`);

    this.addSql(`create table "agent_categories" ("id" bigserial primary key, "agent_id" bigint not null, "category_id" bigint not null);`);
    this.addSql(`create index "agent_categories_category_id_index" on "agent_categories" ("category_id");`);
    this.addSql(`alter table "agent_categories" add constraint "agent_categories_agent_id_category_id_unique" unique ("agent_id", "category_id");`);

    this.addSql(`create table "accounts" ("id" bigserial primary key, "uuid" uuid not null, "name" varchar(255) not null, "provider_id" bigint not null, "visibility" text not null default 'private', "secret_ciphertext" text null, "secret_key_id" varchar(64) null, "secret_hint" varchar(32) null, "base_url" varchar(2048) null, "metadata" jsonb not null default '{}', "user_id" int not null, "workspace_id" bigint not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "deleted_at" timestamptz null);`);
    this.addSql(`alter table "accounts" add constraint "accounts_uuid_unique" unique ("uuid");`);
    this.addSql(`create index "accounts_workspace_id_created_at_index" on "accounts" ("workspace_id", "created_at");`);
    this.addSql(`create index "accounts_provider_id_index" on "accounts" ("provider_id");`);

    this.addSql(`create table "agent_tools" ("id" bigserial primary key, "agent_id" bigint not null, "tool_id" bigint not null, "account_id" bigint null, "position" int not null default 0, "created_at" timestamptz not null);`);
    this.addSql(`create index "agent_tools_tool_id_index" on "agent_tools" ("tool_id");`);
    this.addSql(`alter table "agent_tools" add constraint "agent_tools_agent_id_tool_id_unique" unique ("agent_id", "tool_id");`);

    this.addSql(`alter table "workflows" add constraint "workflows_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`);
    this.addSql(`alter table "workflows" add constraint "workflows_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on delete cascade;`);
    this.addSql(`alter table "workflows" add constraint "workflows_visibility_check" check ("visibility" in ('public', 'private', 'workspace'));`);

    this.addSql(`alter table "workflow_categories" add constraint "workflow_categories_workflow_id_foreign" foreign key ("workflow_id") references "workflows" ("id") on delete cascade;`);
    this.addSql(`alter table "workflow_categories" add constraint "workflow_categories_category_id_foreign" foreign key ("category_id") references "categories" ("id") on delete cascade;`);

    this.addSql(`alter table "favorites" add constraint "favorites_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`);

    this.addSql(`alter table "providers" add constraint "providers_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`);
    this.addSql(`alter table "providers" add constraint "providers_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on delete cascade;`);
    this.addSql(`alter table "providers" add constraint "providers_type_check" check ("type" in ('llm', 'tool'));`);
    this.addSql(`alter table "providers" add constraint "providers_driver_check" check ("driver" in ('openai', 'anthropic', 'openai-compatible', 'ollama', 'local', 'http'));`);
    this.addSql(`alter table "providers" add constraint "providers_auth_scheme_check" check ("auth_scheme" in ('bearer', 'header', 'query', 'basic', 'none'));`);
    this.addSql(`alter table "providers" add constraint "providers_visibility_check" check ("visibility" in ('public', 'private', 'workspace'));`);

    this.addSql(`alter table "tools" add constraint "tools_provider_id_foreign" foreign key ("provider_id") references "providers" ("id") on delete set null;`);
    this.addSql(`alter table "tools" add constraint "tools_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`);
    this.addSql(`alter table "tools" add constraint "tools_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on delete cascade;`);
    this.addSql(`alter table "tools" add constraint "tools_visibility_check" check ("visibility" in ('public', 'private', 'workspace'));`);
    this.addSql(`alter table "tools" add constraint "tools_type_check" check ("type" in ('api'));`);
    this.addSql(`alter table "tools" add constraint "tools_method_check" check ("method" in ('GET', 'POST', 'PUT', 'PATCH', 'DELETE'));`);

    this.addSql(`alter table "prompts" add constraint "prompts_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`);
    this.addSql(`alter table "prompts" add constraint "prompts_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on delete cascade;`);
    this.addSql(`alter table "prompts" add constraint "prompts_visibility_check" check ("visibility" in ('public', 'private', 'workspace'));`);

    this.addSql(`alter table "media" add constraint "media_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`);
    this.addSql(`alter table "media" add constraint "media_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on delete cascade;`);

    this.addSql(`alter table "agents" add constraint "agents_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`);
    this.addSql(`alter table "agents" add constraint "agents_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on delete cascade;`);
    this.addSql(`alter table "agents" add constraint "agents_visibility_check" check ("visibility" in ('public', 'private', 'workspace'));`);

    this.addSql(`alter table "threads" add constraint "threads_agent_id_foreign" foreign key ("agent_id") references "agents" ("id") on delete cascade;`);
    this.addSql(`alter table "threads" add constraint "threads_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`);
    this.addSql(`alter table "threads" add constraint "threads_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on delete cascade;`);

    this.addSql(`alter table "agent_workflows" add constraint "agent_workflows_agent_id_foreign" foreign key ("agent_id") references "agents" ("id") on delete cascade;`);
    this.addSql(`alter table "agent_workflows" add constraint "agent_workflows_workflow_id_foreign" foreign key ("workflow_id") references "workflows" ("id") on delete cascade;`);

    this.addSql(`alter table "agent_files" add constraint "agent_files_agent_id_foreign" foreign key ("agent_id") references "agents" ("id") on delete cascade;`);
    this.addSql(`alter table "agent_files" add constraint "agent_files_media_id_foreign" foreign key ("media_id") references "media" ("id") on delete cascade;`);

    this.addSql(`alter table "agent_categories" add constraint "agent_categories_agent_id_foreign" foreign key ("agent_id") references "agents" ("id") on delete cascade;`);
    this.addSql(`alter table "agent_categories" add constraint "agent_categories_category_id_foreign" foreign key ("category_id") references "categories" ("id") on delete cascade;`);

    this.addSql(`alter table "accounts" add constraint "accounts_provider_id_foreign" foreign key ("provider_id") references "providers" ("id") on delete cascade;`);
    this.addSql(`alter table "accounts" add constraint "accounts_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`);
    this.addSql(`alter table "accounts" add constraint "accounts_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on delete cascade;`);
    this.addSql(`alter table "accounts" add constraint "accounts_visibility_check" check ("visibility" in ('private', 'workspace'));`);

    this.addSql(`alter table "agent_tools" add constraint "agent_tools_agent_id_foreign" foreign key ("agent_id") references "agents" ("id") on delete cascade;`);
    this.addSql(`alter table "agent_tools" add constraint "agent_tools_tool_id_foreign" foreign key ("tool_id") references "tools" ("id") on delete cascade;`);
    this.addSql(`alter table "agent_tools" add constraint "agent_tools_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete set null;`);

    // Seeds: the built-in providers (docs/api/resources.md) and the category catalogue.
    this.addSql(`insert into "providers" ("uuid", "slug", "name", "description", "type", "driver", "base_url", "auth_scheme", "auth_parameter", "is_builtin", "visibility", "created_at", "updated_at") values
      (gen_random_uuid(), 'openai', 'OpenAI', 'OpenAI models through the AI SDK.', 'llm', 'openai', 'https://api.openai.com/v1', 'bearer', null, true, 'public', now(), now()),
      (gen_random_uuid(), 'anthropic', 'Anthropic', 'Anthropic models through the AI SDK.', 'llm', 'anthropic', 'https://api.anthropic.com/v1', 'header', 'x-api-key', true, 'public', now(), now()),
      (gen_random_uuid(), 'openai-compatible', 'OpenAI-compatible', 'Any server that speaks the OpenAI API (vLLM, LM Studio, ...): the account gives the base URL.', 'llm', 'openai-compatible', null, 'bearer', null, true, 'public', now(), now()),
      (gen_random_uuid(), 'ollama', 'Ollama', 'A local Ollama server through its OpenAI-compatible API.', 'llm', 'ollama', 'http://127.0.0.1:11434/v1', 'none', null, true, 'public', now(), now()),
      (gen_random_uuid(), 'local', 'Local test model', 'A built-in offline test model that does not think: it answers without any API key.', 'llm', 'local', null, 'none', null, true, 'public', now(), now());`);
    this.addSql(`insert into "categories" ("uuid", "slug", "name", "description", "position", "created_at", "updated_at") values
      (gen_random_uuid(), 'productivity', 'Productivity', 'Planning, summaries and everyday office work.', 1, now(), now()),
      (gen_random_uuid(), 'writing', 'Writing', 'Drafting, editing and rewriting text.', 2, now(), now()),
      (gen_random_uuid(), 'marketing', 'Marketing', 'Campaigns, copy and social media.', 3, now(), now()),
      (gen_random_uuid(), 'sales', 'Sales', 'Prospecting, outreach and deal support.', 4, now(), now()),
      (gen_random_uuid(), 'customer-support', 'Customer support', 'Answering customers and triaging tickets.', 5, now(), now()),
      (gen_random_uuid(), 'engineering', 'Engineering', 'Code, reviews and technical documentation.', 6, now(), now()),
      (gen_random_uuid(), 'data-analytics', 'Data and analytics', 'Reports, queries and insights.', 7, now(), now()),
      (gen_random_uuid(), 'research', 'Research', 'Finding, reading and comparing sources.', 8, now(), now()),
      (gen_random_uuid(), 'education', 'Education', 'Teaching, tutoring and learning material.', 9, now(), now()),
      (gen_random_uuid(), 'human-resources', 'Human resources', 'Hiring, onboarding and people operations.', 10, now(), now()),
      (gen_random_uuid(), 'finance', 'Finance', 'Budgets, invoices and financial analysis.', 11, now(), now()),
      (gen_random_uuid(), 'design', 'Design', 'Visual ideas, briefs and feedback.', 12, now(), now()),
      (gen_random_uuid(), 'operations', 'Operations', 'Processes, automation and internal tooling.', 13, now(), now()),
      (gen_random_uuid(), 'personal', 'Personal', 'Personal assistants and everyday life.', 14, now(), now());`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "workflow_categories" drop constraint "workflow_categories_category_id_foreign";`);
    this.addSql(`alter table "agent_categories" drop constraint "agent_categories_category_id_foreign";`);
    this.addSql(`alter table "workflow_categories" drop constraint "workflow_categories_workflow_id_foreign";`);
    this.addSql(`alter table "agent_workflows" drop constraint "agent_workflows_workflow_id_foreign";`);
    this.addSql(`alter table "tools" drop constraint "tools_provider_id_foreign";`);
    this.addSql(`alter table "accounts" drop constraint "accounts_provider_id_foreign";`);
    this.addSql(`alter table "agent_tools" drop constraint "agent_tools_tool_id_foreign";`);
    this.addSql(`alter table "agent_files" drop constraint "agent_files_media_id_foreign";`);
    this.addSql(`alter table "threads" drop constraint "threads_agent_id_foreign";`);
    this.addSql(`alter table "agent_workflows" drop constraint "agent_workflows_agent_id_foreign";`);
    this.addSql(`alter table "agent_files" drop constraint "agent_files_agent_id_foreign";`);
    this.addSql(`alter table "agent_categories" drop constraint "agent_categories_agent_id_foreign";`);
    this.addSql(`alter table "agent_tools" drop constraint "agent_tools_agent_id_foreign";`);
    this.addSql(`alter table "agent_tools" drop constraint "agent_tools_account_id_foreign";`);

    this.addSql(`drop table if exists "categories" cascade;`);
    this.addSql(`drop table if exists "workflows" cascade;`);
    this.addSql(`drop table if exists "workflow_categories" cascade;`);
    this.addSql(`drop table if exists "favorites" cascade;`);
    this.addSql(`drop table if exists "providers" cascade;`);
    this.addSql(`drop table if exists "tools" cascade;`);
    this.addSql(`drop table if exists "prompts" cascade;`);
    this.addSql(`drop table if exists "media" cascade;`);
    this.addSql(`drop table if exists "agents" cascade;`);
    this.addSql(`drop table if exists "threads" cascade;`);
    this.addSql(`drop table if exists "agent_workflows" cascade;`);
    this.addSql(`drop table if exists "agent_files" cascade;`);
    this.addSql(`drop table if exists "agent_categories" cascade;`);
    this.addSql(`drop table if exists "accounts" cascade;`);
    this.addSql(`drop table if exists "agent_tools" cascade;`);
  }

}
