/** The seeded category catalogue, listed by `GET /api/v1/categories` (docs/api/resources.md). */
import { likePattern } from '../access/resource-access.ts'
import { CATEGORY_COLUMNS, toCategory } from '../access/categories.ts'
import type { TListCategoriesInput } from '../access/resource.schema.ts'
import { page, sortOf } from '../access/wire.ts'
import type { ServiceCtx } from '../context.ts'

const SORT_COLUMNS: Record<string, string> = { position: 'c.position', name: 'lower(c.name)', created_at: 'c.created_at' }

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
