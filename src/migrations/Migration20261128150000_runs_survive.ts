import { Migration } from '@mikro-orm/migrations';

/**
 * Runs that outlive their process (docs/api/runs.md, "Interrupted runs"): `runs.attempts` counts
 * the executions that claimed a run (1 at launch; a process that takes over a run whose process
 * died adds one, and only the current claimant may write the run); `runs.checkpoint` holds the
 * steps a running run has completed, so a takeover goes on after them. `tools.idempotent` marks a
 * tool whose calls are safe to repeat: a call whose result was lost with its process is made again.
 */
export class Migration20261128150000_runs_survive extends Migration {

  override name = 'Migration20261128150000_runs_survive';

  override up(): void | Promise<void> {
    this.addSql(`alter table "runs" add column "attempts" int not null default 1, add column "checkpoint" jsonb null;`);
    this.addSql(`alter table "tools" add column "idempotent" boolean not null default false;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "runs" drop column "attempts", drop column "checkpoint";`);
    this.addSql(`alter table "tools" drop column "idempotent";`);
  }

}
