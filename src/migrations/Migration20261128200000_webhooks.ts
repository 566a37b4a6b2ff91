import { Migration } from '@mikro-orm/migrations'

/** The final statuses of each watched table that announce an event, and the event type each becomes. */
const WATCHED = {
  runs: `case NEW.status when 'succeeded' then 'run.succeeded' when 'failed' then 'run.failed' when 'canceled' then 'run.canceled' end`,
  workflow_executions: `case NEW.status when 'succeeded' then 'workflow_execution.succeeded' when 'failed' then 'workflow_execution.failed' end`,
  knowledge_documents: `case NEW.status when 'ready' then 'knowledge_document.ready' when 'failed' then 'knowledge_document.failed' end`,
  command_room_task_firings: `case NEW.status when 'succeeded' then 'command_room_firing.succeeded' when 'failed' then 'command_room_firing.failed' end`,
} as const

/**
 * Outbound webhooks (docs/api/webhooks.md).
 * - `webhook_endpoints`: a workspace's receivers, each with its sealed signing secret (and, for 24
 *   hours after a rotation, the one before) and since when all its deliveries failed.
 * - `webhook_deliveries`: one row per event and endpoint (unique), its payload as the exact bytes
 *   signed, its attempts (at most `max_attempts`), and when the next is due; `lock_token` names
 *   the one job that may make the next attempt and `locked_until` ends its lease, so an attempt is
 *   made by one worker at a time and a lost job is sent again.
 * - `outbox_events` gains what the dispatcher needs: `subject_uuid` and `actor_id` (the resource an
 *   event announces and the user whose access reads it), and `dispatched_at`.
 * - Triggers record the events of runs, approvals, workflow executions, knowledge documents,
 *   command room firings and budget alerts in the transaction that makes the change, whatever
 *   code path or process makes it, and only for workspaces with an active endpoint subscribed to
 *   the type; `pg_notify('outbox_events')` wakes the dispatchers when that transaction commits.
 */
export class Migration20261128200000_webhooks extends Migration {
  override name = 'Migration20261128200000_webhooks'

