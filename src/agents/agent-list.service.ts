/**
 * `GET /api/v1/agents` (specification: "Resource-specific filters", Agents; docs/api/conventions.md
 * and docs/api/tenancy.md): the list rule of listScopeSql, the filters, sorting and the paginator.
 *
 * One statement whatever the page size and `with`, prepared on PostgreSQL: the page (the select
 * list of ./agent-read.service.ts) in a CTE, the total, and the tools, accounts and workflows the
 * page's agents link to, each distinct row once. A page's agents mostly share their tools and
 * workflows (a workspace has a handful), so building each agent's copies in SQL built, sent,
 * parsed and mapped the same rows once per agent; here Node maps each once and gives every
 * agent its links' copies. The other collections are per agent and stay correlated sub-selects.
 */
import { permissionOf } from '../access/visibility.ts'
import type { TListAgentsInput } from './agent-input.schema.ts'
import { toAgent, type AgentRelation } from './agent.schema.ts'
import { toPivotAccount, toTool, withPivotAccount, type PivotAccountRow, type TAgentTool, type TPivotAccount, type TTool, type ToolRow } from '../catalog/index.ts'
import { toWorkflowBase, type TWorkflowBase, type WorkflowRow } from '../workflows/index.ts'
import { isRecord, jsonValueOf, page, sortOf } from '../access/wire.ts'
import { linkedRowsSql, linksColumn, selectSql, toRecord } from './agent-read.service.ts'
import { executePrepared } from '../platform/db.ts'
import { resourceFilterQuery, resourceFilterSql } from '../access/list-filters.ts'
import type { ResourceCtx } from '../context.ts'

const SORT_COLUMNS: Record<string, string> = {
  created_at: 'a.created_at',
  name: 'lower(a.name)',
  updated_at: 'a.updated_at',
  usage_count: 'a.usage_count',
}

/** What the statement answers, as one json value. */
interface PageJson {
  total: number
  agents: Record<string, unknown>[] | null
  tools?: ToolRow[] | null
  accounts?: (PivotAccountRow & { id: number })[] | null
  workflows?: WorkflowRow[] | null
}

/**
 * The agents the caller may list (docs/api/tenancy.md) with the filters of the specification, as
 * the paginator shape: without `visibility`, the request workspace's agents the caller may see
 * plus those shared with the caller or that workspace; `visibility=public`, every public agent of
 * the service scope. `favorite`/`template` restrict when true and are ignored when false.
 */
export async function listAgents(ctx: ResourceCtx, input: TListAgentsInput) {
  const relations: ReadonlySet<AgentRelation> = new Set(input.with ?? [])
  const where = resourceFilterSql('a', 'agents', ctx, input)
  const select = selectSql(ctx, relations, { linked: true })
  // The text depends only on the select list's variant, the sort and the WHERE's text: built
  // when that key is new, not per request (executePrepared).
  const key = `agents.list|${select.key}|${input.sort}|${where.sql}`
  const [raw] = await executePrepared(
    ctx.deps.orm,
    () => ctx.em,
    key,
    () => pageSql(relations, select, input.sort, where.sql),
    [...select.params, ...where.params, input.per_page, (input.page - 1) * input.per_page, ...where.params],
  )
  const answer = jsonValueOf(raw?.page)
  if (!isRecord(answer)) throw new Error('The agent list statement answered no page')
  const json = answer as unknown as PageJson
  const viewerId = ctx.auth.user.id
  const appUrl = ctx.config.appUrl
  const embedded = linkedRows(json, viewerId, appUrl)
  const unlinked: ReadonlySet<AgentRelation> = new Set(
    [...relations].filter((relation) => relation !== 'tools' && relation !== 'workflows'),
  )
  const items = (json.agents ?? []).map((row) => {
    // listScopeSql only lets visible rows through, so every row carries a permission.
    const record = toRecord(row, unlinked, permissionOf(row.permission) ?? 'read')
    // The counts of a linked collection are the live rows its links name (what the count
    // sub-selects of an unlinked one count).
    const tools = relations.has('tools') ? agentTools(row[linksColumn('tools')], embedded) : undefined
    const workflows = relations.has('workflows') ? agentWorkflows(row[linksColumn('workflows')], embedded) : undefined
    record.mapped = { tools, workflows }
    if (tools) record.toolsCount = tools.length
    if (workflows) record.workflowsCount = workflows.length
    return toAgent(record, viewerId, appUrl)
  })
  return page(items, {
    total: Number(json.total),
    page: input.page,
    perPage: input.per_page,
    path: `${appUrl}/api/v1/agents`,
    query: {
      sort: input.sort,
      with: input.with?.join(','),
      ...resourceFilterQuery(input),
    },
  })
}

