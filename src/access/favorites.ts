/**
 * Favourites, generic over the favouritable tables: `favorites.resource_type` is the table name, `resource_id` its key.
 * Callers check access first (`requireResource(..., 'read')`) and pass the row's id.
 * The `is_favorite` condition is viewer-scoped SQL: `favoriteSql` in src/access/visibility.ts.
 */
import type { FavoriteTable } from './visibility.ts'
import type { ResourceCtx } from '../context.ts'

/** Marks a row as a favourite of the caller; idempotent (a second call changes nothing). */
export async function addFavorite(ctx: ResourceCtx, table: FavoriteTable, resourceId: number): Promise<void> {
  await ctx.em.execute(
    `insert into favorites (user_id, resource_type, resource_id, created_at) values (?, ?, ?, now())
     on conflict (user_id, resource_type, resource_id) do nothing`,
    [ctx.auth.user.id, table, resourceId],
  )
}

/** Removes a row from the caller's favourites; idempotent. */
export async function removeFavorite(ctx: ResourceCtx, table: FavoriteTable, resourceId: number): Promise<void> {
  await ctx.em.execute(`delete from favorites where user_id = ? and resource_type = ? and resource_id = ?`, [
    ctx.auth.user.id,
    table,
    resourceId,
  ])
}
