import { Migration } from '@mikro-orm/migrations';

/**
 * Workflow schedule triggers on the one scheduler (docs/operations.md, "Scheduling"):
 * `workflow_schedules` holds each scheduled workflow's cron, zone and next due time (written on
 * every save, src/workflows/schedules.ts), and `workflow_executions.due_at` the due time a
 * scheduled execution fired for, unique per workflow, so a due time makes one execution across
 * processes. The rows are filled at the next start from the workflows themselves; the schedules
 * pg-boss held before are dropped then.
 */
export class Migration20261126100000_workflow_schedules extends Migration {

  override name = 'Migration20261126100000_workflow_schedules';

  override up(): void | Promise<void> {
    this.addSql(`create table "workflow_schedules" (
      "workflow_id" bigint primary key, "cron" varchar(200) not null, "timezone" varchar(100) not null,
      "next_run_at" timestamptz not null, "updated_at" timestamptz not null);`);
    this.addSql(`create index "workflow_schedules_next_run_at_index" on "workflow_schedules" ("next_run_at");`);
    this.addSql(`alter table "workflow_schedules" add constraint "workflow_schedules_workflow_id_foreign" foreign key ("workflow_id") references "workflows" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "workflow_executions" add column "due_at" timestamptz null;`);
    this.addSql(`create unique index "workflow_executions_workflow_id_due_at_unique" on "workflow_executions" ("workflow_id", "due_at") where "due_at" is not null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index if exists "workflow_executions_workflow_id_due_at_unique";`);
    this.addSql(`alter table "workflow_executions" drop column if exists "due_at";`);
    this.addSql(`drop table if exists "workflow_schedules" cascade;`);
  }

}