/**
 * The list statement (module comment); its parameters are the select list's, the WHERE's, the
 * limit and offset, and the WHERE's again (the total).
 */
function pageSql(relations: ReadonlySet<AgentRelation>, select: { columns: string; joins: string }, sort: string, where: string): string {
  const { column, direction } = sortOf(sort)
  const rows = [
    `'total', (select count(*) from agents a where ${where})`,
    // json_agg over an ordered CTE keeps no order by itself.
    `'agents', (select json_agg(p order by p."sortKey" ${direction}, p."a_id" ${direction}) from p)`,
    ...(relations.has('tools') ? [`'tools', ${linkedRowsSql('tools', 'p')}`, `'accounts', ${linkedRowsSql('accounts', 'p')}`] : []),
    ...(relations.has('workflows') ? [`'workflows', ${linkedRowsSql('workflows', 'p')}`] : []),
  ]
  // The total as a sub-select of the same statement: one round trip instead of two, and the
  // same plan as a count statement of its own (a window count over the page would compute the
  // select list of every matching row before the limit).
  return `with p as materialized (select ${select.columns},
      ${SORT_COLUMNS[column]} as "sortKey"
    from agents a ${select.joins} where ${where}
    order by ${SORT_COLUMNS[column]} ${direction}, a.id ${direction} limit ? offset ?)
    select json_build_object(${rows.join(',\n ')}) as "page"`
}

/** The page's live tools, accounts and workflows by id, each mapped to the wire once. */
interface LinkedRows {
  tools: Map<number, TTool>
  accounts: Map<number, TPivotAccount | null>
  workflows: Map<number, TWorkflowBase>
}

/** Maps each of the page's linked rows once; an account maps to its `pivot_account` (null when its provider is gone). */
function linkedRows(json: PageJson, viewerId: number, appUrl: string): LinkedRows {
  const rows: LinkedRows = { tools: new Map(), accounts: new Map(), workflows: new Map() }
  for (const row of json.tools ?? []) rows.tools.set(row.id, toTool(row, viewerId, appUrl))
  for (const row of json.accounts ?? []) rows.accounts.set(row.id, toPivotAccount(row))
  for (const row of json.workflows ?? []) rows.workflows.set(row.id, toWorkflowBase(row, viewerId, appUrl))
  return rows
}

/** An agent's `tools` from its links (`[tool id, account id]`, in order): live tools only, `pivot_account` null unless its account is live. */
function agentTools(links: unknown, rows: LinkedRows): TAgentTool[] {
  const out: TAgentTool[] = []
  for (const [toolId, accountId] of (links ?? []) as [number, number | null][]) {
    const tool = rows.tools.get(toolId)
    if (tool) out.push(withPivotAccount(tool, accountId === null ? null : (rows.accounts.get(accountId) ?? null)))
  }
  return out
}

/** An agent's `workflows` from its links (workflow ids, in order): live workflows only. */
function agentWorkflows(links: unknown, rows: LinkedRows): TWorkflowBase[] {
  const out: TWorkflowBase[] = []
  for (const workflowId of (links ?? []) as number[]) {
    const workflow = rows.workflows.get(workflowId)
    if (workflow) out.push(workflow)
  }
  return out
}
