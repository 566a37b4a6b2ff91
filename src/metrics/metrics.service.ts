/**
 * The metrics endpoints (specification: "Metrics endpoints"; docs/api/metrics.md): each function
 * builds the WHERE of the rows the caller could list in the request's workspace, plus the
 * endpoint's filters, and runs the calculation in one statement (./metrics.query.ts).
 *
 * Scope decisions (docs/api):
 * - agents, workflows: exactly the rows of their list (listScopeSql + the list filters);
 * - threads: live threads of the workspace context whose agent is live, that the caller started
 *   (workspace owners and admins: every thread of the workspace);
 * - messages: live messages of those threads (the workspace of their thread);
 * - workflow executions: live executions of live workflows of the workspace context that the
 *   caller could list.
 */
import { listScopeSql, serviceScopeSql, viewerOf, workspaceInScopeSql } from '../access/resource-access.ts'
import { managesWorkspace } from '../access/visibility.ts'
import type {
  TAgentMetricsInput,
  TExecutionMetricsInput,
  TMessageMetricsInput,
  TMetricsResponse,
  TThreadMetricsInput,
  TWorkflowMetricsInput,
  TWorkspaceMetrics,
} from './metrics.schema.ts'
import type { TResourceListFilters } from '../access/resource.schema.ts'
import { Conditions, resourceFilterSql, searchSql, threadSearchSql } from '../access/list-filters.ts'
import type { ResourceCtx } from '../context.ts'
import { runMetric, table, type MetricRunner, type MetricSource } from './metrics.query.ts'
import type { SqlFragment } from '../platform/sql.ts'

/** Where the metrics of a request run: the ORM's pool, else (PGlite) the request's EntityManager. */
const runnerOf = (ctx: ResourceCtx): MetricRunner => ({ orm: ctx.deps.orm, em: () => ctx.em })

/**
 * Agents or workflows the caller could list (listScopeSql plus the list filters), as two disjoint
 * branches so that an index range drives each (docs/api/metrics.md, "How the statements are built"): the rows of the
 * request's workspace (its `(workspace_id, created_at)` range), and rows of other workspaces
 * shared with the caller or the workspace (the caller's `shares`). Both keep the whole list
 * scope; the second only repeats its share condition where the planner can start from it.
 * `visibility=public` spans every workspace of the service scope: one branch.
 */
function listedSource(resource: 'agents' | 'workflows', ctx: ResourceCtx, input: TResourceListFilters): MetricSource {
  const where = resourceFilterSql('r', resource, ctx, input)
  const from = table(`${resource} r`)
  if (input.visibility === 'public') return { branches: [{ from, where, alias: 'r' }] }
  const viewer = viewerOf(ctx)
  const own = new Conditions(where).add('r.workspace_id = ?', viewer.workspaceId)
  const shared = new Conditions(where).add(
    `r.workspace_id is distinct from ? and r.id in (select ss.resource_id from shares ss where ss.resource_type = ?
      and ((ss.entity_type = 'user' and ss.entity_id = ?) or (ss.entity_type = 'workspace' and ss.entity_id = ?)))`,
    viewer.workspaceId,
    resource,
    viewer.userId,
    viewer.workspaceId,
  )
  return {
    branches: [
      { from, where: own.toSql(), alias: 'r' },
      { from, where: shared.toSql(), alias: 'r' },
    ],
  }
}

/** Agents the caller could list, filtered as the list filters them. */
function agentsSource(ctx: ResourceCtx, input: TAgentMetricsInput): MetricSource {
  return listedSource('agents', ctx, input)
}

/** Workflows the caller could list, filtered as the list filters them. */
function workflowsSource(ctx: ResourceCtx, input: TWorkflowMetricsInput): MetricSource {
  return listedSource('workflows', ctx, input)
}

/**
 * Threads counted for the caller: see the module comment. "Whose agent is live" is asked as
 * "no deleted agent" (the same rows: `threads.agent_id` is a non-null foreign key), which
 * PostgreSQL answers from the deleted agents alone rather than from every live one.
 */
function threadScopeSql(alias: string, ctx: ResourceCtx): SqlFragment {
  const viewer = viewerOf(ctx)
  const scope = serviceScopeSql(alias, ctx)
  const manages = viewer.role === 'owner' || viewer.role === 'admin'
  return {
    sql: `(${alias}.deleted_at is null and ${alias}.workspace_id = ? and ${scope.sql} and ${alias}.evaluation_uuid is null
      and not exists (select 1 from agents ta where ta.id = ${alias}.agent_id and ta.deleted_at is not null)
      ${manages ? '' : `and ${alias}.user_id = ?`})`,
    params: [viewer.workspaceId, ...scope.params, ...(manages ? [] : [viewer.userId])],
  }
}

