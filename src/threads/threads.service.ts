/**
 * Threads (docs/api/resources.md, "Threads"): conversations with an agent. A thread is private to the
 * user who created it, in the workspace it was created in (the request's workspace context):
 * only that user, working in that workspace, lists, reads, updates or deletes it and its
 * messages; to anyone else it does not exist (404). A thread whose agent was deleted is gone too.
 * Runs (`POST threads/{x}/run`) and generated names live in the runs capability (src/runs), which
 * enters through {@link requireThread}.
 */
import { Thread as ThreadEntity } from '../../entities/index.ts'
import { findResource } from '../access/resource-access.ts'
import { queries, type Em } from '../platform/db.ts'
import { ForbiddenError, NotFoundError, ValidationError } from '../platform/errors.ts'
import {
  AGENT_SUMMARY_COLUMNS,
  THREAD_METADATA_MAX_BYTES,
  toThread,
  type TCreateThreadInput,
  type TThread,
  type TThreadListInput,
  type TUpdateThreadInput,
  type ThreadRow,
} from './thread.schema.ts'
import { jsonBytes } from '../access/wire.ts'
import { Conditions, threadSearchSql } from '../access/list-filters.ts'
import { listPage, type ListSource } from '../access/list-page.ts'
import { unprefix, type SqlFragment } from '../platform/sql.ts'
import type { ResourceCtx } from '../context.ts'
import { mergeMetadata } from '../access/metadata.ts'
import { audit, fieldChanges } from '../access/audit.ts'

/**
 * The threads the caller sees, over the `threads` alias: live, created by the caller, in the
 * request's workspace, with a live agent. Messages are seen through their thread.
 */
export function threadScopeSql(alias: string, ctx: ResourceCtx): SqlFragment {
  return {
    sql: `(${alias}.deleted_at is null and ${alias}.user_id = ? and ${alias}.workspace_id = ?
      and exists (select 1 from agents ta where ta.id = ${alias}.agent_id and ta.deleted_at is null))`,
    params: [ctx.auth.user.id, ctx.workspace.workspace.id],
  }
}

/**
 * FROM and WHERE of the run a thread (its id the SQL `threadId`) is busy with, aliased `ar`: its
 * running or waiting run, else the oldest queued one (docs/api/runs.md, "Busy threads"); no row
 * when it is idle. The Thread's `active_run` and a run's `if_busy` check (src/runs) read it.
 */
export const activeRunSql = (threadId: string): string =>
  `runs ar where ar.thread_id = ${threadId} and ar.status in ('queued', 'running', 'awaiting_approval') order by (ar.status = 'queued'), ar.id limit 1`

const SOURCE: ListSource = {
  from: 'threads t join agents a on a.id = t.agent_id join workspaces w on w.id = t.workspace_id',
  columns: `t.id::float8 as id, t.uuid, t.name, t.user_id::float8 as "userId", w.uuid as "workspaceUuid",
    t.messages_count as "messagesCount", t.metadata, t.created_at as "createdAt", t.updated_at as "updatedAt",
    (select max(lm.created_at) from messages lm where lm.thread_id = t.id and lm.deleted_at is null) as "lastMessageAt",
    (select jsonb_build_object('uuid', ar.uuid, 'status', ar.status) from ${activeRunSql('t.id')}) as "activeRun",
    (select count(*)::int from runs qr where qr.thread_id = t.id and qr.status = 'queued') as "queuedRunsCount",
    ${AGENT_SUMMARY_COLUMNS}`,
  alias: 't',
  sorts: {
    created_at: 't.created_at',
    updated_at: 't.updated_at',
    name: "lower(coalesce(t.name, ''))",
    messages_count: 't.messages_count',
  },
}

/** The wire Thread of thread `id` (no access check: the caller has made it). */
export async function readThread(em: Em, appUrl: string, id: number): Promise<TThread> {
  const [row] = await em.execute<ThreadRow[]>(`select ${SOURCE.columns} from ${SOURCE.from} where t.id = ?`, [id])
  if (!row) throw new NotFoundError('Thread')
  return toThread(row, appUrl)
}

/** The keys of a thread the caller sees, as {@link requireThread} answers them. */
export interface ThreadAccess {
  id: number
  uuid: string
  name: string | null
  agentId: number
  userId: number
  workspaceId: number
  messagesCount: number
}

/**
 * The live thread `uuid` if the caller sees it (see {@link threadScopeSql}), in one query. Its
 * creator may do everything to it; `forWrite` only adds the read-only token check (403), for
 * callers outside a mutation procedure (whose middleware makes that check already).
 * @throws NotFoundError when the caller does not see it; ForbiddenError for a read-only token
 *   when `forWrite`.
 */
export async function requireThread(ctx: ResourceCtx, uuid: string, forWrite: boolean): Promise<ThreadAccess> {
  if (forWrite && !ctx.auth.token.abilities.includes('write')) throw new ForbiddenError('This token is read-only')
  const scope = threadScopeSql('t', ctx)
  const [row] = await ctx.em.execute(
    `select t.id::float8 as id, t.uuid, t.name, t.agent_id::float8 as "agentId", t.user_id::float8 as "userId",
       t.workspace_id::float8 as "workspaceId", t.messages_count as "messagesCount"
     from threads t where t.uuid = ? and ${scope.sql}`,
    [uuid, ...scope.params],
  )
  if (!row) throw new NotFoundError('Thread')
  return {
    id: Number(row.id),
    uuid: String(row.uuid),
    name: row.name === null ? null : String(row.name),
    agentId: Number(row.agentId),
    userId: Number(row.userId),
    workspaceId: Number(row.workspaceId),
    messagesCount: Number(row.messagesCount),
  }
}

