/**
 * Workflow executions (docs/api/tenancy.md, docs/api/resources.md and docs/api/workflows.md): list, counts per status,
 * retrieve with per-node data, delete, cancel and retry.
 *
 * Visibility is the executions metrics' rule (src/metrics/metrics.service.ts `executionsSource`):
 * a live execution of the request's workspace whose workflow is live, of that workspace, and one
 * the caller could list there (`listScopeSql`); anything else is a 404. The caller's permission
 * on the workflow decides the rest: `read` to see, cancel and retry (running a workflow needs
 * read), `write` to delete. Deleting is a hard delete (the per-node data cascades), so a deleted
 * execution leaves the metrics too; the metrics' `deleted_at is null` is kept here as well.
 */
import type { SharePermission } from '../../entities/index.ts'
import { listScopeSql, viewerOf } from '../access/resource-access.ts'
import { allows, permissionOf, permissionSql } from '../access/visibility.ts'
import { ConflictError, ForbiddenError, NotFoundError } from '../platform/errors.ts'
import type { UserRow } from '../access/user-workspace.schema.ts'
import {
  toWorkflowExecution,
  toWorkflowExecutionData,
  type ExecutionRow,
  type TListWorkflowExecutionsInput,
  type TWorkflowExecution,
  type TWorkflowExecutionCounts,
  type TWorkflowExecutionCountsInput,
  type TWorkflowExecutionDetail,
} from './workflow-execution.schema.ts'
import { listPage, type ListSource } from '../access/list-page.ts'
import { Conditions } from '../access/list-filters.ts'
import { dateBounds } from '../metrics/index.ts'
import { selectColumns, unprefix, userColumns, type SqlFragment } from '../platform/sql.ts'
import { queries, type Em } from '../platform/db.ts'
import { audit } from '../access/audit.ts'
import type { ResourceCtx } from '../context.ts'
import { countExecutionEnds } from './execution-metrics.ts'

const LABEL = 'Workflow execution'

/** Execution columns the mapper reads; `errorNodeId` is text, so it is read apart (selectColumns casts `…Id` to a number). */
const EXECUTION_FIELDS = [
  'id',
  'uuid',
  'status',
  'mode',
  'error',
  'errorCode',
  'startedAt',
  'finishedAt',
  'durationMs',
  'traceId',
  'createdAt',
  'updatedAt',
] as const

/** FROM of every read: the execution, its workflow, its user and the execution it retries. */
const FROM = `workflow_executions e join workflows w on w.id = e.workflow_id
  left join users u on u.id = e.user_id
  left join workflow_executions ro on ro.id = e.retry_of_id and ro.deleted_at is null`

/** The select list of an {@link ExecutionRow} under `e_` and its user under `u_`; `jsonb` as text (see {@link ExecutionRow}). */
const COLUMNS = [
  selectColumns('e', 'e_', EXECUTION_FIELDS),
  'e.input::text as "e_input", e.output::text as "e_output", e.error_node_id as "e_errorNodeId"',
  'w.uuid as "e_workflowUuid", w.name as "e_workflowName", ro.uuid as "e_retryOfUuid"',
  userColumns('u', 'u_'),
].join(', ')

const SOURCE: ListSource = { from: FROM, columns: COLUMNS, alias: 'e', sorts: { created_at: 'e.created_at' } }

/** The executions the caller may see (see the module comment), as the metrics scope them. */
function scopeSql(ctx: ResourceCtx): SqlFragment {
  const visible = listScopeSql('w', 'workflows', ctx)
  return {
    sql: `e.deleted_at is null and e.workspace_id = ? and w.workspace_id = e.workspace_id and ${visible.sql}`,
    params: [ctx.workspace.workspace.id, ...visible.params],
  }
}

/** The scope plus the filters: `workflow_uuid`, `status` (the list only) and the creation dates. */
function filtersSql(ctx: ResourceCtx, input: TWorkflowExecutionCountsInput & { status?: string }): SqlFragment {
  const where = new Conditions(scopeSql(ctx))
  if (input.workflow_uuid) where.add('e.workflow_id = (select fw.id from workflows fw where fw.uuid = ?)', input.workflow_uuid)
  if (input.status) where.add('e.status = ?', input.status)
  const scoped = where.toSql()
  const dates = dateBounds('e', input)
  return { sql: scoped.sql + dates.sql, params: [...scoped.params, ...dates.params] }
}

/** A joined row -> the WorkflowExecution shape. */
function toItem(ctx: ResourceCtx, raw: Record<string, unknown>): TWorkflowExecution {
  const user = raw.u_id === null || raw.u_id === undefined ? null : unprefix<UserRow>(raw, 'u_')
  return toWorkflowExecution(unprefix<ExecutionRow>(raw, 'e_'), user, ctx.config.appUrl)
}

/** What {@link requireExecution} answers: the joined row and the keys the mutations need. */
interface FoundExecution {
  id: number
  status: string
  workflowId: number
  workspaceId: number
  /** The stored input as JSON text. */
  input: string | null
  raw: Record<string, unknown>
}

