/**
 * Approvals of tool calls (docs/api/runs.md, "Approvals"): listing and reading the approvals a
 * caller may see, and deciding them.
 *
 * Who sees an approval: the user who started its run, and the owners and admins of the workspace
 * the run belongs to (its agent's workspace); anyone else gets 404, another tenant included. A
 * list shows those of the request's workspace. Deciding needs a token that may write (403, from
 * the mutation procedures' middleware, src/trpc/init.ts, before anything here).
 *
 * A decision locks its run's row first, so two decisions on one run are serialised: the one that
 * leaves nothing pending sees the other's, and asks for the run to resume (a job of the durable
 * queue, src/runs/run-manager.ts) exactly once. The resume itself claims the run in one
 * statement, so a duplicate request resumes nothing.
 */
import { audit } from '../access/audit.ts'
import { ConflictError, NotFoundError, ValidationError } from '../platform/errors.ts'
import { schemaIssue } from '../platform/json-schema.ts'
import { jsonRecordOf, page, sortOf, storableJson } from '../access/wire.ts'
import type { ResourceCtx } from '../context.ts'
import { toApproval, type TApproval } from './run.schema.ts'
import type { TApprovalDecision, TApprovalListInput } from './approval.schema.ts'

/** An approval (`ap`) of run `r` as the wire's Approval object; needs `t` (its thread), `a` (its agent) and {@link APPROVAL_JOINS}. */
export const APPROVAL_JSON = `jsonb_build_object('uuid', ap.uuid, 'run_uuid', r.uuid, 'thread_uuid', t.uuid, 'agent_uuid', a.uuid,
  'tool_call_id', ap.tool_call_id, 'tool_kind', ap.tool_kind, 'tool_name', ap.tool_name, 'tool_uuid', tl.uuid, 'workflow_uuid', wf.uuid,
  'arguments', ap.arguments, 'status', ap.status,
  'decided_by', case when du.id is null then null else jsonb_build_object('id', du.id, 'name', du.name) end,
  'decided_at', ap.decided_at, 'reason', ap.reason, 'expires_at', ap.expires_at, 'created_at', ap.created_at, 'updated_at', ap.updated_at)`

/** What {@link APPROVAL_JSON} names besides the approval, its run, thread and agent. */
export const APPROVAL_JOINS =
  'left join tools tl on tl.id = ap.tool_id left join workflows wf on wf.id = ap.workflow_id left join users du on du.id = ap.decided_by_id'

/** The approvals of run `r` (with its thread `t` and agent `a` in scope), oldest first, as a JSON array. */
export const APPROVALS_OF_RUN_SQL = `(select coalesce(jsonb_agg(${APPROVAL_JSON} order by ap.id), '[]'::jsonb) from run_approvals ap ${APPROVAL_JOINS} where ap.run_id = r.id)`

const APPROVAL_FROM = `run_approvals ap join runs r on r.id = ap.run_id left join threads t on t.id = r.thread_id left join agents a on a.id = r.agent_id ${APPROVAL_JOINS}`

/**
 * The approvals the caller may see (module comment) in the request's workspace: its runs', and
 * every run's of the workspace for an owner or admin. Parameters: the workspace id, the caller's
 * id, whether the caller is an owner or admin there.
 */
const VISIBLE = `coalesce(a.workspace_id, r.workspace_id) = ? and (r.user_id = ? or ?::boolean)`

const visibleParams = (ctx: ResourceCtx): unknown[] => [
  ctx.workspace.workspace.id,
  ctx.auth.user.id,
  ['owner', 'admin'].includes(ctx.workspace.role),
]

/** `GET /api/v1/approvals`: newest first, filtered by `status`, `agent_uuid` and `run_uuid`. */
export async function list(ctx: ResourceCtx, input: TApprovalListInput) {
  const where = [VISIBLE]
  const params = visibleParams(ctx)
  if (input.status) {
    where.push('ap.status = ?')
    params.push(input.status)
  }
  if (input.agent_uuid) {
    where.push('a.uuid = ?')
    params.push(input.agent_uuid)
  }
  if (input.run_uuid) {
    where.push('r.uuid = ?')
    params.push(input.run_uuid)
  }
  const condition = where.join(' and ')
  const { direction } = sortOf(input.sort)
  const [rows, [count]] = await Promise.all([
    ctx.em.execute<{ approval: unknown }[]>(
      `select ${APPROVAL_JSON} as approval from ${APPROVAL_FROM} where ${condition}
       order by ap.created_at ${direction}, ap.id ${direction} limit ${input.per_page} offset ${(input.page - 1) * input.per_page}`,
      params,
    ),
    ctx.em.execute<{ total: number }[]>(`select count(*)::int as total from ${APPROVAL_FROM} where ${condition}`, params),
  ])
  return page(
    rows.map((row) => toApproval(jsonRecordOf(row.approval))),
    {
      total: Number(count.total),
      page: input.page,
      perPage: input.per_page,
      path: `${ctx.config.appUrl}/api/v1/approvals`,
      query: { sort: input.sort, status: input.status, agent_uuid: input.agent_uuid, run_uuid: input.run_uuid },
    },
  )
}

