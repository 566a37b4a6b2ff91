import { Migration } from '@mikro-orm/migrations';

/** Model catalog (seeded), runs and their event log, memories, messages.run_id. */
export class Migration20261121135951_runs extends Migration {

  override name = 'Migration20261121135951_runs';

  override up(): void | Promise<void> {
    this.addSql(`create table "large_language_models" ("id" bigserial primary key, "uuid" uuid not null, "slug" varchar(120) not null, "name" varchar(255) not null, "description" text not null default '', "provider_id" bigint not null, "model_id" varchar(255) not null, "context_window" int not null, "max_output_tokens" int not null, "input_price_per_million" numeric(12,6) not null default 0, "output_price_per_million" numeric(12,6) not null default 0, "supports_tools" boolean not null default false, "supports_vision" boolean not null default false, "supports_json_output" boolean not null default false, "is_builtin" boolean not null default false, "user_id" int null, "workspace_id" bigint null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "deleted_at" timestamptz null);`);
    this.addSql(`alter table "large_language_models" add constraint "large_language_models_uuid_unique" unique ("uuid");`);
    this.addSql(`create index "large_language_models_provider_id_index" on "large_language_models" ("provider_id");`);
    this.addSql(`create index "large_language_models_workspace_id_created_at_index" on "large_language_models" ("workspace_id", "created_at");`);
    this.addSql(`create unique index "large_language_models_workspace_id_slug_unique" on "large_language_models" (coalesce("workspace_id", 0), "slug") where "deleted_at" is null;`);

    this.addSql(`create table "runs" ("id" bigserial primary key, "uuid" uuid not null, "kind" text not null, "status" text not null default 'queued', "agent_id" bigint null, "thread_id" bigint null, "prompt_id" bigint null, "model" varchar(255) null, "input" jsonb null, "output" text null, "error" jsonb null, "background" boolean not null default false, "prompt_tokens" int not null default 0, "completion_tokens" int not null default 0, "total_tokens" int not null default 0, "cost" numeric(14,6) not null default 0, "events_count" int not null default 0, "started_at" timestamptz null, "finished_at" timestamptz null, "latency_ms" int null, "first_event_ms" int null, "user_id" int null, "workspace_id" bigint not null, "created_at" timestamptz not null, "updated_at" timestamptz not null);`);
    this.addSql(`alter table "runs" add constraint "runs_uuid_unique" unique ("uuid");`);
    this.addSql(`create index "runs_workspace_id_created_at_index" on "runs" ("workspace_id", "created_at");`);
    this.addSql(`create index "runs_agent_id_created_at_index" on "runs" ("agent_id", "created_at");`);
    this.addSql(`create index "runs_thread_id_index" on "runs" ("thread_id");`);
    this.addSql(`create index "runs_status_index" on "runs" ("status");`);

    this.addSql(`create table "run_events" ("id" bigserial primary key, "run_id" bigint not null, "seq" int not null, "type" varchar(40) not null, "data" jsonb not null, "created_at" timestamptz not null);`);
    this.addSql(`alter table "run_events" add constraint "run_events_run_id_seq_unique" unique ("run_id", "seq");`);

    this.addSql(`create table "memories" ("id" bigserial primary key, "uuid" uuid not null, "content" text not null, "agent_id" bigint null, "run_id" bigint null, "user_id" int not null, "workspace_id" bigint not null, "created_at" timestamptz not null, "updated_at" timestamptz not null);`);
    this.addSql(`alter table "memories" add constraint "memories_uuid_unique" unique ("uuid");`);
    this.addSql(`create index "memories_user_id_agent_id_index" on "memories" ("user_id", "agent_id");`);
    this.addSql(`create index "memories_workspace_id_created_at_index" on "memories" ("workspace_id", "created_at");`);

    this.addSql(`alter table "messages" add "run_id" bigint null;`);
    this.addSql(`alter table "messages" add constraint "messages_run_id_foreign" foreign key ("run_id") references "runs" ("id") on delete set null;`);

    this.addSql(`alter table "large_language_models" add constraint "large_language_models_provider_id_foreign" foreign key ("provider_id") references "providers" ("id") on delete cascade;`);
    this.addSql(`alter table "large_language_models" add constraint "large_language_models_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`);
    this.addSql(`alter table "large_language_models" add constraint "large_language_models_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on delete cascade;`);

    this.addSql(`alter table "runs" add constraint "runs_agent_id_foreign" foreign key ("agent_id") references "agents" ("id") on delete set null;`);
    this.addSql(`alter table "runs" add constraint "runs_thread_id_foreign" foreign key ("thread_id") references "threads" ("id") on delete set null;`);
    this.addSql(`alter table "runs" add constraint "runs_prompt_id_foreign" foreign key ("prompt_id") references "prompts" ("id") on delete set null;`);
    this.addSql(`alter table "runs" add constraint "runs_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete set null;`);
    this.addSql(`alter table "runs" add constraint "runs_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on delete cascade;`);
    this.addSql(`alter table "runs" add constraint "runs_kind_check" check ("kind" in ('agent', 'thread', 'prompt'));`);
    this.addSql(`alter table "runs" add constraint "runs_status_check" check ("status" in ('queued', 'running', 'succeeded', 'failed', 'canceled'));`);

    this.addSql(`alter table "run_events" add constraint "run_events_run_id_foreign" foreign key ("run_id") references "runs" ("id") on delete cascade;`);

    this.addSql(`alter table "memories" add constraint "memories_agent_id_foreign" foreign key ("agent_id") references "agents" ("id") on delete set null;`);
    this.addSql(`alter table "memories" add constraint "memories_run_id_foreign" foreign key ("run_id") references "runs" ("id") on delete set null;`);
    this.addSql(`alter table "memories" add constraint "memories_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`);
    this.addSql(`alter table "memories" add constraint "memories_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on delete cascade;`);

    // The built-in catalog: prices in US dollars per million tokens.
    this.addSql(`insert into "large_language_models" ("uuid", "slug", "name", "description", "provider_id", "model_id", "context_window", "max_output_tokens", "input_price_per_million", "output_price_per_million", "supports_tools", "supports_vision", "supports_json_output", "is_builtin", "created_at", "updated_at")
      select gen_random_uuid(), m.slug, m.name, m.description, p.id, m.model_id, m.context_window, m.max_output_tokens, m.input_price, m.output_price, m.tools, m.vision, m.json, true, now(), now()
      from (values
        ('gpt-4o-mini', 'GPT-4o mini', 'Fast, inexpensive OpenAI model.', 'openai', 'gpt-4o-mini', 128000, 16384, 0.15, 0.60, true, true, true),
        ('gpt-4o', 'GPT-4o', 'OpenAI flagship multimodal model.', 'openai', 'gpt-4o', 128000, 16384, 2.50, 10.00, true, true, true),
        ('gpt-4.1', 'GPT-4.1', 'OpenAI model with a long context window.', 'openai', 'gpt-4.1', 1047576, 32768, 2.00, 8.00, true, true, true),
        ('gpt-4.1-mini', 'GPT-4.1 mini', 'Smaller GPT-4.1.', 'openai', 'gpt-4.1-mini', 1047576, 32768, 0.40, 1.60, true, true, true),
        ('claude-sonnet-4-5', 'Claude Sonnet 4.5', 'Anthropic model for agents and coding.', 'anthropic', 'claude-sonnet-4-5', 200000, 64000, 3.00, 15.00, true, true, false),
        ('claude-haiku-4-5', 'Claude Haiku 4.5', 'Fast Anthropic model.', 'anthropic', 'claude-haiku-4-5', 200000, 64000, 1.00, 5.00, true, true, false),
        ('openai-compatible-default', 'OpenAI-compatible server model', 'Whatever model the OpenAI-compatible server of the account (or OPENAI_COMPATIBLE_BASE_URL) serves as "default"; add custom models for others.', 'openai-compatible', 'default', 32768, 4096, 0, 0, true, false, true),
        ('llama3.2', 'Llama 3.2 (Ollama)', 'Llama 3.2 served by a local Ollama.', 'ollama', 'llama3.2', 131072, 4096, 0, 0, true, false, true),
        ('local-test-model', 'Local test model (does not think)', 'A built-in offline test model: it answers with a fixed, deterministic text derived from the input and never calls tools. It lets the service run with no API key.', 'local', 'local-test-model', 8192, 1024, 0, 0, false, false, false)
      ) as m(slug, name, description, provider_slug, model_id, context_window, max_output_tokens, input_price, output_price, tools, vision, json)
      join "providers" p on p.slug = m.provider_slug and p.is_builtin;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "run_events" drop constraint "run_events_run_id_foreign";`);
    this.addSql(`alter table "messages" drop constraint "messages_run_id_foreign";`);
    this.addSql(`alter table "memories" drop constraint "memories_run_id_foreign";`);

    this.addSql(`drop table if exists "large_language_models" cascade;`);
    this.addSql(`drop table if exists "runs" cascade;`);
    this.addSql(`drop table if exists "run_events" cascade;`);
    this.addSql(`drop table if exists "memories" cascade;`);

    this.addSql(`alter table "messages" drop column "run_id";`);
  }

}
