import { Migration } from '@mikro-orm/migrations';

/** The workflow engine: per-node execution data, webhook tokens and secrets, heartbeats and failure details of executions. */
export class Migration20261121162322_workflow_engine extends Migration {

  override name = 'Migration20261121162322_workflow_engine';

  override up(): void | Promise<void> {
    this.addSql(`create table "workflow_execution_data" ("id" bigserial primary key, "execution_id" bigint not null, "position" int not null, "node_id" varchar(100) not null, "node_type" varchar(100) not null, "status" text not null, "input" jsonb null, "output" jsonb null, "error" jsonb null, "branches" jsonb null, "attempts" int not null default 0, "started_at" timestamptz null, "finished_at" timestamptz null, "duration_ms" int null);`);
    this.addSql(`create index "workflow_execution_data_execution_id_position_index" on "workflow_execution_data" ("execution_id", "position");`);

    this.addSql(`alter table "workflows" add "webhook_token" varchar(64) not null default replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), add "webhook_secret_ciphertext" text null, add "webhook_secret_key_id" varchar(64) null;`);
    this.addSql(`alter table "workflows" add constraint "workflows_webhook_token_unique" unique ("webhook_token");`);

    this.addSql(`alter table "workflow_executions" add "error_code" varchar(64) null, add "error_node_id" varchar(100) null, add "retry_of_id" bigint null, add "heartbeat_at" timestamptz null;`);
    this.addSql(`create index "workflow_executions_unfinished_index" on "workflow_executions" ("heartbeat_at") where "status" in ('queued', 'running');`);

    this.addSql(`alter table "workflow_execution_data" add constraint "workflow_execution_data_execution_id_foreign" foreign key ("execution_id") references "workflow_executions" ("id") on delete cascade;`);
    this.addSql(`alter table "workflow_execution_data" add constraint "workflow_execution_data_status_check" check ("status" in ('succeeded', 'failed', 'skipped', 'pinned', 'canceled'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "workflow_execution_data" cascade;`);

    this.addSql(`drop index "workflow_executions_unfinished_index";`);
    this.addSql(`alter table "workflow_executions" drop column "error_code", drop column "error_node_id", drop column "retry_of_id", drop column "heartbeat_at";`);

    this.addSql(`alter table "workflows" drop constraint "workflows_webhook_token_unique";`);
    this.addSql(`alter table "workflows" drop column "webhook_token", drop column "webhook_secret_ciphertext", drop column "webhook_secret_key_id";`);
  }

}
