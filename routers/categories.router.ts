/** The category catalogue: `GET /api/v1/categories`. */
import { categories } from '../src/catalog/index.ts'
import { Category, ListCategoriesInput } from '../src/access/resource.schema.ts'
import { paginated } from '../src/access/wire.ts'
import { authedProcedure, router } from '../src/trpc/init.ts'

export const categoriesRouter = router({
  list: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/categories', tags: ['Categories'], summary: 'The category catalogue', protect: true } })
    .input(ListCategoriesInput)
    .output(paginated(Category))
    .query(({ ctx, input }) => categories.list(ctx, input)),
})
