/**
 * Favourites, generic over the favouritable tables: `favorites.resource_type` is the table name, `resource_id` its key.
 * Callers check access first (`requireResource(..., 'read')`) and pass the row's id.
 * The `is_favorite` condition is viewer-scoped SQL: `favoriteSql` in src/access/visibility.ts.
 */
import type { FavoriteTable } from './visibility.ts'
import type { ResourceCtx } from '../context.ts'
import { queries } from '../platform/db.ts'

/** Marks a row as a favourite of the caller; idempotent (a second call changes nothing). */
export async function addFavorite(ctx: ResourceCtx, table: FavoriteTable, resourceId: number): Promise<void> {
  await queries(ctx.em)
    .insertInto('favorites')
    .values((eb) => ({ user_id: ctx.auth.user.id, resource_type: table, resource_id: resourceId, created_at: eb.fn<Date>('now') }))
    .onConflict((oc) => oc.columns(['user_id', 'resource_type', 'resource_id']).doNothing())
    .execute()
}

/** Removes a row from the caller's favourites; idempotent. */
export async function removeFavorite(ctx: ResourceCtx, table: FavoriteTable, resourceId: number): Promise<void> {
  await queries(ctx.em)
    .deleteFrom('favorites')
    .where('user_id', '=', ctx.auth.user.id)
    .where('resource_type', '=', table)
    .where('resource_id', '=', resourceId)
    .execute()
}
