/**
 * Reading the audit log (docs/api/audit.md): the workspace's events, newest first, filtered;
 * one event; every matching event as NDJSON. Owners and admins of the workspace only. Nothing
 * here changes or deletes an event: the only removal is the retention sweep (./retention.ts).
 */
import { Conditions } from '../access/list-filters.ts'
import { listPage, type ListSource } from '../access/list-page.ts'
import { viewerOf } from '../access/resource-access.ts'
import { managesWorkspace } from '../access/visibility.ts'
import type { ResourceCtx } from '../context.ts'
import { ForbiddenError, NotFoundError } from '../platform/errors.ts'
import type { SqlFragment } from '../platform/sql.ts'
import {
  AUDIT_COLUMNS,
  AUDIT_FROM,
  toAuditEvent,
  type AuditRow,
  type TAuditEvent,
  type TAuditEventExportInput,
  type TAuditEventListInput,
} from './audit.schema.ts'

/** Events the export reads per statement (keyset pages, newest first). */
const EXPORT_BATCH = 1_000

// Ordered by `id`, the order events were written in, which the workspace's indexes end in.
const SOURCE: ListSource = { from: AUDIT_FROM, columns: AUDIT_COLUMNS, alias: 'a', sorts: { occurred_at: 'a.id' } }

/** @throws ForbiddenError unless the caller is an owner or admin of the request's workspace. */
function requireManager(ctx: ResourceCtx): void {
  if (!managesWorkspace(viewerOf(ctx)))
    throw new ForbiddenError(`Your role (${ctx.workspace.role}) may not read the audit log: ask an owner or admin`)
}

/** The WHERE of the workspace's events matching `input`'s filters. */
function filtersSql(ctx: ResourceCtx, input: TAuditEventExportInput): SqlFragment {
  const where = new Conditions({ sql: 'a.workspace_id = ?', params: [ctx.workspace.workspace.id] })
  if (input.action?.endsWith('.*')) {
    // `agent.*`: every action starting `agent.` (the index's text_pattern_ops serve the LIKE).
    where.add(`a.action like ? escape '\\'`, `${input.action.slice(0, -1).replace(/[\\%_]/g, (c) => `\\${c}`)}%`)
  } else if (input.action) where.add('a.action = ?', input.action)
  if (input.actor_user_id !== undefined) where.add('a.actor_user_id = ?', input.actor_user_id)
  if (input.resource_type) where.add('a.resource_type = ?', input.resource_type)
  if (input.resource_uuid) where.add('a.resource_uuid = ?', input.resource_uuid)
  if (input.date_from) where.add('a.occurred_at >= ?::timestamptz', `${input.date_from}T00:00:00Z`)
  if (input.date_to) where.add(`a.occurred_at < ?::timestamptz + interval '1 day'`, `${input.date_to}T00:00:00Z`)
  return where.toSql()
}

/** The filters as the paginator's links repeat them. */
function linkQuery(input: TAuditEventExportInput): Record<string, string | undefined> {
  return {
    action: input.action,
    actor_user_id: input.actor_user_id === undefined ? undefined : String(input.actor_user_id),
    resource_type: input.resource_type,
    resource_uuid: input.resource_uuid,
    date_from: input.date_from,
    date_to: input.date_to,
  }
}

/** `GET /api/v1/audit-events`: the workspace's events, newest first. @throws ForbiddenError */
export async function list(ctx: ResourceCtx, input: TAuditEventListInput) {
  requireManager(ctx)
  return listPage(
    ctx,
    SOURCE,
    filtersSql(ctx, input),
    { page: input.page, per_page: input.per_page, sort: '-occurred_at' },
    { path: '/api/v1/audit-events', query: linkQuery(input) },
    (row) => toAuditEvent(row as unknown as AuditRow),
  )
}

/** `GET /api/v1/audit-events/{audit_event_uuid}`. @throws ForbiddenError, NotFoundError (not of the workspace) */
export async function retrieve(ctx: ResourceCtx, uuid: string): Promise<{ data: TAuditEvent }> {
  requireManager(ctx)
  const [row] = await ctx.em.execute<AuditRow[]>(`select ${AUDIT_COLUMNS} from ${AUDIT_FROM} where a.uuid = ? and a.workspace_id = ?`, [
    uuid,
    ctx.workspace.workspace.id,
  ])
  if (!row) throw new NotFoundError('Audit event')
  return { data: toAuditEvent(row) }
}

/**
 * `GET /api/v1/audit-events/export`: every matching event, newest first, a page of
 * {@link EXPORT_BATCH} at a time (keyset, so a long export costs the same per event and sees
 * events written meanwhile only above where it started). The caller checks access first with
 * {@link requireExport}, before it answers 200.
 */
export async function* exportEvents(ctx: ResourceCtx, input: TAuditEventExportInput): AsyncGenerator<TAuditEvent[]> {
  const where = filtersSql(ctx, input)
  let below: number | null = null
  for (;;) {
    const rows: (AuditRow & { id: number })[] = await ctx.em.execute(
      `select a.id::float8 as id, ${AUDIT_COLUMNS} from ${AUDIT_FROM} where ${where.sql} ${below === null ? '' : 'and a.id < ?'}
       order by a.id desc limit ${EXPORT_BATCH}`,
      below === null ? where.params : [...where.params, below],
    )
    if (rows.length === 0) return
    yield rows.map(toAuditEvent)
    if (rows.length < EXPORT_BATCH) return
    below = Number(rows[rows.length - 1].id)
  }
}

/** The export's access check. @throws ForbiddenError */
export const requireExport = requireManager
