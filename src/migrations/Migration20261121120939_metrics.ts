import { Migration } from '@mikro-orm/migrations';

export class Migration20261121120939_metrics extends Migration {

  override name = 'Migration20261121120939_metrics';

  override up(): void | Promise<void> {
    this.addSql(`create table "workflow_executions" ("id" bigserial primary key, "uuid" uuid not null, "workflow_id" bigint not null, "user_id" int null, "workspace_id" bigint not null, "status" text not null default 'queued', "mode" varchar(32) not null default 'manual', "input" jsonb null, "output" jsonb null, "error" text null, "started_at" timestamptz null, "finished_at" timestamptz null, "duration_ms" int null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "deleted_at" timestamptz null);`);
    this.addSql(`alter table "workflow_executions" add constraint "workflow_executions_uuid_unique" unique ("uuid");`);
    this.addSql(`create index "workflow_executions_workflow_id_created_at_index" on "workflow_executions" ("workflow_id", "created_at");`);
    this.addSql(`create index "workflow_executions_workspace_id_created_at_index" on "workflow_executions" ("workspace_id", "created_at");`);

    this.addSql(`create table "messages" ("id" bigserial primary key, "uuid" uuid not null, "thread_id" bigint not null, "user_id" int null, "workspace_id" bigint not null, "role" text not null, "content" text not null default '', "parts" jsonb not null default '[]', "model" varchar(255) null, "prompt_tokens" int null, "completion_tokens" int null, "total_tokens" int null, "latency_ms" int null, "cost" numeric(14,6) null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "deleted_at" timestamptz null);`);
    this.addSql(`alter table "messages" add constraint "messages_uuid_unique" unique ("uuid");`);
    this.addSql(`create index "messages_thread_id_created_at_index" on "messages" ("thread_id", "created_at");`);
    this.addSql(`create index "messages_workspace_id_created_at_index" on "messages" ("workspace_id", "created_at");`);

    this.addSql(`alter table "workflow_executions" add constraint "workflow_executions_workflow_id_foreign" foreign key ("workflow_id") references "workflows" ("id") on delete cascade;`);
    this.addSql(`alter table "workflow_executions" add constraint "workflow_executions_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete set null;`);
    this.addSql(`alter table "workflow_executions" add constraint "workflow_executions_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on delete cascade;`);
    this.addSql(`alter table "workflow_executions" add constraint "workflow_executions_status_check" check ("status" in ('queued', 'running', 'succeeded', 'failed', 'canceled'));`);

    this.addSql(`alter table "messages" add constraint "messages_thread_id_foreign" foreign key ("thread_id") references "threads" ("id") on delete cascade;`);
    this.addSql(`alter table "messages" add constraint "messages_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete set null;`);
    this.addSql(`alter table "messages" add constraint "messages_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on delete cascade;`);
    this.addSql(`alter table "messages" add constraint "messages_role_check" check ("role" in ('user', 'assistant', 'system', 'tool'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "workflow_executions" cascade;`);
    this.addSql(`drop table if exists "messages" cascade;`);
  }

}
