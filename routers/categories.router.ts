/** The category catalogue: `GET /api/v1/categories`. */
import * as categories from '../src/services/categories.service.ts'
import { Category, ListCategoriesInput } from '../src/schemas/resource.schema.ts'
import { paginated } from '../src/schemas/wire.ts'
import { authedProcedure, router } from '../src/trpc/init.ts'

export const categoriesRouter = router({
  list: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/categories', tags: ['Categories'], summary: 'The category catalogue', protect: true } })
    .input(ListCategoriesInput)
    .output(paginated(Category))
    .query(({ ctx, input }) => categories.list(ctx, input)),
})
