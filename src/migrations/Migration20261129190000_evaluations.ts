import { Migration } from '@mikro-orm/migrations';

/** The event an evaluation's final status announces (docs/api/webhooks.md, "Event types"). */
const EVENT = `case NEW.status when 'succeeded' then 'evaluation.succeeded' when 'failed' then 'evaluation.failed' end`;

/**
 * Evaluations (docs/api/evaluations.md): `evaluations`, one row per evaluation of a dataset
 * against an agent at a version, and `evaluation_results`, one row per item with a copy of the
 * item, the run it became and its scores. A run (and the thread it made) that an evaluation
 * started names it in `evaluation_uuid`, so the agent's usage count, the leaderboard, thread
 * lists and metrics leave it out. `dataset_id` references `datasets` without cascading: a dataset
 * is only ever soft-deleted, and the results keep their own copies of its items.
 */
export class Migration20261129190000_evaluations extends Migration {

  override name = 'Migration20261129190000_evaluations';

  override up(): void | Promise<void> {
    this.addSql(`create table "evaluations" ("id" bigserial primary key, "uuid" uuid not null, "name" varchar(255) not null,
      "status" text check ("status" in ('queued', 'running', 'succeeded', 'failed', 'canceled')) not null default 'queued',
      "dataset_id" bigint not null, "agent_id" bigint not null, "agent_version" int not null, "scorers" jsonb not null,
      "concurrency" int not null default 4 check ("concurrency" between 1 and 10), "error" text null,
      "user_id" int null, "workspace_id" bigint not null,
      "started_at" timestamptz null, "finished_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null);`);
    this.addSql(`alter table "evaluations" add constraint "evaluations_uuid_unique" unique ("uuid");`);
    this.addSql(`create index "evaluations_workspace_id_created_at_index" on "evaluations" ("workspace_id", "created_at");`);
    this.addSql(`create index "evaluations_dataset_id_index" on "evaluations" ("dataset_id");`);
    this.addSql(`create index "evaluations_agent_id_index" on "evaluations" ("agent_id");`);
    this.addSql(`alter table "evaluations" add constraint "evaluations_dataset_id_foreign" foreign key ("dataset_id") references "datasets" ("id") on update cascade;`);
    this.addSql(`alter table "evaluations" add constraint "evaluations_agent_id_foreign" foreign key ("agent_id") references "agents" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "evaluations" add constraint "evaluations_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete set null;`);
    this.addSql(`alter table "evaluations" add constraint "evaluations_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`);

    this.addSql(`create table "evaluation_results" ("id" bigserial primary key, "evaluation_id" bigint not null, "position" int not null,
      "item" jsonb not null,
      "status" text check ("status" in ('pending', 'running', 'succeeded', 'failed', 'canceled')) not null default 'pending',
      "run_uuid" uuid null, "output" text null, "latency_ms" int null, "cost" numeric(14,6) null, "total_tokens" int not null default 0,
      "judge_tokens" int not null default 0, "judge_cost" numeric(14,6) not null default 0, "scores" jsonb null, "error" text null,
      "started_at" timestamptz null, "finished_at" timestamptz null);`);
    this.addSql(`alter table "evaluation_results" add constraint "evaluation_results_evaluation_id_position_unique" unique ("evaluation_id", "position");`);
    this.addSql(`create index "evaluation_results_evaluation_id_status_index" on "evaluation_results" ("evaluation_id", "status");`);
    this.addSql(`alter table "evaluation_results" add constraint "evaluation_results_evaluation_id_foreign" foreign key ("evaluation_id") references "evaluations" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "runs" add column "evaluation_uuid" uuid null;`);
    this.addSql(`alter table "threads" add column "evaluation_uuid" uuid null;`);
    this.addSql(`create index "runs_evaluation_uuid_index" on "runs" ("evaluation_uuid") where "evaluation_uuid" is not null;`);
    // "Not an evaluation's thread" of the messages metrics: an anti-join on the few such threads.
    this.addSql(`create index "threads_evaluation_id_index" on "threads" ("id") where "evaluation_uuid" is not null;`);

    // evaluation.succeeded / evaluation.failed for the outbound webhooks, recorded as the other
    // events are (webhook_record of the webhooks migration): in the transaction that ends it.
    this.addSql(`create function webhook_evaluation_event() returns trigger language plpgsql as $$
      begin perform webhook_record(${EVENT}, NEW.workspace_id, NEW.uuid, NEW.user_id, null); return null; end
    $$;`);
    this.addSql(`create trigger "evaluations_webhook_update" after update of "status" on "evaluations" for each row
      when (OLD.status is distinct from NEW.status and (${EVENT}) is not null) execute function webhook_evaluation_event();`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop trigger if exists "evaluations_webhook_update" on "evaluations";`);
    this.addSql(`drop function if exists webhook_evaluation_event();`);
    this.addSql(`drop index if exists "threads_evaluation_id_index";`);
    this.addSql(`drop index if exists "runs_evaluation_uuid_index";`);
    this.addSql(`alter table "threads" drop column if exists "evaluation_uuid";`);
    this.addSql(`alter table "runs" drop column if exists "evaluation_uuid";`);
    this.addSql(`drop table if exists "evaluation_results" cascade;`);
    this.addSql(`drop table if exists "evaluations" cascade;`);
  }

}