/**
 * The execution `uuid` if the caller may see it, with at least `needed` on its workflow.
 * @throws NotFoundError when there is no such live execution or the caller may not see it (never
 *   revealing another tenant's); ForbiddenError when the caller's permission is weaker.
 */
async function requireExecution(ctx: ResourceCtx, uuid: string, needed: SharePermission): Promise<FoundExecution> {
  const permission = permissionSql('w', 'workflows', viewerOf(ctx))
  const where = scopeSql(ctx)
  const [raw] = await ctx.em.execute(
    `select ${COLUMNS}, e.workflow_id::float8 as "workflowId", e.workspace_id::float8 as "workspaceId", ${permission.sql} as permission
     from ${FROM} where e.uuid = ? and ${where.sql}`,
    [...permission.params, uuid, ...where.params],
  )
  const held = raw ? permissionOf(raw.permission) : null
  if (!raw || !held) throw new NotFoundError(LABEL)
  if (!allows(held, needed)) throw new ForbiddenError(`You may not ${needed === 'write' ? 'delete' : 'use'} this workflow execution`)
  return {
    id: Number(raw.e_id),
    status: String(raw.e_status),
    workflowId: Number(raw.workflowId),
    workspaceId: Number(raw.workspaceId),
    input: raw.e_input === null ? null : String(raw.e_input),
    raw,
  }
}

/** One execution by id with its joins (the caller already passed {@link requireExecution}). */
async function loadExecution(ctx: ResourceCtx, id: number): Promise<TWorkflowExecution> {
  const [raw] = await ctx.em.execute(`select ${COLUMNS} from ${FROM} where e.id = ?`, [id])
  if (!raw) throw new NotFoundError(LABEL)
  return toItem(ctx, raw)
}

/**
 * `GET /api/v1/workflow-executions`: the paginator shape (docs/api/conventions.md) over the executions
 * the caller may see in the request's workspace, filtered by `workflow_uuid`, `status` and the
 * creation dates (`date_from`..`date_to`, UTC days, `date_to` inclusive), sorted by `created_at`
 * (newest first by default). Two queries whatever the page size.
 */
export function list(ctx: ResourceCtx, input: TListWorkflowExecutionsInput) {
  return listPage(
    ctx,
    SOURCE,
    filtersSql(ctx, input),
    input,
    {
      path: '/api/v1/workflow-executions',
      query: {
        workspace_uuid: input.workspace_uuid,
        workflow_uuid: input.workflow_uuid,
        status: input.status,
        date_from: input.date_from,
        date_to: input.date_to,
      },
    },
    (row) => toItem(ctx, row),
  )
}

/**
 * `GET /api/v1/workflow-executions/counts`: `{data: {queued, running, succeeded, failed,
 * canceled, total}}` over the executions {@link list} would show with the same filters (no
 * status), in one query.
 */
export async function counts(ctx: ResourceCtx, input: TWorkflowExecutionCountsInput): Promise<TWorkflowExecutionCounts> {
  const where = filtersSql(ctx, input)
  const [row] = await ctx.em.execute(
    `select count(*) filter (where e.status = 'queued')::int as queued, count(*) filter (where e.status = 'running')::int as running,
       count(*) filter (where e.status = 'succeeded')::int as succeeded, count(*) filter (where e.status = 'failed')::int as failed,
       count(*) filter (where e.status = 'canceled')::int as canceled, count(*)::int as total
     from workflow_executions e join workflows w on w.id = e.workflow_id where ${where.sql}`,
    where.params,
  )
  return {
    data: {
      queued: Number(row.queued),
      running: Number(row.running),
      succeeded: Number(row.succeeded),
      failed: Number(row.failed),
      canceled: Number(row.canceled),
      total: Number(row.total),
    },
  }
}

/**
 * `GET /api/v1/workflow-executions/{execution_uuid}`: the execution and `data`, each node's
 * input, output, error and timings in the order the nodes ran (`position`).
 * @throws NotFoundError when the caller may not see it.
 */
export async function retrieve(ctx: ResourceCtx, uuid: string): Promise<{ data: TWorkflowExecutionDetail }> {
  const found = await requireExecution(ctx, uuid, 'read')
  // The jsonb columns as text, parsed by the mapper (see ExecutionDataRow).
  const rows = await queries(ctx.em)
    .selectFrom('workflow_execution_data as d')
    .select((eb) => [
      'd.node_id as nodeId',
      'd.node_type as nodeType',
      'd.status',
      eb.cast<string | null>('d.input', 'text').as('input'),
      eb.cast<string | null>('d.output', 'text').as('output'),
      eb.cast<string | null>('d.error', 'text').as('error'),
      eb.cast<string | null>('d.branches', 'text').as('branches'),
      'd.attempts',
      'd.started_at as startedAt',
      'd.finished_at as finishedAt',
      'd.duration_ms as durationMs',
    ])
    .where('d.execution_id', '=', found.id)
    .orderBy('d.position')
    .orderBy('d.id')
    .execute()
  return { data: { ...toItem(ctx, found.raw), data: rows.map(toWorkflowExecutionData) } }
}

