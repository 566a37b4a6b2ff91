import { Migration } from '@mikro-orm/migrations';

/**
 * Datasets and their items (docs/api/evaluations.md, "Datasets"; entities/dataset.entity.ts).
 * A dataset is a tenant-owned resource like a prompt (owner, workspace, visibility, soft delete;
 * shares are rows of `shares` with `resource_type = 'datasets'`). Its items are hard-deleted, and
 * go with the dataset's row through the foreign key when its workspace is deleted.
 *
 * `items_count` is kept by the service in the transaction that adds or deletes items; the check
 * refuses a count that would go below zero rather than let it drift silently. The index on
 * `dataset_items (dataset_id, id)` serves the item list, which pages in the order items were
 * added, and the foreign key's lookups.
 */
export class Migration20261129180000_datasets extends Migration {

  override name = 'Migration20261129180000_datasets';

  override up(): void | Promise<void> {
    this.addSql(`create table "datasets" ("id" bigserial primary key, "uuid" uuid not null, "name" varchar(255) not null,
      "description" text not null default '', "visibility" text not null default 'private', "items_count" int not null default 0,
      "user_id" int not null, "workspace_id" bigint not null, "created_at" timestamptz not null, "updated_at" timestamptz not null,
      "deleted_at" timestamptz null);`);
    this.addSql(`alter table "datasets" add constraint "datasets_uuid_unique" unique ("uuid");`);
    this.addSql(`create index "datasets_workspace_id_created_at_index" on "datasets" ("workspace_id", "created_at");`);
    this.addSql(`create index "datasets_user_id_index" on "datasets" ("user_id");`);
    this.addSql(`alter table "datasets" add constraint "datasets_user_id_foreign" foreign key ("user_id") references "users" ("id") on delete cascade;`);
    this.addSql(`alter table "datasets" add constraint "datasets_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on delete cascade;`);
    this.addSql(`alter table "datasets" add constraint "datasets_visibility_check" check ("visibility" in ('public', 'private', 'workspace'));`);
    this.addSql(`alter table "datasets" add constraint "datasets_items_count_check" check ("items_count" >= 0);`);

    this.addSql(`create table "dataset_items" ("id" bigserial primary key, "uuid" uuid not null, "dataset_id" bigint not null,
      "input" text not null, "expected_output" text null, "metadata" jsonb null, "created_at" timestamptz not null,
      "updated_at" timestamptz not null);`);
    this.addSql(`alter table "dataset_items" add constraint "dataset_items_uuid_unique" unique ("uuid");`);
    this.addSql(`create index "dataset_items_dataset_id_id_index" on "dataset_items" ("dataset_id", "id");`);
    this.addSql(`alter table "dataset_items" add constraint "dataset_items_dataset_id_foreign" foreign key ("dataset_id") references "datasets" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "dataset_items" cascade;`);
    this.addSql(`drop table if exists "datasets" cascade;`);
  }

}