/** `GET /api/v1/approvals/{approval_uuid}`. @throws NotFoundError */
export async function retrieve(ctx: ResourceCtx, uuid: string): Promise<TApproval> {
  const [row] = await ctx.em.execute<{ approval: unknown }[]>(
    `select ${APPROVAL_JSON} as approval from ${APPROVAL_FROM} where ap.uuid = ? and ${VISIBLE}`,
    [uuid, ...visibleParams(ctx)],
  )
  if (!row) throw new NotFoundError('Approval')
  return toApproval(jsonRecordOf(row.approval))
}

/**
 * `POST /api/v1/approvals/{approval_uuid}/approve` and `.../deny`: records the decision and, when
 * it was the run's last pending approval, asks for the run to resume (module comment). Approved
 * `arguments` replace the model's once they satisfy the tool's input schema (any object for a
 * workflow).
 * @throws NotFoundError; ConflictError when the approval is
 *   no longer pending; ValidationError naming `arguments.<field>` for edited arguments the schema refuses.
 */
export async function decide(ctx: ResourceCtx, uuid: string, approved: boolean, input: TApprovalDecision): Promise<TApproval> {
  const found = await retrieveRow(ctx, uuid)
  if (found.status !== 'pending') throw new ConflictError(`The approval has been decided already (${found.status})`)
  if (approved && input.arguments && found.tool_kind !== 'workflow' && found.input_schema) {
    const issue = schemaIssue(jsonRecordOf(found.input_schema), input.arguments)
    if (issue)
      throw new ValidationError(
        ['arguments', ...issue.path],
        `arguments${issue.path.length ? `.${issue.path.join('.')}` : ''} ${issue.message}`,
      )
  }
  const resume = await ctx.em.transactional(async (em) => {
    // The run's row first: decisions on one run take turns (module comment).
    await em.execute('select id from runs where id = ? for update', [found.run_id])
    const decided = await em.execute<{ id: number }[]>(
      `update run_approvals set status = ?, reason = ?, decided_by_id = ?, decided_at = now(), updated_at = now(),
         arguments = coalesce(?::jsonb, arguments)
       where id = ? and status = 'pending' returning id`,
      [
        approved ? 'approved' : 'denied',
        input.reason ?? null,
        ctx.auth.user.id,
        approved && input.arguments ? storableJson(input.arguments) : null,
        found.id,
      ],
    )
    if (decided.length === 0) throw new ConflictError('The approval has been decided already')
    await audit(em, ctx, {
      action: approved ? 'approval.approve' : 'approval.deny',
      resource: { type: 'approval', uuid },
      changes: {
        status: { from: 'pending', to: approved ? 'approved' : 'denied' },
        ...(input.reason ? { reason: { from: null, to: input.reason } } : {}),
        ...(approved && input.arguments ? { arguments: { from: null, to: input.arguments } } : {}),
      },
    })
    const [left] = await em.execute<{ waiting: boolean }[]>(
      `select r.status = 'awaiting_approval' and not exists (select 1 from run_approvals p where p.run_id = r.id and p.status = 'pending') as waiting
       from runs r where r.id = ?`,
      [found.run_id],
    )
    return left?.waiting === true
  })
  if (resume) await ctx.deps.runs.requestResume(found.run_id)
  return retrieve(ctx, uuid)
}

/** The stored row of an approval the caller may see. @throws NotFoundError */
async function retrieveRow(
  ctx: ResourceCtx,
  uuid: string,
): Promise<{ id: number; run_id: number; status: string; tool_kind: string; input_schema: unknown }> {
  const [row] = await ctx.em.execute<{ id: number; run_id: number; status: string; tool_kind: string; input_schema: unknown }[]>(
    `select ap.id::float8 as id, ap.run_id::float8 as run_id, ap.status, ap.tool_kind, ap.input_schema from ${APPROVAL_FROM} where ap.uuid = ? and ${VISIBLE}`,
    [uuid, ...visibleParams(ctx)],
  )
  if (!row) throw new NotFoundError('Approval')
  return { ...row, id: Number(row.id), run_id: Number(row.run_id) }
}