/** Threads: `user_id` (creator), `search` (name or any message's content), `agent_uuid`. */
function threadsSource(ctx: ResourceCtx, input: TThreadMetricsInput): MetricSource {
  const where = new Conditions(threadScopeSql('t', ctx))
  if (input.workspace_uuid) where.add('t.workspace_id = (select fw.id from workspaces fw where fw.uuid = ?)', input.workspace_uuid)
  if (input.user_id !== undefined) where.add('t.user_id = ?', input.user_id)
  if (input.agent_uuid) where.add('t.agent_id = (select fa.id from agents fa where fa.uuid = ?)', input.agent_uuid)
  if (input.search) where.add(threadSearchSql('t', input.search))
  return { branches: [{ from: table('threads t'), where: where.toSql(), alias: 't' }] }
}

/**
 * Messages of the counted threads: `search` (content), `thread_uuid`. The messages of the date
 * range drive. For owners and admins their threads are checked by anti-joins
 * ({@link managedMessagesSql}); for other members each message's thread is checked in a LATERAL
 * subquery (`offset 0` keeps PostgreSQL from flattening it) that PostgreSQL memoizes by
 * `thread_id`, so the check runs once per thread of the range rather than over every thread of
 * the workspace.
 */
function messagesSource(ctx: ResourceCtx, input: TMessageMetricsInput): MetricSource {
  const where = new Conditions({ sql: 'm.deleted_at is null and m.workspace_id = ?', params: [ctx.workspace.workspace.id] })
  if (input.thread_uuid) where.add('m.thread_id = (select ft.id from threads ft where ft.uuid = ?)', input.thread_uuid)
  if (input.search) where.add(searchSql(['m.content'], input.search))
  if (managesWorkspace(viewerOf(ctx))) {
    where.add(managedMessagesSql(ctx))
    return { branches: [{ from: table('messages m'), where: where.toSql(), alias: 'm' }] }
  }
  const thread = threadScopeSql('t', ctx)
  const from = {
    sql: `messages m join lateral (select 1 from threads t where t.id = m.thread_id and ${thread.sql} offset 0) mt on true`,
    params: thread.params,
  }
  return { branches: [{ from, where: where.toSql(), alias: 'm' }] }
}

/**
 * "The thread of message `m` is counted", for owners and admins, who count every thread of the
 * workspace: the workspace is in the caller's service scope (one check of the request's
 * workspace, not one per row), and the thread is neither deleted nor of a deleted agent (two
 * anti-joins on the few deleted threads and agents, through their partial indexes). A message's
 * `workspace_id` is always its thread's: every insert takes the thread through
 * `requireThread` or creates it, both in the request's workspace (src/threads/threads.service.ts,
 * runs.service.ts), so "the thread is in this workspace" needs no look-up per message either.
 */
function managedMessagesSql(ctx: ResourceCtx): SqlFragment {
  const workspace = workspaceInScopeSql({ sql: '?', params: [ctx.workspace.workspace.id] }, ctx)
  return {
    sql: `${workspace.sql}
      and not exists (select 1 from threads dt where dt.id = m.thread_id and dt.deleted_at is not null)
      and not exists (select 1 from threads at join agents da on da.id = at.agent_id and da.deleted_at is not null where at.id = m.thread_id)
      and not exists (select 1 from threads et where et.id = m.thread_id and et.evaluation_uuid is not null)`,
    params: workspace.params,
  }
}

/** "The workflow of execution `alias` is one the caller could list" (see {@link executionsSource}). */
function listedWorkflowOf(alias: string, ctx: ResourceCtx): SqlFragment {
  if (managesWorkspace(viewerOf(ctx))) {
    return { sql: `not exists (select 1 from workflows dw where dw.id = ${alias}.workflow_id and dw.deleted_at is not null)`, params: [] }
  }
  const visible = listScopeSql('w', 'workflows', ctx)
  return {
    sql: `exists (select 1 from workflows w where w.id = ${alias}.workflow_id and w.workspace_id = ${alias}.workspace_id and ${visible.sql})`,
    params: visible.params,
  }
}

/**
 * Executions of listable workflows of the workspace: `user_id` (trigger), `workflow_uuid`,
 * `workflow_uuids`. Owners and admins can list every live workflow of their workspace, and an
 * execution's `workspace_id` is always its workflow's (src/workflows/store.ts), so for them
 * "its workflow is listable" is "its workflow is not deleted": an anti-join on the few deleted
 * workflows (a partial index) instead of a look-up of the workflow of every execution in the range
 * (docs/api/metrics.md, "How the statements are built"). Other members keep the list scope.
 */
