/**
 * Reading and annotating an agent's versions (docs/api/versions.md): the list (newest first by
 * default), one version with its snapshot, and its note. Read access to the agent reads its
 * versions; a note needs write access. Restoring is a write of the agent (./agents.service.ts).
 */
import { requireResource } from '../access/resource-access.ts'
import { listPage, type ListSource } from '../access/list-page.ts'
import { NotFoundError } from '../platform/errors.ts'
import type { ResourceCtx } from '../context.ts'
import {
  storedSnapshot,
  toAgentVersion,
  toAgentVersionDetail,
  type AgentVersionRow,
  type StoredSnapshot,
  type TAgentVersion,
  type TAgentVersionDetail,
  type TAgentVersionPathInput,
  type TAnnotateAgentVersionInput,
  type TListAgentVersionsInput,
} from './agent-version.schema.ts'

const VERSION_COLUMNS = `v.id, v.version, v.created_at as "createdAt", v.created_by as "createdById", u.name as "createdByName", v.note, v.changed`
const VERSION_FROM = 'agent_versions v left join users u on u.id = v.created_by'

const SOURCE: ListSource = { from: VERSION_FROM, columns: VERSION_COLUMNS, alias: 'v', sorts: { version: 'v.version' } }

/** `GET /api/v1/agents/{agent_uuid}/versions`. @throws NotFoundError when the agent is not visible. */
export async function list(ctx: ResourceCtx, input: TListAgentVersionsInput) {
  const access = await requireResource(ctx, 'agents', 'Agent', input.agent_uuid, 'read')
  return listPage(
    ctx,
    SOURCE,
    { sql: 'v.agent_id = ?', params: [access.id] },
    input,
    { path: `/api/v1/agents/${access.uuid}/versions`, query: { workspace_uuid: input.workspace_uuid } },
    (row) => toAgentVersion(row as unknown as AgentVersionRow),
  )
}

/** Version `version` of agent `agentId`, with its snapshot or without (it is the large part). @throws NotFoundError */
async function readVersion(ctx: ResourceCtx, agentId: number, version: number, withSnapshot: true): Promise<TAgentVersionDetail>
async function readVersion(ctx: ResourceCtx, agentId: number, version: number, withSnapshot: false): Promise<TAgentVersion>
async function readVersion(ctx: ResourceCtx, agentId: number, version: number, withSnapshot: boolean): Promise<TAgentVersion> {
  const [row] = await ctx.em.execute<AgentVersionRow[]>(
    `select ${VERSION_COLUMNS}${withSnapshot ? ', v.snapshot' : ''} from ${VERSION_FROM} where v.agent_id = ? and v.version = ?`,
    [agentId, version],
  )
  if (!row) throw new NotFoundError('Version')
  return withSnapshot ? toAgentVersionDetail(row) : toAgentVersion(row)
}

/** `GET /api/v1/agents/{agent_uuid}/versions/{version}`. @throws NotFoundError (agent not visible, or no such version). */
export async function retrieve(ctx: ResourceCtx, input: TAgentVersionPathInput): Promise<{ data: TAgentVersionDetail }> {
  const access = await requireResource(ctx, 'agents', 'Agent', input.agent_uuid, 'read')
  return { data: await readVersion(ctx, access.id, input.version, true) }
}

/**
 * `PUT /api/v1/agents/{agent_uuid}/versions/{version}`: sets (or, with null, removes) the note.
 * @throws NotFoundError (agent not visible, or no such version), ForbiddenError (no `write`).
 */
export async function annotate(ctx: ResourceCtx, input: TAnnotateAgentVersionInput): Promise<{ data: TAgentVersion }> {
  const access = await requireResource(ctx, 'agents', 'Agent', input.agent_uuid, 'write')
  const updated = await ctx.em.execute<{ id: unknown }[]>('update agent_versions set note = ? where agent_id = ? and version = ? returning id', [
    input.note,
    access.id,
    input.version,
  ])
  if (updated.length === 0) throw new NotFoundError('Version')
  return { data: await readVersion(ctx, access.id, input.version, false) }
}

/** The snapshot of version `version` of agent `agentId` (its access already checked). @throws NotFoundError when it has no such version. */
export async function versionSnapshot(ctx: ResourceCtx, agentId: number, version: number): Promise<StoredSnapshot> {
  const [row] = await ctx.em.execute<{ snapshot: unknown }[]>('select snapshot from agent_versions where agent_id = ? and version = ?', [agentId, version])
  if (!row) throw new NotFoundError('Version')
  return storedSnapshot(row.snapshot)
}
