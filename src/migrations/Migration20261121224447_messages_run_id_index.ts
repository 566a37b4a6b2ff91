import { Migration } from '@mikro-orm/migrations';

/** Partial index of the messages that belong to a run: a run's answer reads them by `run_id`. */

export class Migration20261121224447_messages_run_id_index extends Migration {

  override name = 'Migration20261121224447_messages_run_id_index';

  override up(): void | Promise<void> {
    this.addSql(`create index "messages_run_id_index" on "messages" ("run_id") where "run_id" is not null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "messages_run_id_index";`);
  }

}
