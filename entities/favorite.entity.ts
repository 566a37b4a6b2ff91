import { defineEntity, p, type InferEntity } from '@mikro-orm/core'
import { User } from './user-workspace.entity.ts'

/**
 * A user's favourite (`favorites`). Polymorphic like `shares`: `resource_type` is the table name
 * (`agents`, `workflows`), `resource_id` its primary key.
 */
export const Favorite = defineEntity({
  name: 'Favorite',
  tableName: 'favorites',
  uniques: [{ properties: ['user', 'resourceType', 'resourceId'] }],
  indexes: [{ properties: ['resourceType', 'resourceId'] }],
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    user: () =>
      p.manyToOne(User)
        .fieldName('user_id')
        .deleteRule('cascade'),
    resourceType: p.string().length(64).fieldName('resource_type'),
    resourceId: p.bigint('number').fieldName('resource_id'),
    createdAt: p.datetime().fieldName('created_at').onCreate(() => new Date()),
  },
})

export type IFavorite = InferEntity<typeof Favorite>