/**
 * `DELETE /api/v1/workflow-executions/{execution_uuid}`: a hard delete of an ended execution
 * (its per-node data cascades). The state check and the delete are one statement, so an
 * execution that starts meanwhile is not deleted under its executor.
 * @throws NotFoundError (not visible), ForbiddenError (less than `write` on the workflow),
 *   ConflictError while it is `queued` or `running` (cancel it first).
 */
export async function remove(ctx: ResourceCtx, uuid: string): Promise<void> {
  const found = await requireExecution(ctx, uuid, 'write')
  const deleted = await ctx.em.transactional(async (em) => {
    const rows = await queries(em)
      .deleteFrom('workflow_executions')
      .where('id', '=', found.id)
      .where('status', 'not in', ['queued', 'running'])
      .returning('uuid')
      .execute()
    if (rows.length) {
      await audit(em, ctx, { action: 'workflow_execution.delete', resource: { type: 'workflow_execution', uuid: rows[0].uuid } })
    }
    return rows.length > 0
  })
  if (deleted) return
  // Nothing deleted: still unfinished (409), or deleted by a concurrent request (404).
  const row = await queries(ctx.em).selectFrom('workflow_executions').select('status').where('id', '=', found.id).executeTakeFirst()
  if (!row) throw new NotFoundError(LABEL)
  throw new ConflictError(`The workflow execution is ${row.status}; cancel it before deleting it`)
}

/**
 * `POST /api/v1/workflow-executions/{execution_uuid}/cancel`: a `queued` or `running`
 * execution becomes `canceled` (error code `canceled`, finished now, its duration counted from
 * `started_at` when it started), in one statement, so a race with the executor finishing is
 * decided by the database, and recorded in the audit log; once that committed, the engine stops
 * it if it runs in this process (other processes notice at their next heartbeat).
 * @throws NotFoundError (not visible), ConflictError when it has already ended.
 */
export async function cancel(ctx: ResourceCtx, uuid: string): Promise<{ data: TWorkflowExecution }> {
  const found = await requireExecution(ctx, uuid, 'read')
  const canceled = await ctx.em.transactional(async (em) => {
    const [before] = await em.execute(`select uuid, status from workflow_executions where id = ? for update`, [found.id])
    if (!before || !(await markCanceled(em, found.id))) return false
    await audit(em, ctx, {
      action: 'workflow_execution.cancel',
      resource: { type: 'workflow_execution', uuid: String(before.uuid) },
      changes: { status: { from: before.status, to: 'canceled' } },
    })
    return true
  })
  if (!canceled) throw new ConflictError('The workflow execution has already ended')
  countExecutionEnds('canceled')
  // Stopped once the cancel committed, so the executor finds it canceled.
  ctx.deps.workflows.abort(found.id)
  return { data: await loadExecution(ctx, found.id) }
}

/**
 * Ends execution `executionId` `canceled` unless it has ended (as {@link cancel} does, without
 * the access check: the caller already holds the execution) and stops it if it runs here;
 * answers whether it was canceled.
 */
export async function cancelExecution(ctx: Pick<ResourceCtx, 'em' | 'deps'>, executionId: number): Promise<boolean> {
  if (!(await markCanceled(ctx.em, executionId))) return false
  countExecutionEnds('canceled')
  ctx.deps.workflows.abort(executionId)
  return true
}

/**
 * Marks execution `executionId` `canceled` if it is `queued` or `running`, in one statement, so a
 * race with the executor finishing is decided by the database; answers whether it did.
 */
async function markCanceled(em: Em, executionId: number): Promise<boolean> {
  const canceled = await em.execute(
    `update workflow_executions set status = 'canceled', error_code = 'canceled', error = 'Canceled', finished_at = now(),
       duration_ms = case when started_at is null then null
         else greatest(0, round(extract(epoch from (now() - started_at)) * 1000))::int end,
       updated_at = now()
     where id = ? and status in ('queued', 'running') returning id`,
    [executionId],
  )
  return canceled.length > 0
}

/**
 * `POST /api/v1/workflow-executions/{execution_uuid}/retry`: a new `queued` execution of the
 * same workflow with the original's input, mode `retry`, `retry_of` the original and the caller
 * as its user (the workflow's `trigger_count` goes up by one, src/workflows/store.ts),
 * handed to the engine's queue. The router answers 202.
 * @throws NotFoundError (not visible), ConflictError unless the original `failed` or was `canceled`.
 */
export async function retry(ctx: ResourceCtx, uuid: string): Promise<{ data: TWorkflowExecution }> {
  const found = await requireExecution(ctx, uuid, 'read')
  if (found.status !== 'failed' && found.status !== 'canceled') {
    throw new ConflictError(`Only a failed or canceled workflow execution can be retried; this one is ${found.status}`)
  }
  const record = await ctx.deps.workflows.runQueued(
    { id: found.workflowId },
    { mode: 'retry', userId: ctx.auth.user.id, input: found.input === null ? null : JSON.parse(found.input), retryOf: found.id },
  )
  return { data: await loadExecution(ctx, record.id) }
}
