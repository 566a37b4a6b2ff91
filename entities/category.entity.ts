import { defineEntity, p, type InferEntity } from '@mikro-orm/core'
import { resourceKeys, timestamps } from './columns.ts'

/** A catalogue category for agents and workflows (`categories`), seeded by a migration. */
export const Category = defineEntity({
  name: 'Category',
  tableName: 'categories',
  properties: {
    ...resourceKeys(),
    slug: p.string().length(80).unique(),
    name: p.string().length(255),
    description: p.text().default(''),
    position: p.integer().default(0),
    ...timestamps(),
  },
})

export type ICategory = InferEntity<typeof Category>