  override up(): void | Promise<void> {
    this.addSql(`create table "webhook_endpoints" (
      "id" bigserial primary key, "uuid" uuid not null, "workspace_id" bigint not null, "user_id" int null,
      "url" text not null, "description" text null, "event_types" jsonb not null, "is_active" boolean not null default true,
      "disabled_reason" text null, "secret_ciphertext" text not null, "secret_key_id" varchar(64) not null,
      "previous_secret_ciphertext" text null, "previous_secret_key_id" varchar(64) null, "previous_secret_expires_at" timestamptz null,
      "failing_since" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null);`)
    this.addSql(`alter table "webhook_endpoints" add constraint "webhook_endpoints_uuid_unique" unique ("uuid");`)
    this.addSql(`create index "webhook_endpoints_workspace_id_index" on "webhook_endpoints" ("workspace_id");`)
    this.addSql(
      `alter table "webhook_endpoints" add constraint "webhook_endpoints_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    )
    this.addSql(
      `alter table "webhook_endpoints" add constraint "webhook_endpoints_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete set null;`,
    )

    this.addSql(`create table "webhook_deliveries" (
      "id" bigserial primary key, "uuid" uuid not null, "endpoint_id" bigint not null, "workspace_id" bigint not null,
      "event_id" uuid not null, "event_type" text not null,
      "status" text check ("status" in ('pending', 'succeeded', 'failed')) not null default 'pending',
      "attempts" jsonb not null default '[]', "max_attempts" int not null, "next_attempt_at" timestamptz null,
      "locked_until" timestamptz null, "lock_token" uuid null,
      "payload" text not null, "created_at" timestamptz not null, "updated_at" timestamptz not null);`)
    this.addSql(`alter table "webhook_deliveries" add constraint "webhook_deliveries_uuid_unique" unique ("uuid");`)
    this.addSql(
      `alter table "webhook_deliveries" add constraint "webhook_deliveries_endpoint_id_event_id_unique" unique ("endpoint_id", "event_id");`,
    )
    this.addSql(`create index "webhook_deliveries_endpoint_id_id_index" on "webhook_deliveries" ("endpoint_id", "id");`)
    this.addSql(`create index "webhook_deliveries_due_index" on "webhook_deliveries" ("next_attempt_at") where "status" = 'pending';`)
    this.addSql(
      `alter table "webhook_deliveries" add constraint "webhook_deliveries_endpoint_id_foreign" foreign key ("endpoint_id") references "webhook_endpoints" ("id") on update cascade on delete cascade;`,
    )

    this.addSql(
      `alter table "outbox_events" add column "subject_uuid" uuid null, add column "actor_id" bigint null, add column "dispatched_at" timestamptz null;`,
    )
    this.addSql(`alter table "outbox_events" alter column "data" drop not null;`)
    this.addSql(`create index "outbox_events_undispatched_index" on "outbox_events" ("id") where "dispatched_at" is null;`)

    // Whether workspace `ws` has an active endpoint subscribed to `type` (the triggers record nothing otherwise).
    this.addSql(`create function webhook_subscribed(ws bigint, type text) returns boolean language sql stable as $$
      select exists (select 1 from webhook_endpoints e where e.workspace_id = ws and e.is_active
        and (e.event_types @> '["*"]'::jsonb or e.event_types @> jsonb_build_array(type)))
    $$;`)
    // Records one event of the trigger's row, read by the dispatcher (src/webhooks/dispatcher.ts).
    this
      .addSql(`create function webhook_record(type text, ws bigint, subject uuid, actor bigint, data jsonb) returns void language plpgsql as $$
      begin
        if type is null or not webhook_subscribed(ws, type) then return; end if;
        insert into outbox_events (uuid, type, workspace_id, data, subject_uuid, actor_id, created_at)
          values (gen_random_uuid(), type, ws, data, subject, actor, now());
        perform pg_notify('outbox_events', '');
      end
    $$;`)

    this.addSql(`create function webhook_run_event() returns trigger language plpgsql as $$
      begin perform webhook_record(${WATCHED.runs}, NEW.workspace_id, NEW.uuid, NEW.user_id, null); return null; end
    $$;`)
    this.addSql(`create function webhook_execution_event() returns trigger language plpgsql as $$
      begin
        perform webhook_record(${WATCHED.workflow_executions}, NEW.workspace_id, NEW.uuid,
          coalesce(NEW.user_id, (select w.user_id from workflows w where w.id = NEW.workflow_id)), null);
        return null;
      end
    $$;`)
    this.addSql(`create function webhook_document_event() returns trigger language plpgsql as $$
      begin
        perform webhook_record(${WATCHED.knowledge_documents}, NEW.workspace_id, NEW.uuid,
          coalesce(NEW.user_id, (select a.user_id from agents a where a.id = NEW.agent_id)), null);
        return null;
      end
    $$;`)
    this.addSql(`create function webhook_firing_event() returns trigger language plpgsql as $$
      declare task record;
      begin
        select t.workspace_id, t.user_id into task from command_room_tasks t where t.id = NEW.task_id;
        perform webhook_record(${WATCHED.command_room_task_firings}, task.workspace_id, NEW.uuid, task.user_id, null);
        return null;
      end
    $$;`)
    this.addSql(`create function webhook_approval_event() returns trigger language plpgsql as $$
      declare run record;
      begin
        select r.workspace_id, r.user_id into run from runs r where r.id = NEW.run_id;
        perform webhook_record('run.approval_requested', run.workspace_id, NEW.uuid, run.user_id, null);
        return null;
      end
    $$;`)
    this.addSql(`create function webhook_budget_event() returns trigger language plpgsql as $$
      declare budget record;
      begin
        select b.uuid, b.workspace_id, w.user_id into budget from budgets b join workspaces w on w.id = b.workspace_id where b.id = NEW.budget_id;
        perform webhook_record('budget.threshold_reached', budget.workspace_id, budget.uuid, budget.user_id,
          jsonb_build_object('threshold', NEW.threshold, 'spent_tokens', NEW.spent_tokens, 'spent_cost', NEW.spent_cost));
        return null;
      end
    $$;`)

    const functions = {
      runs: 'webhook_run_event',
      workflow_executions: 'webhook_execution_event',
      knowledge_documents: 'webhook_document_event',
      command_room_task_firings: 'webhook_firing_event',
    }
    for (const [table, fn] of Object.entries(functions)) {
      // The WHEN clauses keep every other write (heartbeats, progress) from calling the function at all.
      this.addSql(`create trigger "${table}_webhook_update" after update of "status" on "${table}" for each row
        when (OLD.status is distinct from NEW.status and (${WATCHED[table as keyof typeof WATCHED]}) is not null) execute function ${fn}();`)
      this.addSql(`create trigger "${table}_webhook_insert" after insert on "${table}" for each row
        when ((${WATCHED[table as keyof typeof WATCHED]}) is not null) execute function ${fn}();`)
    }
    this.addSql(`create trigger "run_approvals_webhook_insert" after insert on "run_approvals" for each row
      when (NEW.status = 'pending') execute function webhook_approval_event();`)
    this.addSql(
      `create trigger "budget_alerts_webhook_insert" after insert on "budget_alerts" for each row execute function webhook_budget_event();`,
    )
  }

  override down(): void | Promise<void> {
    for (const table of ['runs', 'workflow_executions', 'knowledge_documents', 'command_room_task_firings']) {
      this.addSql(`drop trigger if exists "${table}_webhook_update" on "${table}";`)
      this.addSql(`drop trigger if exists "${table}_webhook_insert" on "${table}";`)
    }
    this.addSql(`drop trigger if exists "run_approvals_webhook_insert" on "run_approvals";`)
    this.addSql(`drop trigger if exists "budget_alerts_webhook_insert" on "budget_alerts";`)
    for (const fn of [
      'webhook_run_event',
      'webhook_execution_event',
      'webhook_document_event',
      'webhook_firing_event',
      'webhook_approval_event',
      'webhook_budget_event',
    ]) {
      this.addSql(`drop function if exists ${fn}();`)
    }
    this.addSql(`drop function if exists webhook_record(text, bigint, uuid, bigint, jsonb);`)
    this.addSql(`drop function if exists webhook_subscribed(bigint, text);`)
    this.addSql(`drop index if exists "outbox_events_undispatched_index";`)
    this.addSql(`alter table "outbox_events" drop column "subject_uuid", drop column "actor_id", drop column "dispatched_at";`)
    this.addSql(`drop table if exists "webhook_deliveries" cascade;`)
    this.addSql(`drop table if exists "webhook_endpoints" cascade;`)
  }
}
