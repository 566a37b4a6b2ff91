/** The seeded category catalogue, listed by `GET /api/v1/categories` (docs/api/resources.md). */
import { likePattern } from '../access/resource-access.ts'
import { toCategory } from '../access/categories.ts'
import type { TListCategoriesInput } from '../access/resource.schema.ts'
import { page, sortOf } from '../access/wire.ts'
import type { ServiceCtx } from '../context.ts'
import { queries } from '../platform/db.ts'

/** `GET /api/v1/categories`: the catalogue as the paginator shape, `search` over name, description and slug. */
export async function list(ctx: ServiceCtx, input: TListCategoriesInput) {
  const { column, direction } = sortOf(input.sort)
  const search = input.search ? likePattern(input.search) : null
  const matching = queries(ctx.em)
    .selectFrom('categories as c')
    .$if(search !== null, (query) =>
      query.where((eb) => eb.or([eb('c.name', 'ilike', search), eb('c.description', 'ilike', search), eb('c.slug', 'ilike', search)])),
    )
  const [rows, count] = await Promise.all([
    matching
      .select(['c.uuid', 'c.slug', 'c.name', 'c.description'])
      .orderBy((eb) => (column === 'name' ? eb.fn('lower', ['c.name']) : eb.ref(column === 'position' ? 'c.position' : 'c.created_at')), direction)
      .orderBy('c.id', direction)
      .limit(input.per_page)
      .offset((input.page - 1) * input.per_page)
      .execute(),
    matching.select((eb) => eb.fn.countAll().as('total')).executeTakeFirstOrThrow(),
  ])
  return page(rows.map(toCategory), {
    total: Number(count.total),
    page: input.page,
    perPage: input.per_page,
    path: `${ctx.config.appUrl}/api/v1/categories`,
    query: { sort: input.sort, search: input.search },
  })
}
