/**
 * The WHERE of resource lists (specification: "Resource-specific filters"; docs/api/tenancy.md):
 * conditions AND-ed one filter at a time, `search` over some columns, and the filters agents and
 * workflows share. Values are parameters only (no lists expanded into the text), so each
 * combination of filters is one statement text that PostgreSQL plans once.
 */
import { likePattern, listScopeSql } from './resource-access.ts'
import type { TResourceListFilters } from './resource.schema.ts'
import { inCategoriesSql } from './categories.ts'
import type { ResourceCtx } from '../context.ts'
import { favoriteSql } from './visibility.ts'
import type { SqlFragment } from '../platform/sql.ts'

/** Conditions AND-ed after a first one (the list's scope), with their parameters in order. */
export class Conditions {
  private readonly parts: string[]
  private readonly params: unknown[]

  constructor(first: SqlFragment) {
    this.parts = [first.sql]
    this.params = [...first.params]
  }

  /** Adds a condition: a fragment, or SQL text and its parameters. */
  add(condition: SqlFragment | string, ...params: unknown[]): this {
    const fragment = typeof condition === 'string' ? { sql: condition, params } : condition
    this.parts.push(fragment.sql)
    this.params.push(...fragment.params)
    return this
  }

  toSql(): SqlFragment {
    return { sql: this.parts.join(' and '), params: this.params }
  }
}

/** `search`: any of `columns` contains `term`, case-insensitive (`%` and `_` match themselves). */
export function searchSql(columns: readonly string[], term: string): SqlFragment {
  const pattern = likePattern(term)
  const sql = columns.map((column) => `${column} ilike ?`).join(' or ')
  return { sql: columns.length > 1 ? `(${sql})` : sql, params: columns.map(() => pattern) }
}

/**
 * The WHERE of an agent or workflow list: visibility, shares and scope (listScopeSql) plus the
 * filters. `favorite`/`template` restrict when true and are ignored when false.
 */
export function resourceFilterSql(
  alias: string,
  table: 'agents' | 'workflows',
  ctx: ResourceCtx,
  input: TResourceListFilters,
): SqlFragment {
  const where = new Conditions(listScopeSql(alias, table, ctx, input.visibility))
  if (input.workspace_uuid) where.add(`${alias}.workspace_id = (select fw.id from workspaces fw where fw.uuid = ?)`, input.workspace_uuid)
  if (input.user_id !== undefined) where.add(`${alias}.user_id = ?`, input.user_id)
  if (input.search) where.add(searchSql([`${alias}.name`, `${alias}.description`], input.search))
  if (input.category_uuids?.length) where.add(inCategoriesSql(alias, table, input.category_uuids))
  if (input.favorite) where.add(favoriteSql(alias, table, ctx.auth.user.id))
  if (input.template) where.add(`${alias}.is_template = true`)
  return where.toSql()
}

/** The filters of an agent or workflow list as the paginator's links repeat them. */
export function resourceFilterQuery(input: TResourceListFilters): Record<string, string | undefined> {
  return {
    workspace_uuid: input.workspace_uuid,
    user_id: input.user_id === undefined ? undefined : String(input.user_id),
    search: input.search,
    visibility: input.visibility,
    category_uuids: input.category_uuids?.join(','),
    favorite: input.favorite === undefined ? undefined : String(input.favorite),
    template: input.template === undefined ? undefined : String(input.template),
  }
}

/**
 * A thread's `search` (threads list and threads metrics, docs/api/metrics.md): its name, or the
 * content of any of its live messages, matching `term` as {@link searchSql} does.
 */
export function threadSearchSql(alias: string, term: string): SqlFragment {
  const name = searchSql([`${alias}.name`], term)
  const content = searchSql(['sm.content'], term)
  return {
    sql: `(${name.sql} or exists (select 1 from messages sm where sm.thread_id = ${alias}.id and sm.deleted_at is null and ${content.sql}))`,
    params: [...name.params, ...content.params],
  }
}