function executionsSource(ctx: ResourceCtx, input: TExecutionMetricsInput): MetricSource {
  const uuids = input.workflow_uuids ?? []
  const workflowListed = listedWorkflowOf('e', ctx)
  const where = new Conditions({
    sql: `e.deleted_at is null and e.workspace_id = ? and ${workflowListed.sql}`,
    params: [ctx.workspace.workspace.id, ...workflowListed.params],
  })
  if (input.workflow_uuid) where.add('e.workflow_id = (select fw.id from workflows fw where fw.uuid = ?)', input.workflow_uuid)
  if (uuids.length) {
    where.add("e.workflow_id in (select fw.id from workflows fw where fw.uuid = any(string_to_array(?, ',')::uuid[]))", uuids.join(','))
  }
  if (input.user_id !== undefined) where.add('e.user_id = ?', input.user_id)
  return { branches: [{ from: table('workflow_executions e'), where: where.toSql(), alias: 'e' }] }
}

/** The source of each metrics endpoint, by the service function's name (the benchmark builds statements with them). */
export const METRIC_SOURCES = {
  agents: agentsSource,
  workflows: workflowsSource,
  threads: threadsSource,
  messages: messagesSource,
  executions: executionsSource,
} as const

/** Agents the caller could list, filtered as the list filters them. */
export function agents(ctx: ResourceCtx, input: TAgentMetricsInput): Promise<TMetricsResponse> {
  return runMetric(runnerOf(ctx), agentsSource(ctx, input), input)
}

/** Workflows the caller could list, filtered as the list filters them. */
export function workflows(ctx: ResourceCtx, input: TWorkflowMetricsInput): Promise<TMetricsResponse> {
  return runMetric(runnerOf(ctx), workflowsSource(ctx, input), input)
}

/** Threads counted for the caller (see the module comment), filtered. */
export function threads(ctx: ResourceCtx, input: TThreadMetricsInput): Promise<TMetricsResponse> {
  return runMetric(runnerOf(ctx), threadsSource(ctx, input), input)
}

/** Messages of the counted threads, filtered. */
export function messages(ctx: ResourceCtx, input: TMessageMetricsInput): Promise<TMetricsResponse> {
  return runMetric(runnerOf(ctx), messagesSource(ctx, input), input)
}

/** Executions of listable workflows of the workspace, filtered. */
export function executions(ctx: ResourceCtx, input: TExecutionMetricsInput): Promise<TMetricsResponse> {
  return runMetric(runnerOf(ctx), executionsSource(ctx, input), input)
}

const COUNTED = ['agents', 'prompts', 'workflows', 'tools', 'accounts', 'threads', 'messages', 'workflow_executions'] as const
/** What leaves evaluations' threads and messages out of the counts (docs/api/evaluations.md: metrics count no evaluation run). */
const EVALUATION_FREE: Partial<Record<(typeof COUNTED)[number], string>> = {
  threads: ' and x.evaluation_uuid is null',
  messages: ' and not exists (select 1 from threads et where et.id = x.thread_id and et.evaluation_uuid is not null)',
}

/** The statement of {@link workspace}, the same for every workspace: its id is every parameter. */
const WORKSPACE_COUNTS = `select ${COUNTED.map(
  (table) => `(select count(*) from ${table} x where x.workspace_id = ? and x.deleted_at is null${EVALUATION_FREE[table] ?? ''})::float8 as ${table}`,
).join(', ')},
  (select count(*) from workspace_members wm where wm.workspace_id = ?)::float8 as members,
  (select count(*) from runs r where r.workspace_id = ? and r.evaluation_uuid is null)::float8 as runs,
  ((select coalesce(sum(r.total_tokens), 0) from runs r where r.workspace_id = ?)
    + (select coalesce(sum(mt.total_tokens), 0) from messages mt where mt.workspace_id = ? and mt.run_id is null and mt.deleted_at is null))::float8 as tokens`
const WORKSPACE_COUNT_PARAMS = COUNTED.length + 4

/**
 * `GET /api/v1/workspaces/{uuid}/metrics`: live rows of each kind in the workspace context,
 * members, runs (agent, thread and prompt runs; workflow executions are counted apart) and
 * tokens (every run's `total_tokens`, plus those of messages no run wrote), in one statement.
 * Any member may read it (the context already answered 404 to non-members).
 */
export async function workspace(ctx: ResourceCtx): Promise<TWorkspaceMetrics> {
  const id = ctx.workspace.workspace.id
  const [row] = await ctx.em.execute(
    WORKSPACE_COUNTS,
    Array.from({ length: WORKSPACE_COUNT_PARAMS }, () => id),
  )
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
    runs: number('runs'),
    tokens: number('tokens'),
  }
}
