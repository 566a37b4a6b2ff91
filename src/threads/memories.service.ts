/**
 * Memories (docs/api/resources.md, "Memories"): facts an agent run with `metadata.memory` learned
 * about its user. A memory is its user's alone: only they list, read, edit and delete it, in the
 * workspace it was learned in (the request's workspace context); to anyone else it does not
 * exist (404). Runs write memories; this module only reads, edits and deletes them.
 */
import { queries } from '../platform/db.ts'
import { NotFoundError } from '../platform/errors.ts'
import { toMemory, type MemoryRow, type TMemory, type TMemoryListInput, type TUpdateMemoryInput } from './memory.schema.ts'
import { AGENT_SUMMARY_COLUMNS } from './thread.schema.ts'
import { Conditions, searchSql } from '../access/list-filters.ts'
import { listPage, type ListSource } from '../access/list-page.ts'
import type { ResourceCtx } from '../context.ts'
import { unprefix, type SqlFragment } from '../platform/sql.ts'
import { audit, fieldChanges } from '../access/audit.ts'

/** The memories the caller sees, over the `memories` alias: their own, in the request's workspace. */
export function memoryScopeSql(alias: string, ctx: ResourceCtx): SqlFragment {
  return { sql: `(${alias}.user_id = ? and ${alias}.workspace_id = ?)`, params: [ctx.auth.user.id, ctx.workspace.workspace.id] }
}

const SOURCE: ListSource = {
  from: `memories mem join workspaces w on w.id = mem.workspace_id
    left join agents a on a.id = mem.agent_id and a.deleted_at is null left join runs r on r.id = mem.run_id`,
  columns: `mem.id::float8 as id, mem.uuid, mem.content, r.uuid as "runUuid", mem.user_id::float8 as "userId",
    w.uuid as "workspaceUuid", mem.created_at as "createdAt", mem.updated_at as "updatedAt", ${AGENT_SUMMARY_COLUMNS}`,
  alias: 'mem',
  sorts: { created_at: 'mem.created_at', updated_at: 'mem.updated_at' },
}

async function readMemory(ctx: ResourceCtx, id: number): Promise<{ data: TMemory }> {
  const [row] = await ctx.em.execute<MemoryRow[]>(`select ${SOURCE.columns} from ${SOURCE.from} where mem.id = ?`, [id])
  if (!row) throw new NotFoundError('Memory')
  return { data: toMemory(row, ctx.config.appUrl) }
}

/** The id of one of the caller's memories. @throws NotFoundError otherwise. */
async function requireMemory(ctx: ResourceCtx, uuid: string): Promise<number> {
  const scope = memoryScopeSql('mem', ctx)
  const [row] = await ctx.em.execute(`select mem.id::float8 as id from memories mem where mem.uuid = ? and ${scope.sql}`, [
    uuid,
    ...scope.params,
  ])
  if (!row) throw new NotFoundError('Memory')
  return Number(row.id)
}

/** The caller's memories in the request's workspace, filtered by `agent_uuid` and `search` (content), paginated. */
export async function list(ctx: ResourceCtx, input: TMemoryListInput) {
  const where = new Conditions(memoryScopeSql('mem', ctx))
  if (input.agent_uuid) where.add('a.uuid = ?', input.agent_uuid)
  if (input.search) where.add(searchSql(['mem.content'], input.search))
  const query = { agent_uuid: input.agent_uuid, search: input.search }
  return listPage(ctx, SOURCE, where.toSql(), input, { path: '/api/v1/memories', query }, (row) =>
    toMemory(unprefix<MemoryRow>(row, ''), ctx.config.appUrl),
  )
}

/** Retrieves one of the caller's memories. @throws NotFoundError otherwise. */
export async function retrieve(ctx: ResourceCtx, uuid: string): Promise<{ data: TMemory }> {
  return readMemory(ctx, await requireMemory(ctx, uuid))
}

/** Replaces one of the caller's memories' `content`. @throws NotFoundError otherwise. */
export async function update(ctx: ResourceCtx, input: TUpdateMemoryInput): Promise<{ data: TMemory }> {
  const id = await requireMemory(ctx, input.memory_uuid)
  await ctx.em.transactional(async (em) => {
    const db = queries(em)
    const before = await db.selectFrom('memories').select(['uuid', 'content']).where('id', '=', id).forUpdate().executeTakeFirst()
    if (!before) throw new NotFoundError('Memory')
    await db
      .updateTable('memories')
      .set((eb) => ({ content: input.content, updated_at: eb.fn<Date>('now') }))
      .where('id', '=', id)
      .execute()
    await audit(em, ctx, {
      action: 'memory.update',
      resource: { type: 'memory', uuid: before.uuid },
      changes: fieldChanges({ content: before.content }, { content: input.content }),
    })
  })
  return readMemory(ctx, id)
}

/** Deletes one of the caller's memories (for good: memories are not soft-deleted). @throws NotFoundError otherwise. */
export async function remove(ctx: ResourceCtx, uuid: string): Promise<void> {
  const id = await requireMemory(ctx, uuid)
  await ctx.em.transactional(async (em) => {
    const deleted = await queries(em).deleteFrom('memories').where('id', '=', id).returning('uuid').execute()
    if (deleted.length > 0) await audit(em, ctx, { action: 'memory.delete', resource: { type: 'memory', uuid: deleted[0].uuid } })
  })
}
