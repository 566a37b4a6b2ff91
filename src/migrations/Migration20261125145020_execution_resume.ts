import { Migration } from '@mikro-orm/migrations';

/**
 * Resuming interrupted executions (docs/api/workflows.md, "Crashes and recovery"): `attempts`
 * counts the claims of an execution, and fences its heartbeat, progress and settle to the current
 * one; `checkpoint` holds what an interrupted execution resumes from. An execution running now was
 * claimed once.
 */
export class Migration20261125145020_execution_resume extends Migration {

  override name = 'Migration20261125145020_execution_resume';

  override up(): void | Promise<void> {
    this.addSql(`alter table "workflow_executions" add "attempts" int not null default 0, add "checkpoint" jsonb null;`);
    this.addSql(`update "workflow_executions" set "attempts" = 1 where "status" = 'running';`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "workflow_executions" drop column "attempts", drop column "checkpoint";`);
  }

}
