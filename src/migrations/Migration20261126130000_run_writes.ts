import { Migration } from '@mikro-orm/migrations';

/**
 * What every run writes costs less (docs/benchmarks.md, "Runs benchmark"):
 * - `runs_status_index` goes: no statement looks runs up by status alone (the recovery sweep
 *   reads `runs_unfinished_index`, the leaderboard `runs_agent_id_created_at_index`), yet every
 *   run inserted one entry at its start and another when it ended.
 * - `run_events` is keyed by `(run_id, seq)`, how its readers look events up, instead of a
 *   surrogate `id` that nothing reads: each event stored no longer draws from a sequence nor
 *   fills a second index.
 */
export class Migration20261126130000_run_writes extends Migration {

  override name = 'Migration20261126130000_run_writes';

  override up(): void | Promise<void> {
    this.addSql(`drop index if exists "runs_status_index";`);
    this.addSql(`alter table "run_events" drop constraint "run_events_run_id_seq_unique";`);
    this.addSql(`alter table "run_events" drop constraint "run_events_pkey";`);
    this.addSql(`alter table "run_events" drop column "id";`);
    this.addSql(`alter table "run_events" add constraint "run_events_pkey" primary key ("run_id", "seq");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "run_events" drop constraint "run_events_pkey";`);
    this.addSql(`alter table "run_events" add "id" bigserial;`);
    this.addSql(`alter table "run_events" add constraint "run_events_pkey" primary key ("id");`);
    this.addSql(`alter table "run_events" add constraint "run_events_run_id_seq_unique" unique ("run_id", "seq");`);
    this.addSql(`create index "runs_status_index" on "runs" ("status");`);
  }

}
