/**
 * The due times of URL documents' syncs (docs/api/knowledge.md, "Keeping URL documents in sync"):
 * `hourly`, `daily` and `weekly` are one interval after now; `never` has none.
 */

/**
 * SQL of the next due time of the refresh that SQL expression `refresh` holds (a column, or
 * `?::text`): one interval from now, or null for `never`.
 */
export const nextSyncSql = (refresh: string): string =>
  `now() + (case ${refresh} when 'hourly' then interval '1 hour' when 'daily' then interval '1 day' when 'weekly' then interval '7 days' end)`
