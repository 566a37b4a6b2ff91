/**
 * Budgets (docs/api/usage-and-budgets.md, "Budgets"): spending limits of the request's workspace.
 * Every member reads them; its `owner`s and `admin`s write them (others 403). A budget's target
 * (agent, member or access token) must be of the workspace: anything else is a 400 naming the
 * field, as an unknown uuid is, so nothing of another workspace is revealed.
 */
import { audit, fieldChanges } from '../access/audit.ts'
import { uuidv7 } from 'uuidv7'
import { ForbiddenError, NotFoundError, ValidationError } from '../platform/errors.ts'
import { Conditions } from '../access/list-filters.ts'
import { listPage, nameAndTimeSorts, type ListSource } from '../access/list-page.ts'
import type { ResourceCtx } from '../context.ts'
import { viewerOf } from '../access/resource-access.ts'
import { managesWorkspace } from '../access/visibility.ts'
import { BUDGET_FROM, BUDGET_SELECT } from './spend.ts'
import {
  budgetProblems,
  SCOPE_TARGETS,
  toBudget,
  type BudgetDraft,
  type BudgetRow,
  type TBudget,
  type TBudgetListInput,
  type TCreateBudgetInput,
  type TUpdateBudgetInput,
} from './usage.schema.ts'

const SOURCE: ListSource = {
  from: BUDGET_FROM,
  columns: BUDGET_SELECT,
  alias: 'b',
  sorts: nameAndTimeSorts('b'),
}

/** @throws ForbiddenError unless the caller is an `owner` or `admin` of the request's workspace. */
function requireManager(ctx: ResourceCtx): void {
  if (!managesWorkspace(viewerOf(ctx)))
    throw new ForbiddenError(`Your role (${ctx.workspace.role}) may not change budgets: ask an owner or admin`)
}

async function readBudget(ctx: ResourceCtx, id: number): Promise<{ data: TBudget }> {
  const [row] = await ctx.em.execute<BudgetRow[]>(`select ${BUDGET_SELECT} from ${BUDGET_FROM} where b.id = ?`, [id])
  if (!row) throw new NotFoundError('Budget')
  return { data: toBudget(row) }
}

/** The ids of a budget's target as stored. */
type TargetIds = { agentId: number | null; userId: number | null; accessTokenId: number | null }

/** The id, stored fields and target ids of budget `uuid` of the request's workspace. @throws NotFoundError otherwise. */
async function requireBudget(ctx: ResourceCtx, uuid: string): Promise<{ id: number; draft: BudgetDraft; targets: TargetIds }> {
  const [row] = await ctx.em.execute<(BudgetRow & { agentId: number | null; accessTokenId: number | null })[]>(
    `select ${BUDGET_SELECT}, b.agent_id::float8 as "agentId", b.access_token_id::float8 as "accessTokenId" from ${BUDGET_FROM} where b.uuid = ? and b.workspace_id = ?`,
    [uuid, ctx.workspace.workspace.id],
  )
  if (!row) throw new NotFoundError('Budget')
  const b = toBudget(row)
  return {
    id: Number(row.id),
    draft: {
      name: b.name,
      scope: b.scope,
      agent_uuid: b.agent_uuid,
      user_id: b.user_id,
      access_token_uuid: b.access_token_uuid,
      period: b.period,
      limit_cost: b.limit_cost,
      limit_tokens: b.limit_tokens,
      action: b.action,
      alert_thresholds: b.alert_thresholds,
      is_active: b.is_active,
    },
    targets: {
      agentId: row.agentId === null ? null : Number(row.agentId),
      userId: b.user_id,
      accessTokenId: row.accessTokenId === null ? null : Number(row.accessTokenId),
    },
  }
}

/** The ids of a draft's target, checked to be of the workspace. @throws ValidationError naming the field. */
async function targetIds(ctx: ResourceCtx, draft: BudgetDraft): Promise<TargetIds> {
  const workspaceId = ctx.workspace.workspace.id
  const target = SCOPE_TARGETS[draft.scope]
  if (target === 'agent_uuid') {
    const [row] = await ctx.em.execute('select id::float8 as id from agents where uuid = ? and workspace_id = ? and deleted_at is null', [
      draft.agent_uuid,
      workspaceId,
    ])
    if (!row) throw new ValidationError(['agent_uuid'], 'No agent of this workspace has this uuid')
    return { agentId: Number(row.id), userId: null, accessTokenId: null }
  }
  if (target === 'user_id') {
    const [row] = await ctx.em.execute('select user_id from workspace_members where user_id = ? and workspace_id = ?', [
      draft.user_id,
      workspaceId,
    ])
    if (!row) throw new ValidationError(['user_id'], 'No member of this workspace has this id')
    return { agentId: null, userId: Number(draft.user_id), accessTokenId: null }
  }
  if (target === 'access_token_uuid') {
    // A token of a member, bound to this workspace or to none.
    const [row] = await ctx.em.execute(
      `select t.id::float8 as id from access_tokens t join workspace_members m on m.user_id = t.user_id and m.workspace_id = ?
       where t.uuid = ? and (t.workspace_id is null or t.workspace_id = ?)`,
      [workspaceId, draft.access_token_uuid, workspaceId],
    )
    if (!row) throw new ValidationError(['access_token_uuid'], 'No access token of a member of this workspace has this uuid')
    return { agentId: null, userId: null, accessTokenId: Number(row.id) }
  }
  return { agentId: null, userId: null, accessTokenId: null }
}

