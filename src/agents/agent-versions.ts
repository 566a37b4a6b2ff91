/**
 * Recording agent versions (docs/api/versions.md, "When a version is made"): after a create,
 * update, restore or import has written an agent, {@link recordVersion} snapshots its behaviour
 * fields in the same transaction and stores the next version only when the snapshot differs from
 * the latest one, so visibility, shares, favourites, categories and `file.keys` make none.
 */
import { AGENT_VERSIONED_FIELDS } from '../../entities/index.ts'
import type { Em } from '../platform/db.ts'
import { recordEvent } from '../platform/outbox.ts'
import { toAgentVersionDetail, type AgentVersionRow, type TAgentVersionDetail } from './agent-version.schema.ts'

/**
 * The snapshot of agent `a` as jsonb: its behaviour fields as stored, its live tools (with the
 * bound account while it is live) and live workflows in the agent's order, as uuids. No parameters.
 */
export const AGENT_SNAPSHOT_SQL = `jsonb_build_object(
    'name', a.name, 'description', a.description, 'instruction', a.instruction, 'metadata', a.metadata,
    'profile_photo_config', a.profile_photo_config,
    'tools', coalesce((select jsonb_agg(jsonb_build_object('tool_uuid', t.uuid, 'account_uuid', ac.uuid) order by x.position, x.id)
      from agent_tools x join tools t on t.id = x.tool_id and t.deleted_at is null
      left join accounts ac on ac.id = x.account_id and ac.deleted_at is null where x.agent_id = a.id), '[]'::jsonb),
    'workflows', coalesce((select jsonb_agg(jsonb_build_object('workflow_uuid', w.uuid) order by x.position, x.id)
      from agent_workflows x join workflows w on w.id = x.workflow_id and w.deleted_at is null where x.agent_id = a.id), '[]'::jsonb))`

/**
 * One statement: the snapshot now, the latest version; the next version when they differ, with the
 * fields that changed (in {@link AGENT_VERSIONED_FIELDS} order; `[]` for version 1) and
 * `agents.version` set to it. Parameters: agent id, agent id, the field names (JSON), note, user id,
 * agent id. Answers the version made, or no row.
 */
const RECORD_SQL = `with cur as (select a.uuid, a.workspace_id, ${AGENT_SNAPSHOT_SQL} as s from agents a where a.id = ?),
   prev as (select v.version, v.snapshot from agent_versions v where v.agent_id = ? order by v.version desc limit 1),
   made as (
     insert into agent_versions (agent_id, version, snapshot, changed, note, created_by, created_at)
     select ?::bigint, coalesce(prev.version, 0) + 1, cur.s,
       -- Each snapshot opened once (jsonb_each), not once per field: a long instruction is stored compressed.
       case when prev.version is null then '[]'::jsonb else coalesce((select jsonb_agg(f.name order by f.ord)
         from jsonb_array_elements_text(?::jsonb) with ordinality f(name, ord)
         left join jsonb_each(cur.s) n on n.key = f.name left join jsonb_each(prev.snapshot) o on o.key = f.name
         where n.value is distinct from o.value), '[]'::jsonb) end,
       ?, ?, now()
     from cur left join prev on true
     where prev.snapshot is distinct from cur.s
     returning version, created_at, changed, note, created_by, snapshot),
   bumped as (update agents set version = made.version from made where agents.id = ?)
 select made.version, made.created_at as "createdAt", made.changed, made.note, made.created_by as "createdById", u.name as "createdByName",
   made.snapshot, cur.uuid as "agentUuid", cur.workspace_id::float8 as "workspaceId"
 from made cross join cur left join users u on u.id = made.created_by`

const FIELD_NAMES = JSON.stringify(AGENT_VERSIONED_FIELDS)

/** A version {@link recordVersion} made, with its agent. */
export interface RecordedVersion {
  agentUuid: string
  version: TAgentVersionDetail
}

/**
 * Stores the agent's next version when its behaviour fields differ from its latest version (its
 * first version when it has none), with `agent.version_created` in the outbox. `em` must be the
 * transaction that wrote the agent, with the agent's row locked (update) or new (create), so
 * concurrent changes number their versions one after the other.
 * @param userId who made the change (`created_by`).
 * @returns the version made, or null when nothing of the behaviour changed.
 */
export async function recordVersion(em: Em, agentId: number, userId: number, note: string | null): Promise<RecordedVersion | null> {
  const [row] = await em.execute<(AgentVersionRow & { agentUuid: string; workspaceId: number })[]>(RECORD_SQL, [
    agentId,
    agentId,
    agentId,
    FIELD_NAMES,
    note,
    userId,
    agentId,
  ])
  if (!row) return null
  const version = toAgentVersionDetail(row)
  // The snapshot is stored once, in the version: the event names it (delivery reads it from there).
  const { snapshot: _snapshot, ...listed } = version
  await recordEvent(em, { type: 'agent.version_created', workspaceId: Number(row.workspaceId), data: { agent_uuid: row.agentUuid, ...listed } })
  return { agentUuid: row.agentUuid, version }
}
