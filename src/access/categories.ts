/**
 * Categories as every categorized resource uses them: the `category_uuids` list filter, and
 * embedding and storing `categories` (agents and workflows). Resolving `category_uuids` is an
 * access rule (./references.ts); listing the catalogue is src/catalog/categories.service.ts.
 */
import { replacePivotRows, type Em } from '../platform/db.ts'
import type { TCategory } from './resource.schema.ts'
import type { SqlFragment } from '../platform/sql.ts'

/** Tables whose rows carry categories, with their pivot and its key column. */
const PIVOTS = {
  agents: { pivot: 'agent_categories', key: 'agent_id' },
  workflows: { pivot: 'workflow_categories', key: 'workflow_id' },
} as const
/** A table whose rows carry categories. */
type CategorizedTable = keyof typeof PIVOTS

/** The columns of a category's wire shape, over the alias `c`. */
const CATEGORY_COLUMNS = 'c.uuid, c.slug, c.name, c.description'

/** A `categories` row (selected as {@link CATEGORY_COLUMNS}) in wire shape. */
export function toCategory(row: Record<string, unknown>): TCategory {
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

