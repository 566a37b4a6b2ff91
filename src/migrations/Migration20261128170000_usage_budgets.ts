import { Migration } from '@mikro-orm/migrations'

/**
 * Usage and budgets (docs/api/usage-and-budgets.md).
 * - `runs.access_token_id`: the token whose request started a run (a budget's `access_token` scope).
 * - `usage_daily`: the usage rollup `GET usage` and every budget read. The trigger
 *   `runs_usage_daily` adds each run to it in the transaction that stores the run (its row, +1 run)
 *   and each change of a run's tokens or cost (the difference), so the rollup always equals the sums
 *   of the stored runs' usage, whichever statement wrote them, and concurrent runs never lose an
 *   increment (`insert ... on conflict do update` adds under the row's lock). The rows of the runs
 *   stored before this migration are added here.
 * - `budgets` and `budget_alerts` (one row per budget, period and threshold reached).
 */
export class Migration20261128170000_usage_budgets extends Migration {
  override name = 'Migration20261128170000_usage_budgets'

  override up(): void | Promise<void> {
    this.addSql(`alter table "runs" add column "access_token_id" bigint null;`)
    this.addSql(
      `alter table "runs" add constraint "runs_access_token_id_foreign" foreign key ("access_token_id") references "access_tokens" ("id") on update cascade on delete set null;`,
    )

    this.addSql(
      `create table "usage_daily" ("workspace_id" bigint not null, "day" date not null, "agent_id" bigint not null default 0, "user_id" bigint not null default 0, "access_token_id" bigint not null default 0, "model" varchar(255) not null default '', "runs" bigint not null default 0, "prompt_tokens" bigint not null default 0, "completion_tokens" bigint not null default 0, "total_tokens" bigint not null default 0, "cost" numeric(20,6) not null default 0, constraint "usage_daily_pkey" primary key ("workspace_id", "day", "agent_id", "user_id", "access_token_id", "model"));`,
    )
    this.addSql(
      `alter table "usage_daily" add constraint "usage_daily_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    )

    this.addSql(
      `create table "budgets" ("id" bigserial primary key, "uuid" uuid not null, "workspace_id" bigint not null, "name" varchar(255) not null, "scope" text not null, "agent_id" bigint null, "user_id" int null, "access_token_id" bigint null, "period" text not null, "limit_cost" numeric(20,6) null, "limit_tokens" bigint null, "action" text not null default 'block', "alert_thresholds" jsonb not null, "is_active" boolean not null default true, "created_at" timestamptz not null, "updated_at" timestamptz not null);`,
    )
    this.addSql(`alter table "budgets" add constraint "budgets_uuid_unique" unique ("uuid");`)
    this.addSql(`create index "budgets_workspace_id_created_at_index" on "budgets" ("workspace_id", "created_at");`)
    this.addSql(
      `alter table "budgets" add constraint "budgets_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    )
    this.addSql(
      `alter table "budgets" add constraint "budgets_agent_id_foreign" foreign key ("agent_id") references "agents" ("id") on update cascade on delete cascade;`,
    )
    this.addSql(
      `alter table "budgets" add constraint "budgets_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`,
    )
    this.addSql(
      `alter table "budgets" add constraint "budgets_access_token_id_foreign" foreign key ("access_token_id") references "access_tokens" ("id") on update cascade on delete cascade;`,
    )

    this.addSql(
      `create table "budget_alerts" ("budget_id" bigint not null, "period_start" date not null, "threshold" int not null, "spent_tokens" bigint not null, "spent_cost" numeric(20,6) not null, "created_at" timestamptz not null, constraint "budget_alerts_pkey" primary key ("budget_id", "period_start", "threshold"));`,
    )
    this.addSql(
      `alter table "budget_alerts" add constraint "budget_alerts_budget_id_foreign" foreign key ("budget_id") references "budgets" ("id") on update cascade on delete cascade;`,
    )

    this.addSql(`create function "runs_usage_daily"() returns trigger language plpgsql as $$
begin
  insert into usage_daily as u (workspace_id, day, agent_id, user_id, access_token_id, model, runs, prompt_tokens, completion_tokens, total_tokens, cost)
  values (new.workspace_id, (new.created_at at time zone 'UTC')::date, coalesce(new.agent_id, 0), coalesce(new.user_id, 0), coalesce(new.access_token_id, 0), coalesce(new.model, ''),
    case when tg_op = 'INSERT' then 1 else 0 end,
    new.prompt_tokens - case when tg_op = 'INSERT' then 0 else old.prompt_tokens end,
    new.completion_tokens - case when tg_op = 'INSERT' then 0 else old.completion_tokens end,
    new.total_tokens - case when tg_op = 'INSERT' then 0 else old.total_tokens end,
    new.cost - case when tg_op = 'INSERT' then 0 else old.cost end)
  on conflict (workspace_id, day, agent_id, user_id, access_token_id, model) do update
    set runs = u.runs + excluded.runs, prompt_tokens = u.prompt_tokens + excluded.prompt_tokens,
      completion_tokens = u.completion_tokens + excluded.completion_tokens, total_tokens = u.total_tokens + excluded.total_tokens,
      cost = u.cost + excluded.cost;
  return null;
end
$$;`)
    this.addSql(`create trigger "runs_usage_daily_insert" after insert on "runs" for each row execute function "runs_usage_daily"();`)
    this
      .addSql(`create trigger "runs_usage_daily_update" after update of "prompt_tokens", "completion_tokens", "total_tokens", "cost" on "runs" for each row
      when (old.prompt_tokens <> new.prompt_tokens or old.completion_tokens <> new.completion_tokens or old.total_tokens <> new.total_tokens or old.cost <> new.cost)
      execute function "runs_usage_daily"();`)
    this
      .addSql(`insert into usage_daily (workspace_id, day, agent_id, user_id, access_token_id, model, runs, prompt_tokens, completion_tokens, total_tokens, cost)
      select workspace_id, (created_at at time zone 'UTC')::date, coalesce(agent_id, 0), coalesce(user_id, 0), 0, coalesce(model, ''),
        count(*), sum(prompt_tokens), sum(completion_tokens), sum(total_tokens), sum(cost)
      from runs group by 1, 2, 3, 4, 5, 6;`)
  }

  override down(): void | Promise<void> {
    this.addSql(`drop trigger "runs_usage_daily_update" on "runs";`)
    this.addSql(`drop trigger "runs_usage_daily_insert" on "runs";`)
    this.addSql(`drop function "runs_usage_daily"();`)
    this.addSql(`drop table "budget_alerts";`)
    this.addSql(`drop table "budgets";`)
    this.addSql(`drop table "usage_daily";`)
    this.addSql(`alter table "runs" drop constraint "runs_access_token_id_foreign";`)
    this.addSql(`alter table "runs" drop column "access_token_id";`)
  }
}
