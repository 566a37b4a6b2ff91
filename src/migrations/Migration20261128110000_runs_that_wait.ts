import { Migration } from '@mikro-orm/migrations';

/**
 * Runs that wait (docs/api/runs.md, "States", "Approvals", "Busy threads"): tools that need a
 * person's approval (`requires_approval`); the status
 * `awaiting_approval`; `run_approvals`, one row per tool call a run waits on a person for; at
 * most one active (`running` or `awaiting_approval`) run per thread, enforced by a unique partial
 * index so no two processes can run one thread at once; and the index of a thread's queue.
 */
export class Migration20261128110000_runs_that_wait extends Migration {

  override name = 'Migration20261128110000_runs_that_wait';

  override up(): void | Promise<void> {
    this.addSql(`alter table "tools" add column "requires_approval" boolean not null default false;`);
    // The local test model calls a tool when told to ("/call <tool> <JSON>"), so approvals can be tried offline.
    this.addSql(`update "large_language_models" set "supports_tools" = true,
      "description" = 'A built-in offline test model: it answers with a fixed, deterministic text derived from the input, and calls a tool only when told to (/call <tool> <JSON arguments>). It lets the service run with no API key.'
      where "slug" = 'local-test-model';`);
    this.addSql(`alter table "runs" drop constraint if exists "runs_status_check";`);
    this.addSql(`alter table "runs" add constraint "runs_status_check" check ("status" in ('queued', 'running', 'awaiting_approval', 'succeeded', 'failed', 'canceled'));`);
    // Runs of one thread that overlapped before this release end `canceled`, keeping the newest.
    this.addSql(`update "runs" set "status" = 'canceled', "finished_at" = now(), "updated_at" = now()
      where "status" = 'running' and "thread_id" is not null
        and "id" <> (select max(o."id") from "runs" o where o."thread_id" = "runs"."thread_id" and o."status" = 'running');`);
    this.addSql(`create unique index "runs_thread_active_index" on "runs" ("thread_id") where "status" in ('running', 'awaiting_approval');`);
    this.addSql(`create index "runs_thread_queued_index" on "runs" ("thread_id", "id") where "status" = 'queued';`);
    this.addSql(`create table "run_approvals" (
      "id" bigserial primary key,
      "uuid" uuid not null,
      "run_id" bigint not null,
      "tool_call_id" varchar(255) not null,
      "tool_kind" text check ("tool_kind" in ('api', 'mcp', 'workflow')) not null,
      "tool_name" varchar(255) not null,
      "tool_id" bigint null,
      "workflow_id" bigint null,
      "arguments" jsonb not null,
      "input_schema" jsonb null,
      "status" text check ("status" in ('pending', 'approved', 'denied', 'expired', 'canceled')) not null default 'pending',
      "decided_by_id" bigint null,
      "decided_at" timestamptz null,
      "reason" text null,
      "resumed_at" timestamptz null,
      "expires_at" timestamptz not null,
      "created_at" timestamptz not null,
      "updated_at" timestamptz not null);`);
    this.addSql(`alter table "run_approvals" add constraint "run_approvals_uuid_unique" unique ("uuid");`);
    this.addSql(`alter table "run_approvals" add constraint "run_approvals_run_id_tool_call_id_unique" unique ("run_id", "tool_call_id");`);
    this.addSql(`create index "run_approvals_pending_index" on "run_approvals" ("expires_at") where "status" = 'pending';`);
    this.addSql(`alter table "run_approvals" add constraint "run_approvals_run_id_foreign" foreign key ("run_id") references "runs" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "run_approvals" add constraint "run_approvals_tool_id_foreign" foreign key ("tool_id") references "tools" ("id") on update cascade on delete set null;`);
    this.addSql(`alter table "run_approvals" add constraint "run_approvals_workflow_id_foreign" foreign key ("workflow_id") references "workflows" ("id") on update cascade on delete set null;`);
    this.addSql(`alter table "run_approvals" add constraint "run_approvals_decided_by_id_foreign" foreign key ("decided_by_id") references "users" ("id") on update cascade on delete set null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "run_approvals" cascade;`);
    this.addSql(`alter table "tools" drop column "requires_approval";`);
    this.addSql(`update "large_language_models" set "supports_tools" = false where "slug" = 'local-test-model';`);
    this.addSql(`drop index if exists "runs_thread_queued_index";`);
    this.addSql(`drop index if exists "runs_thread_active_index";`);
    this.addSql(`update "runs" set "status" = 'canceled', "finished_at" = now() where "status" = 'awaiting_approval';`);
    this.addSql(`alter table "runs" drop constraint if exists "runs_status_check";`);
    this.addSql(`alter table "runs" add constraint "runs_status_check" check ("status" in ('queued', 'running', 'succeeded', 'failed', 'canceled'));`);
  }

}
