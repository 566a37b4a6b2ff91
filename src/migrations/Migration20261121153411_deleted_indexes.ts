import { Migration } from '@mikro-orm/migrations';

/** Partial indexes of the deleted agents and workflows, for the threads and executions metrics. */
export class Migration20261121153411_deleted_indexes extends Migration {

  override name = 'Migration20261121153411_deleted_indexes';

  override up(): void | Promise<void> {
    this.addSql(`create index "workflows_deleted_id_index" on "workflows" ("id") where "deleted_at" is not null;`);

    this.addSql(`create index "agents_deleted_id_index" on "agents" ("id") where "deleted_at" is not null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "agents_deleted_id_index";`);

    this.addSql(`drop index "workflows_deleted_id_index";`);
  }

}
