import type { SqlFragment } from '../platform/sql.ts'
import type { ResourceCtx } from '../context.ts'
/**
 * Favourites. Generic over the
 * favouritable tables: `favorites.resource_type` is the table name, `resource_id` its key.
 * Callers check access first (`requireResource(..., 'read')`) and pass the row's id.
 */

/** Tables whose rows can be favourited. */
export type FavoriteTable = 'agents' | 'workflows'

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

/**
 * SQL that is true when `alias` (a row of `table`) is a favourite of the user; for `is_favorite`
 * in a select list and for the `favorite` list filter.
 */
export function favoriteSql(alias: string, table: FavoriteTable, userId: number): SqlFragment {
  return {
    sql: `exists (select 1 from favorites f where f.user_id = ? and f.resource_type = ? and f.resource_id = ${alias}.id)`,
    params: [userId, table],
  }
}
