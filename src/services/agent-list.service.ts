/**
 * `GET /api/v1/agents` (specification: "Resource-specific filters", Agents; docs/api/conventions.md
 * and docs/api/tenancy.md): the list rule of listScopeSql, the filters, sorting and the paginator. Two statements
 * whatever the page size and `with`: the page (each embedded relation a correlated sub-select,
 * see ./agent-read.service.ts) and the count, both prepared on PostgreSQL.
 */
import { permissionOf } from '../access/visibility.ts'
import type { TListAgentsInput } from '../schemas/agent-input.schema.ts'
import { toAgent, type AgentRelation } from '../schemas/agent.schema.ts'
import { page, sortOf } from '../schemas/wire.ts'
import { jsonRow, selectSql, toRecord } from './agent-read.service.ts'
import { executePrepared } from '../platform/db.ts'
import { resourceFilterQuery, resourceFilterSql } from './list-filters.ts'
import type { ResourceCtx } from '../context.ts'

const SORT_COLUMNS: Record<string, string> = {
  created_at: 'a.created_at',
  name: 'lower(a.name)',
  updated_at: 'a.updated_at',
  usage_count: 'a.usage_count',
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
  const select = selectSql(ctx, relations)
  const { column, direction } = sortOf(input.sort)
  // Rows as JSON (one column each); the page is re-sorted outside, since row_to_json over an
  // ordered sub-select keeps no order by itself.
  const pageSql = `select row_to_json(r) as "row" from (select ${select.columns},
      ${SORT_COLUMNS[column]} as "sortKey"
    from agents a ${select.joins} where ${where.sql}
    order by ${SORT_COLUMNS[column]} ${direction}, a.id ${direction} limit ? offset ?) r
    order by r."sortKey" ${direction}, r."a_id" ${direction}`
  const countSql = `select count(*)::int as total from agents a where ${where.sql}`
  const [rows, [count]] = await Promise.all([
    executePrepared(ctx.deps.orm, () => ctx.em, pageSql, pageSql, [
      ...select.params,
      ...where.params,
      input.per_page,
      (input.page - 1) * input.per_page,
    ]),
    executePrepared(ctx.deps.orm, () => ctx.em, countSql, countSql, where.params),
  ])
  const viewerId = ctx.auth.user.id
  const items = rows.flatMap((raw) => {
    const row = jsonRow(raw)
    // listScopeSql only lets visible rows through, so every row carries a permission.
    return row ? [toAgent(toRecord(row, relations, permissionOf(row.permission) ?? 'read'), viewerId, ctx.config.appUrl)] : []
  })
  return page(items, {
    total: Number(count.total),
    page: input.page,
    perPage: input.per_page,
    path: `${ctx.config.appUrl}/api/v1/agents`,
    query: {
      sort: input.sort,
      with: input.with?.join(','),
      ...resourceFilterQuery(input),
    },
  })
}
