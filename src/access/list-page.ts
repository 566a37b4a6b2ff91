/**
 * One page of a resource list as the Laravel paginator (docs/api/conventions.md), read in two queries
 * whatever the page size (docs/api/tenancy.md): the page's rows and the count, over the same FROM
 * and WHERE, sent together. The providers, accounts and tools lists read through it.
 */
import { page, sortOf } from './wire.ts'
import type { ResourceCtx } from '../context.ts'
import type { SqlFragment } from '../platform/sql.ts'

/** Where a resource list reads its rows from. */
export interface ListSource {
  /** The FROM clause: table, alias and joins (`tools t left join providers pv on pv.id = t.provider_id`). */
  from: string
  /** The select list of one row. */
  columns: string
  /** The table's alias; `<alias>.id` breaks ties in every sort. */
  alias: string
  /** SQL expression of each sortable column (the `sort` value without its `-`). */
  sorts: Readonly<Record<string, string>>
}

/** The sort expressions of `name` (case-insensitive), `created_at` and `updated_at`. */
export const nameAndTimeSorts = (alias: string): Record<string, string> => ({
  created_at: `${alias}.created_at`,
  name: `lower(${alias}.name)`,
  updated_at: `${alias}.updated_at`,
})

/**
 * The page `input` asks for, rows matching `where` mapped by `toItem`, as the paginator shape.
 * `path` is the list's path under APP_URL; `query` holds the filters the links repeat (`sort`,
 * `page` and `per_page` are added).
 */
export async function listPage<T>(
  ctx: ResourceCtx,
  source: ListSource,
  where: SqlFragment,
  input: { page: number; per_page: number; sort: string },
  links: { path: string; query: Record<string, string | undefined> },
  toItem: (row: Record<string, unknown>) => T,
) {
  const { column, direction } = sortOf(input.sort)
  const [rows, [count]] = await Promise.all([
    ctx.em.execute(
      `select ${source.columns} from ${source.from} where ${where.sql}
       order by ${source.sorts[column]} ${direction}, ${source.alias}.id ${direction}
       limit ${input.per_page} offset ${(input.page - 1) * input.per_page}`,
      where.params,
    ),
    ctx.em.execute(`select count(*)::int as total from ${source.from} where ${where.sql}`, where.params),
  ])
  return page(rows.map(toItem), {
    total: Number(count.total),
    page: input.page,
    perPage: input.per_page,
    path: `${ctx.config.appUrl}${links.path}`,
    query: { sort: input.sort, ...links.query },
  })
}
