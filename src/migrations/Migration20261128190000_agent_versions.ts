import { Migration } from '@mikro-orm/migrations'

/**
 * Agent versions (docs/api/versions.md).
 * - `agents.version`: the agent's current version (1 at creation).
 * - `agent_versions`: one row per version, holding the snapshot of the agent's behaviour fields
 *   (`name`, `description`, `instruction`, `metadata`, `profile_photo_config`, `tools`,
 *   `workflows`) once, the names of the fields that differ from the version before, who made it
 *   and an optional note. Every agent stored before this migration gets version 1, its current state.
 * - `runs.agent_version`, `messages.agent_version`: the version a run used (and its answers).
 * - `outbox_events`: events recorded in the transaction of the change they announce (the first is
 *   `agent.version_created`), for outbound delivery (docs/api/versions.md, "Events").
 */
export class Migration20261128190000_agent_versions extends Migration {
  override name = 'Migration20261128190000_agent_versions'

  override up(): void | Promise<void> {
    this.addSql(`alter table "agents" add column "version" int not null default 1;`)
    this.addSql(`alter table "runs" add column "agent_version" int null;`)
    this.addSql(`alter table "messages" add column "agent_version" int null;`)

    this.addSql(
      `create table "agent_versions" ("id" bigserial primary key, "agent_id" bigint not null, "version" int not null, "snapshot" jsonb not null, "changed" jsonb not null, "note" text null, "created_by" int null, "created_at" timestamptz not null);`,
    )
    this.addSql(`alter table "agent_versions" add constraint "agent_versions_agent_id_version_unique" unique ("agent_id", "version");`)
    this.addSql(
      `alter table "agent_versions" add constraint "agent_versions_agent_id_foreign" foreign key ("agent_id") references "agents" ("id") on update cascade on delete cascade;`,
    )
    this.addSql(
      `alter table "agent_versions" add constraint "agent_versions_created_by_foreign" foreign key ("created_by") references "users" ("id") on update cascade on delete set null;`,
    )

    this.addSql(
      `create table "outbox_events" ("id" bigserial primary key, "uuid" uuid not null, "type" text not null, "workspace_id" bigint not null, "data" jsonb not null, "created_at" timestamptz not null);`,
    )
    this.addSql(`alter table "outbox_events" add constraint "outbox_events_uuid_unique" unique ("uuid");`)
    this.addSql(`create index "outbox_events_workspace_id_id_index" on "outbox_events" ("workspace_id", "id");`)
    this.addSql(
      `alter table "outbox_events" add constraint "outbox_events_workspace_id_foreign" foreign key ("workspace_id") references "workspaces" ("id") on update cascade on delete cascade;`,
    )

    // Version 1 of every agent stored so far: its state now, made by its owner when it last changed.
    this.addSql(`insert into agent_versions (agent_id, version, snapshot, changed, note, created_by, created_at)
      select a.id, 1, jsonb_build_object(
          'name', a.name, 'description', a.description, 'instruction', a.instruction, 'metadata', a.metadata,
          'profile_photo_config', a.profile_photo_config,
          'tools', coalesce((select jsonb_agg(jsonb_build_object('tool_uuid', t.uuid, 'account_uuid', ac.uuid) order by x.position, x.id)
            from agent_tools x join tools t on t.id = x.tool_id and t.deleted_at is null
            left join accounts ac on ac.id = x.account_id and ac.deleted_at is null where x.agent_id = a.id), '[]'::jsonb),
          'workflows', coalesce((select jsonb_agg(jsonb_build_object('workflow_uuid', w.uuid) order by x.position, x.id)
            from agent_workflows x join workflows w on w.id = x.workflow_id and w.deleted_at is null where x.agent_id = a.id), '[]'::jsonb)),
        '[]'::jsonb, null, a.user_id, a.updated_at
      from agents a;`)
  }
}
