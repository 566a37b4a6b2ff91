import { Migration } from '@mikro-orm/migrations';

/**
 * Command room tasks (docs/api/command-room.md): `command_room_tasks` and their firings,
 * `command_room_task_firings`, one per task and due time (the unique key that makes a due time
 * fire once across processes). The partial index on `next_run_at` is all the scheduler's tick
 * reads (src/command-room/engine.ts); the one on unfinished firings is all its sweep reads.
 */
export class Migration20261126090000_command_room extends Migration {

  override name = 'Migration20261126090000_command_room';

  override up(): void | Promise<void> {
    this.addSql(`create table "command_room_tasks" (
      "id" bigserial primary key, "uuid" uuid not null, "user_id" bigint not null, "workspace_id" bigint not null,
      "name" varchar(255) not null, "agent_id" bigint null, "workflow_id" bigint null, "input" jsonb not null,
      "schedule" varchar(100) not null, "timezone" varchar(100) not null default 'UTC', "run_at" timestamptz not null,
      "is_active" boolean not null default true, "next_run_at" timestamptz null, "last_run_at" timestamptz null,
      "last_status" text check ("last_status" in ('succeeded', 'failed', 'skipped')) null,
      "firings_count" int not null default 0,
      "created_at" timestamptz not null, "updated_at" timestamptz not null, "deleted_at" timestamptz null,
      constraint "command_room_tasks_one_target_check" check (("agent_id" is null) <> ("workflow_id" is null)));`);
    this.addSql(`alter table "command_room_tasks" add constraint "command_room_tasks_uuid_unique" unique ("uuid");`);
    this.addSql(`create index "command_room_tasks_user_id_workspace_id_created_at_index" on "command_room_tasks" ("user_id", "workspace_id", "created_at");`);
    this.addSql(`create index "command_room_tasks_due_index" on "command_room_tasks" ("next_run_at") where "is_active" and "deleted_at" is null and "next_run_at" is not null;`);
    this.addSql(`create index "command_room_tasks_agent_id_index" on "command_room_tasks" ("agent_id") where "agent_id" is not null;`);
    this.addSql(`create index "command_room_tasks_workflow_id_index" on "command_room_tasks" ("workflow_id") where "workflow_id" is not null;`);
    this.addSql(`alter table "command_room_tasks" add constraint "command_room_tasks_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "command_room_tasks" add constraint "command_room_tasks_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "command_room_tasks" add constraint "command_room_tasks_agent_id_foreign" foreign key ("agent_id") references "agents" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "command_room_tasks" add constraint "command_room_tasks_workflow_id_foreign" foreign key ("workflow_id") references "workflows" ("id") on update cascade on delete cascade;`);

    this.addSql(`create table "command_room_task_firings" (
      "id" bigserial primary key, "uuid" uuid not null, "task_id" bigint not null, "due_at" timestamptz not null,
      "fired_at" timestamptz null,
      "status" text check ("status" in ('queued', 'running', 'succeeded', 'failed', 'skipped')) not null default 'queued',
      "manual" boolean not null default false, "run_uuid" uuid null, "thread_uuid" uuid null, "execution_uuid" uuid null,
      "error" text null, "created_at" timestamptz not null, "updated_at" timestamptz not null);`);
    this.addSql(`alter table "command_room_task_firings" add constraint "command_room_task_firings_uuid_unique" unique ("uuid");`);
    this.addSql(`alter table "command_room_task_firings" add constraint "command_room_task_firings_task_id_due_at_unique" unique ("task_id", "due_at");`);
    this.addSql(`create index "command_room_task_firings_pending_index" on "command_room_task_firings" ("updated_at") where "status" in ('queued', 'running');`);
    this.addSql(`alter table "command_room_task_firings" add constraint "command_room_task_firings_task_id_foreign" foreign key ("task_id") references "command_room_tasks" ("id") on update cascade on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "command_room_task_firings" cascade;`);
    this.addSql(`drop table if exists "command_room_tasks" cascade;`);
  }

}
