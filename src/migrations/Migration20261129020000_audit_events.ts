import { Migration } from '@mikro-orm/migrations'

/**
 * The audit log (docs/api/audit.md): one row per change, written by the change's transaction
 * (src/platform/audit.ts). The actor and the workspace are kept as ids and read with their
 * current names; nothing references them by key, so an event outlives what it names. An update
 * of an event is refused by a trigger: the log is appended to and swept, never edited.
 *
 * Every list reads one workspace newest first, most often narrowed to one resource, one action
 * (or an action prefix) or one actor: an index for each, ending in `id`, so a page is an index range.
 */
export class Migration20261129020000_audit_events extends Migration {
  override name = 'Migration20261129020000_audit_events'

  override up(): void | Promise<void> {
    this.addSql(`create table "audit_events" (
      "id" bigserial primary key, "uuid" uuid not null, "occurred_at" timestamptz not null default now(),
      "action" varchar(100) not null,
      "actor_type" text check ("actor_type" in ('user', 'service', 'system')) not null,
      "actor_user_id" bigint null, "token_kind" text null, "token_uuid" uuid null, "service_id" varchar(255) null,
      "workspace_id" bigint null,
      "resource_type" varchar(64) null, "resource_uuid" uuid null, "resource_id" bigint null,
      "request_id" varchar(128) null, "ip" varchar(64) null, "user_agent" varchar(512) null,
      "changes" jsonb null);`)
    this.addSql(`alter table "audit_events" add constraint "audit_events_uuid_unique" unique ("uuid");`)
    this.addSql(`create index "audit_events_workspace_index" on "audit_events" ("workspace_id", "id");`)
    // A resource's uuid names it whatever its type: its events are one range without the type.
    this.addSql(`create index "audit_events_resource_index" on "audit_events" ("workspace_id", "resource_uuid", "id");`)
    this.addSql(`create index "audit_events_resource_type_index" on "audit_events" ("workspace_id", "resource_type", "id");`)
    this.addSql(`create index "audit_events_action_index" on "audit_events" ("workspace_id", "action" text_pattern_ops, "id");`)
    this.addSql(`create index "audit_events_actor_index" on "audit_events" ("workspace_id", "actor_user_id", "id");`)
    this.addSql(`create index "audit_events_occurred_at_index" on "audit_events" ("occurred_at");`)
    this.addSql(`create function audit_events_immutable() returns trigger language plpgsql as $$
      begin
        raise exception 'audit events are not changed';
      end $$;`)
    this.addSql(
      `create trigger audit_events_immutable before update on "audit_events" for each row execute function audit_events_immutable();`,
    )
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "audit_events";`)
    this.addSql(`drop function if exists audit_events_immutable();`)
  }
}
