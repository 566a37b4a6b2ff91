/**
 * Favourites, generic over the favouritable tables: `favorites.resource_type` is the table name, `resource_id` its key.
 * Callers check access first (`requireResource(..., 'read')`) and pass the row's id.
 * The `is_favorite` condition is viewer-scoped SQL: `favoriteSql` in src/access/visibility.ts.
 */
import type { FavoriteTable } from './visibility.ts'
import type { ResourceCtx } from '../context.ts'
import { queries } from '../platform/db.ts'
import { audit } from './audit.ts'
import { resourceType } from './resource-types.ts'

/**
 * Marks a row as a favourite of the caller; idempotent (a second call changes nothing and records
 * no audit event). A new favourite is audited as `<type>.favorite` (docs/api/audit.md).
 */
export async function addFavorite(ctx: ResourceCtx, table: FavoriteTable, resource: { id: number; uuid: string }): Promise<void> {
  await ctx.em.transactional(async (em) => {
    const added = await queries(em)
      .insertInto('favorites')
      .values((eb) => ({ user_id: ctx.auth.user.id, resource_type: table, resource_id: resource.id, created_at: eb.fn<Date>('now') }))
      .onConflict((oc) => oc.columns(['user_id', 'resource_type', 'resource_id']).doNothing())
      .executeTakeFirst()
    if (Number(added.numInsertedOrUpdatedRows ?? 0) === 0) return
    const type = resourceType(table)
    await audit(em, ctx, { action: `${type}.favorite`, resource: { type, uuid: resource.uuid } })
  })
}

/** Removes a row from the caller's favourites; idempotent (audited as `<type>.unfavorite` when there was one). */
export async function removeFavorite(ctx: ResourceCtx, table: FavoriteTable, resource: { id: number; uuid: string }): Promise<void> {
  await ctx.em.transactional(async (em) => {
    const removed = await queries(em)
      .deleteFrom('favorites')
      .where('user_id', '=', ctx.auth.user.id)
      .where('resource_type', '=', table)
      .where('resource_id', '=', resource.id)
      .executeTakeFirst()
    if (Number(removed.numDeletedRows) === 0) return
    const type = resourceType(table)
    await audit(em, ctx, { action: `${type}.unfavorite`, resource: { type, uuid: resource.uuid } })
  })
}
