import { Migration } from '@mikro-orm/migrations';

/**
 * Heartbeats of runs: the process executing a run refreshes `heartbeat_at`, and any process ends a
 * run whose heartbeat is stale `interrupted` (src/runs/run-manager.ts); the partial index keeps
 * that sweep to the unfinished runs.
 */
export class Migration20261125144244_run_heartbeats extends Migration {

  override name = 'Migration20261125144244_run_heartbeats';

  override up(): void | Promise<void> {
    this.addSql(`alter table "runs" add "heartbeat_at" timestamptz null;`);
    this.addSql(`create index "runs_unfinished_index" on "runs" ("heartbeat_at") where "status" in ('queued', 'running');`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "runs_unfinished_index";`);
    this.addSql(`alter table "runs" drop column "heartbeat_at";`);
  }

}
