/**
 * The metrics endpoints (specification: "Metrics endpoints"; API.md section 6): each function
 * builds the WHERE of the rows the caller could list in the request's workspace, plus the
 * endpoint's filters, and runs the calculation in one statement (./metrics.query.ts).
 *
 * Scope decisions (README "API notes"):
 * - agents, workflows: exactly the rows of their list (listScopeSql + the list filters);
 * - threads: live threads of the workspace context whose agent is live, that the caller started
 *   (workspace owners and admins: every thread of the workspace);
 * - messages: live messages of those threads (the workspace of their thread);
 * - workflow executions: live executions of live workflows of the workspace context that the
 *   caller could list.
 */
import { listScopeSql, serviceScopeSql, viewerOf, type ResourceCtx } from '../access/resource-access.ts'
import type { SqlFragment } from '../access/visibility.ts'
import type {
  TAgentMetricsInput,
  TExecutionMetricsInput,
  TMessageMetricsInput,
  TMetricsResponse,
  TThreadMetricsInput,
  TWorkflowMetricsInput,
  TWorkspaceMetrics,
} from '../schemas/metrics.schema.ts'
import { Conditions, resourceFilterSql, searchSql } from './list-filters.ts'
import { runMetric } from './metrics.query.ts'

/** Agents the caller could list, filtered as the list filters them. */
export function agents(ctx: ResourceCtx, input: TAgentMetricsInput): Promise<TMetricsResponse> {
  const where = resourceFilterSql('r', 'agents', ctx, input)
  return runMetric(ctx.em, { from: 'agents r', where, alias: 'r' }, input)
}

/** Workflows the caller could list, filtered as the list filters them. */
export function workflows(ctx: ResourceCtx, input: TWorkflowMetricsInput): Promise<TMetricsResponse> {
  const where = resourceFilterSql('r', 'workflows', ctx, input)
  return runMetric(ctx.em, { from: 'workflows r', where, alias: 'r' }, input)
}

/** Threads counted for the caller: see the module comment. */
function threadScopeSql(alias: string, ctx: ResourceCtx): SqlFragment {
  const viewer = viewerOf(ctx)
  const scope = serviceScopeSql(alias, ctx)
  const manages = viewer.role === 'owner' || viewer.role === 'admin'
  return {
    sql: `(${alias}.deleted_at is null and ${alias}.workspace_id = ? and ${scope.sql}
      and exists (select 1 from agents ta where ta.id = ${alias}.agent_id and ta.deleted_at is null)
      ${manages ? '' : `and ${alias}.user_id = ?`})`,
    params: [viewer.workspaceId, ...scope.params, ...(manages ? [] : [viewer.userId])],
  }
}

/** Threads: `user_id` (creator), `search` (name or any message's content), `agent_uuid`. */
export function threads(ctx: ResourceCtx, input: TThreadMetricsInput): Promise<TMetricsResponse> {
  const where = new Conditions(threadScopeSql('t', ctx))
  if (input.workspace_uuid) where.add('t.workspace_id = (select fw.id from workspaces fw where fw.uuid = ?)', input.workspace_uuid)
  if (input.user_id !== undefined) where.add('t.user_id = ?', input.user_id)
  if (input.agent_uuid) where.add('t.agent_id = (select fa.id from agents fa where fa.uuid = ?)', input.agent_uuid)
  if (input.search) {
    const name = searchSql(['t.name'], input.search)
    const content = searchSql(['sm.content'], input.search)
    where.add({
      sql: `(${name.sql} or exists (select 1 from messages sm where sm.thread_id = t.id and sm.deleted_at is null and ${content.sql}))`,
      params: [...name.params, ...content.params],
    })
  }
  return runMetric(ctx.em, { from: 'threads t', where: where.toSql(), alias: 't' }, input)
}

/** Messages of the counted threads: `search` (content), `thread_uuid`. */
export function messages(ctx: ResourceCtx, input: TMessageMetricsInput): Promise<TMetricsResponse> {
  const thread = threadScopeSql('t', ctx)
  const where = new Conditions({
    sql: `m.deleted_at is null and m.workspace_id = ? and exists (select 1 from threads t where t.id = m.thread_id and ${thread.sql}
      ${input.thread_uuid ? 'and t.uuid = ?' : ''})`,
    params: [ctx.workspace.workspace.id, ...thread.params, ...(input.thread_uuid ? [input.thread_uuid] : [])],
  })
  if (input.search) where.add(searchSql(['m.content'], input.search))
  return runMetric(ctx.em, { from: 'messages m', where: where.toSql(), alias: 'm' }, input)
}

/** Executions of listable workflows of the workspace: `user_id` (trigger), `workflow_uuid`, `workflow_uuids`. */
export function executions(ctx: ResourceCtx, input: TExecutionMetricsInput): Promise<TMetricsResponse> {
  const visible = listScopeSql('w', 'workflows', ctx)
  const uuids = input.workflow_uuids ?? []
  const where = new Conditions({
    sql: `e.deleted_at is null and e.workspace_id = ? and exists (select 1 from workflows w where w.id = e.workflow_id
      and w.workspace_id = e.workspace_id and ${visible.sql}
      ${input.workflow_uuid ? 'and w.uuid = ?' : ''} ${uuids.length ? 'and w.uuid in (?)' : ''})`,
    params: [
      ctx.workspace.workspace.id,
      ...visible.params,
      ...(input.workflow_uuid ? [input.workflow_uuid] : []),
      ...(uuids.length ? [uuids] : []),
    ],
  })
  if (input.user_id !== undefined) where.add('e.user_id = ?', input.user_id)
  return runMetric(ctx.em, { from: 'workflow_executions e', where: where.toSql(), alias: 'e' }, input)
}

const COUNTED = ['agents', 'prompts', 'workflows', 'tools', 'accounts', 'threads', 'messages', 'workflow_executions'] as const

/** The statement of {@link workspace}, the same for every workspace: its id is every parameter. */
const WORKSPACE_COUNTS = `select ${COUNTED.map(
  (table) => `(select count(*) from ${table} x where x.workspace_id = ? and x.deleted_at is null)::float8 as ${table}`,
).join(', ')},
  (select count(*) from workspace_members wm where wm.workspace_id = ?)::float8 as members,
  (select coalesce(sum(mt.total_tokens), 0) from messages mt where mt.workspace_id = ? and mt.deleted_at is null)::float8 as tokens`
const WORKSPACE_COUNT_PARAMS = COUNTED.length + 2

/**
 * `GET /api/v1/workspaces/{uuid}/metrics`: live rows of each kind in the workspace context,
 * members, runs (workflow executions until runs have their own table) and tokens (sum of
 * `messages.total_tokens`), in one statement. Any member may read it (the context already
 * answered 404 to non-members).
 */
export async function workspace(ctx: ResourceCtx): Promise<TWorkspaceMetrics> {
  const id = ctx.workspace.workspace.id
  const [row] = await ctx.em.execute(WORKSPACE_COUNTS, Array.from({ length: WORKSPACE_COUNT_PARAMS }, () => id))
  const number = (key: string): number => Number(row?.[key] ?? 0)
  return {
    agents: number('agents'),
    prompts: number('prompts'),
    workflows: number('workflows'),
    tools: number('tools'),
    accounts: number('accounts'),
    threads: number('threads'),
    messages: number('messages'),
    workflow_executions: number('workflow_executions'),
    members: number('members'),
    runs: number('workflow_executions'),
    tokens: number('tokens'),
  }
}
