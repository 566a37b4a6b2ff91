import { Migration } from '@mikro-orm/migrations';

/**
 * The agent leaderboard reads the runs of each agent in a period from `runs (agent_id, created_at)`:
 * that index now also carries the columns it aggregates (runner, status, latency, tokens), so the
 * read is an index-only scan instead of one heap page per run (docs/benchmarks.md, "Leaderboard
 * benchmark"). It replaces the plain index of the same keys, which every other reader of that
 * range (an agent's runs of the last 30 days) uses as before.
 */
export class Migration20261126120000_leaderboard extends Migration {

  override name = 'Migration20261126120000_leaderboard';

  override up(): void | Promise<void> {
    this.addSql(`drop index if exists "runs_agent_id_created_at_index";`);
    this.addSql(`create index "runs_agent_id_created_at_index" on "runs" ("agent_id", "created_at") include ("user_id", "status", "latency_ms", "total_tokens");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index if exists "runs_agent_id_created_at_index";`);
    this.addSql(`create index "runs_agent_id_created_at_index" on "runs" ("agent_id", "created_at");`);
  }

}