/**
 * The caller's threads in the request's workspace, filtered by `agent_uuid` and `search` (the
 * thread's name or any of its live messages' content, case-insensitive, as the threads metrics
 * filter), paginated. The threads of evaluation runs are left out (docs/api/evaluations.md): they
 * are reached through their evaluation's results.
 */
export async function list(ctx: ResourceCtx, input: TThreadListInput) {
  const where = new Conditions(threadScopeSql('t', ctx)).add('t.evaluation_uuid is null')
  if (input.agent_uuid) where.add('a.uuid = ?', input.agent_uuid)
  if (input.search) where.add(threadSearchSql('t', input.search))
  const query = { agent_uuid: input.agent_uuid, search: input.search }
  return listPage(ctx, SOURCE, where.toSql(), input, { path: '/api/v1/threads', query }, (row) =>
    toThread(unprefix<ThreadRow>(row, ''), ctx.config.appUrl),
  )
}

/**
 * Starts a thread with an agent the caller may read (run), in the request's workspace.
 * @throws ValidationError naming `agent_uuid` when the caller cannot see that agent.
 */
export async function create(ctx: ResourceCtx, input: TCreateThreadInput): Promise<{ data: TThread }> {
  const agent = await findResource(ctx, 'agents', input.agent_uuid)
  if (!agent) throw new ValidationError(['agent_uuid'], 'No agent with this uuid is visible to you')
  const id = await ctx.em.transactional(async (em) => {
    const thread = em.create(ThreadEntity, {
      name: input.name ?? null,
      agent: agent.id,
      messagesCount: 0,
      metadata: mergeMetadata({}, input.metadata ?? {}),
      user: ctx.auth.user.id,
      workspace: ctx.workspace.workspace.id,
    })
    await em.flush()
    await audit(em, ctx, {
      action: 'thread.create',
      resource: { type: 'thread', uuid: thread.uuid },
      changes: fieldChanges(null, { agent_uuid: agent.uuid, name: thread.name ?? null, metadata: thread.metadata }),
    })
    return thread.id
  })
  return { data: await readThread(ctx.em, ctx.config.appUrl, id) }
}

/** Retrieves one of the caller's threads. @throws NotFoundError otherwise. */
export async function retrieve(ctx: ResourceCtx, uuid: string): Promise<{ data: TThread }> {
  const thread = await requireThread(ctx, uuid, false)
  return { data: await readThread(ctx.em, ctx.config.appUrl, thread.id) }
}

/**
 * Updates one of the caller's threads: omitted fields are kept, `name: null` clears the name,
 * `metadata` merges key by key (`null` removes a key) on the row locked, so concurrent merges
 * all land. An update naming no field changes nothing (not even `updated_at`), and is recorded all the same.
 * @throws NotFoundError (not the caller's), ValidationError (`metadata` over 64 KiB after merging).
 */
export async function update(ctx: ResourceCtx, input: TUpdateThreadInput): Promise<{ data: TThread }> {
  const { id, uuid } = await requireThread(ctx, input.thread_uuid, true)
  await ctx.em.transactional(async (em) => {
    const db = queries(em)
    const before = await db.selectFrom('threads').select(['name', 'metadata']).where('id', '=', id).forUpdate().executeTakeFirstOrThrow()
    let metadata: Record<string, unknown> | undefined
    if (input.metadata !== undefined) {
      metadata = mergeMetadata(before.metadata ?? {}, input.metadata)
      if (jsonBytes(metadata) > THREAD_METADATA_MAX_BYTES) {
        throw new ValidationError(['metadata'], `metadata must not exceed ${THREAD_METADATA_MAX_BYTES} bytes as JSON after merging`)
      }
    }
    if (input.name !== undefined || metadata !== undefined) {
      // Kysely leaves out the fields that are undefined: only those the input names are set.
      await db
        .updateTable('threads')
        .set((eb) => ({ name: input.name, metadata, updated_at: eb.fn<Date>('now') }))
        .where('id', '=', id)
        .execute()
    }
    const after = { name: input.name === undefined ? before.name : input.name, metadata: metadata ?? before.metadata }
    await audit(em, ctx, { action: 'thread.update', resource: { type: 'thread', uuid }, changes: fieldChanges({ ...before }, after) })
  })
  return { data: await readThread(ctx.em, ctx.config.appUrl, id) }
}

/**
 * Soft-deletes one of the caller's threads and its messages (which then answer 404 too and leave
 * every count).
 * @throws NotFoundError (not the caller's).
 */
export async function remove(ctx: ResourceCtx, uuid: string): Promise<void> {
  const { id, uuid: threadUuid } = await requireThread(ctx, uuid, true)
  await ctx.em.transactional(async (em) => {
    const db = queries(em)
    await db
      .updateTable('threads')
      .set((eb) => ({ deleted_at: eb.fn<Date>('now'), updated_at: eb.fn<Date>('now') }))
      .where('id', '=', id)
      .execute()
    await db
      .updateTable('messages')
      .set((eb) => ({ deleted_at: eb.fn<Date>('now'), updated_at: eb.fn<Date>('now') }))
      .where('thread_id', '=', id)
      .where('deleted_at', 'is', null)
      .execute()
    await audit(em, ctx, { action: 'thread.delete', resource: { type: 'thread', uuid: threadUuid } })
  })
}
