import { Migration } from '@mikro-orm/migrations';

/** Partial index of the deleted threads, for the messages metrics. */
export class Migration20261121215458_deleted_threads_index extends Migration {

  override name = 'Migration20261121215458_deleted_threads_index';

  override up(): void | Promise<void> {
    this.addSql(`create index "threads_deleted_id_index" on "threads" ("id") where "deleted_at" is not null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "threads_deleted_id_index";`);
  }

}
