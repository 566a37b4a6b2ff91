/**
 * Categories: the seeded catalogue listed by `GET /api/v1/categories`, and the
 * helpers agents and workflows use to embed and store `categories` (resolving `category_uuids`
 * is an access rule: src/access/references.ts).
 */
import { likePattern } from '../access/resource-access.ts'
import { replacePivotRows, type Em } from '../platform/db.ts'
import type { TCategory, TListCategoriesInput } from '../access/resource.schema.ts'
import { page, sortOf } from '../access/wire.ts'
import type { ServiceCtx } from '../context.ts'
import type { SqlFragment } from '../platform/sql.ts'

const SORT_COLUMNS: Record<string, string> = { position: 'c.position', name: 'lower(c.name)', created_at: 'c.created_at' }

/** Tables whose rows carry categories, with their pivot and its key column. */
const PIVOTS = {
  agents: { pivot: 'agent_categories', key: 'agent_id' },
  workflows: { pivot: 'workflow_categories', key: 'workflow_id' },
} as const
/** A table whose rows carry categories. */
type CategorizedTable = keyof typeof PIVOTS

const CATEGORY_COLUMNS = 'c.uuid, c.slug, c.name, c.description'

function toCategory(row: Record<string, unknown>): TCategory {
  return { uuid: String(row.uuid), slug: String(row.slug), name: String(row.name), description: String(row.description ?? '') }
}

/**
 * SQL that is true when `alias` (a row of `table`) carries one of the categories `uuids`; for
 * the `category_uuids` list filter. The list is one parameter (not expanded into the text), so
 * every list size is one statement text.
 */
export function inCategoriesSql(alias: string, table: CategorizedTable, uuids: readonly string[]): SqlFragment {
  const { pivot, key } = PIVOTS[table]
  return {
    sql: `exists (select 1 from ${pivot} fc join categories c on c.id = fc.category_id
      where fc.${key} = ${alias}.id and c.uuid = any(string_to_array(?, ',')::uuid[]))`,
    params: [uuids.join(',')],
  }
}

/**
 * The categories of many rows in one query (for embedding in lists and single responses),
 * each row's categories in catalogue order. Rows without categories get an empty array.
 */
export async function categoriesOf(em: Em, table: CategorizedTable, ids: number[]): Promise<Map<number, TCategory[]>> {
  const out = new Map<number, TCategory[]>(ids.map((id) => [id, []]))
  if (!ids.length) return out
  const { pivot, key } = PIVOTS[table]
  const rows = await em.execute(
    `select p.${key}::float8 as owner, ${CATEGORY_COLUMNS} from ${pivot} p join categories c on c.id = p.category_id
     where p.${key} in (?) order by c.position, c.id`,
    [ids],
  )
  for (const row of rows) out.get(Number(row.owner))?.push(toCategory(row))
  return out
}

/**
 * Replaces the categories of one row with `categoryIds` (from {@link resolveCategoryUuids}).
 * Run it inside the caller's transaction.
 */
export async function setCategories(em: Em, table: CategorizedTable, id: number, categoryIds: readonly number[]): Promise<void> {
  const { pivot, key } = PIVOTS[table]
  await replacePivotRows(
    em,
    pivot,
    key,
    id,
    ['category_id'],
    categoryIds.map((categoryId) => [categoryId]),
  )
}

/** `GET /api/v1/categories`: the catalogue as the paginator shape, `search` over name and description. */
export async function list(ctx: ServiceCtx, input: TListCategoriesInput) {
  const { column, direction } = sortOf(input.sort)
  const search = input.search ? likePattern(input.search) : null
  const where = search ? '(c.name ilike ? or c.description ilike ? or c.slug ilike ?)' : 'true'
  const params = search ? [search, search, search] : []
  const [rows, [count]] = await Promise.all([
    ctx.em.execute(
      `select ${CATEGORY_COLUMNS} from categories c where ${where}
       order by ${SORT_COLUMNS[column]} ${direction}, c.id ${direction}
       limit ${input.per_page} offset ${(input.page - 1) * input.per_page}`,
      params,
    ),
    ctx.em.execute(`select count(*)::int as total from categories c where ${where}`, params),
  ])
  return page(rows.map(toCategory), {
    total: Number(count.total),
    page: input.page,
    perPage: input.per_page,
    path: `${ctx.config.appUrl}/api/v1/categories`,
    query: { sort: input.sort, search: input.search },
  })
}