/** The columns a budget's body writes, in the order of {@link storedValues}. */
const STORED_COLUMNS = [
  'name',
  'scope',
  'agent_id',
  'user_id',
  'access_token_id',
  'period',
  'limit_cost',
  'limit_tokens',
  'action',
  'alert_thresholds',
  'is_active',
] as const

/** A draft and its target's ids as the values of {@link STORED_COLUMNS}. */
function storedValues(draft: BudgetDraft, ids: TargetIds): unknown[] {
  // prettier-ignore
  return [draft.name, draft.scope, ids.agentId, ids.userId, ids.accessTokenId, draft.period, draft.limit_cost, draft.limit_tokens, draft.action,
    JSON.stringify(draft.alert_thresholds), draft.is_active]
}

/** The workspace's budgets with their live spend, filtered by `scope`, paginated. */
export async function list(ctx: ResourceCtx, input: TBudgetListInput) {
  const where = new Conditions({ sql: 'b.workspace_id = ?', params: [ctx.workspace.workspace.id] })
  if (input.scope) where.add('b.scope = ?', input.scope)
  return listPage(ctx, SOURCE, where.toSql(), input, { path: '/api/v1/budgets', query: { scope: input.scope } }, (row) =>
    toBudget(row as unknown as BudgetRow),
  )
}

/** One budget of the workspace with its live spend. @throws NotFoundError */
export async function retrieve(ctx: ResourceCtx, uuid: string): Promise<{ data: TBudget }> {
  return readBudget(ctx, (await requireBudget(ctx, uuid)).id)
}

/** Creates a budget. @throws ForbiddenError (not an owner or admin), ValidationError (a target not of the workspace). */
export async function create(ctx: ResourceCtx, input: TCreateBudgetInput): Promise<{ data: TBudget }> {
  requireManager(ctx)
  const draft: BudgetDraft = {
    name: input.name,
    scope: input.scope,
    agent_uuid: input.agent_uuid ?? null,
    user_id: input.user_id ?? null,
    access_token_uuid: input.access_token_uuid ?? null,
    period: input.period,
    limit_cost: input.limit_cost ?? null,
    limit_tokens: input.limit_tokens ?? null,
    action: input.action,
    alert_thresholds: input.alert_thresholds,
    is_active: input.is_active,
  }
  const ids = await targetIds(ctx, draft)
  const uuid = uuidv7()
  const id = await ctx.em.transactional(async (em) => {
    const [row] = await em.execute(
      `insert into budgets (uuid, workspace_id, ${STORED_COLUMNS.join(', ')}, created_at, updated_at)
       values (?, ?, ${STORED_COLUMNS.map((column) => (column === 'alert_thresholds' ? '?::jsonb' : '?')).join(', ')}, now(), now()) returning id::float8 as id`,
      [uuid, ctx.workspace.workspace.id, ...storedValues(draft, ids)],
    )
    await audit(em, ctx, { action: 'budget.create', resource: { type: 'budget', uuid }, changes: fieldChanges(null, { ...draft }) })
    return Number(row.id)
  })
  return readBudget(ctx, id)
}

/**
 * Changes a budget: the fields given replace the stored ones, and the result must satisfy the
 * rules of a new budget (changing `scope` needs its target). @throws as {@link create}; NotFoundError.
 */
export async function update(ctx: ResourceCtx, input: TUpdateBudgetInput): Promise<{ data: TBudget }> {
  requireManager(ctx)
  const { id, draft: stored, targets } = await requireBudget(ctx, input.budget_uuid)
  const scopeChanged = input.scope !== undefined && input.scope !== stored.scope
  const draft: BudgetDraft = { ...stored }
  for (const key of Object.keys(draft) as (keyof BudgetDraft)[]) {
    if (input[key] !== undefined) (draft as unknown as Record<string, unknown>)[key] = input[key]
  }
  // A new scope drops the old one's target unless the body names it again.
  if (scopeChanged) {
    for (const [scope, field] of Object.entries(SCOPE_TARGETS))
      if (field && scope !== draft.scope && input[field] === undefined) draft[field] = null
  }
  const [problem] = budgetProblems(draft)
  if (problem) throw new ValidationError(problem.path, problem.message)
  // An unchanged target is kept as stored, even one since deleted or gone from the workspace: its budget stays editable.
  const target = SCOPE_TARGETS[draft.scope]
  const unchanged = !scopeChanged && (target === null || input[target] === undefined || input[target] === stored[target])
  const ids = unchanged ? targets : await targetIds(ctx, draft)
  await ctx.em.transactional(async (em) => {
    await em.execute(
      `update budgets set ${STORED_COLUMNS.map((column) => `${column} = ?${column === 'alert_thresholds' ? '::jsonb' : ''}`).join(', ')}, updated_at = now() where id = ?`,
      [...storedValues(draft, ids), id],
    )
    const changes = fieldChanges({ ...stored }, { ...draft })
    await audit(em, ctx, { action: 'budget.update', resource: { type: 'budget', uuid: input.budget_uuid }, changes })
  })
  return readBudget(ctx, id)
}

/** Deletes a budget (and its alerts). @throws ForbiddenError, NotFoundError */
export async function remove(ctx: ResourceCtx, uuid: string): Promise<void> {
  requireManager(ctx)
  const { id } = await requireBudget(ctx, uuid)
  await ctx.em.transactional(async (em) => {
    const deleted = await em.execute<{ id: number }[]>('delete from budgets where id = ? returning id', [id])
    if (deleted.length > 0) await audit(em, ctx, { action: 'budget.delete', resource: { type: 'budget', uuid } })
  })
}
