import { Migration } from '@mikro-orm/migrations'

/**
 * The trace a run or a workflow execution was recorded in (docs/operations.md, "Traces"): the
 * 32-hex-digit W3C trace id of the request or job that started it when tracing was on and the
 * trace sampled, else null. Nothing is backfilled: earlier rows had no trace.
 */
export class Migration20261129120000_trace_ids extends Migration {
  override name = 'Migration20261129120000_trace_ids'

  override up(): void | Promise<void> {
    this.addSql(`alter table "runs" add column "trace_id" varchar(32) null;`)
    this.addSql(`alter table "workflow_executions" add column "trace_id" varchar(32) null;`)
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "runs" drop column "trace_id";`)
    this.addSql(`alter table "workflow_executions" drop column "trace_id";`)
  }
}
