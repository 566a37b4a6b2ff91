/**
 * Column lists for raw SQL that reads users and workspaces into the row shapes of src/access/user-workspace.schema.ts.
 * The hot paths (authentication, `GET /api/v1/user`) read with one hand-written query instead of
 * hydrating entities; these lists keep the aliases in one place.
 */

/** The {@link UserRow} fields, camelCase, in the order the SQL reads them. */
export const USER_FIELDS = ['id', 'name', 'firstName', 'lastName', 'email', 'profilePhotoKey', 'serviceId', 'createdAt', 'updatedAt'] as const

/** The {@link WorkspaceRow} fields, camelCase. */
export const WORKSPACE_FIELDS = [
  'id', 'uuid', 'slug', 'name', 'profilePhotoKey', 'serviceId', 'isOnboarded', 'metadata', 'userId', 'createdAt', 'updatedAt',
] as const

/**
 * Columns of `fields` read as `"<prefix><field>"`; only `id` is cast (to float8, a number on both
 * drivers): `serviceId` is text and `userId` an int, so {@link selectColumns}' `…Id` rule is wrong here.
 */
const keyedColumns = (alias: string, prefix: string, fields: readonly string[]): string =>
  fields.map((field) => `${alias}.${snake(field)}${field === 'id' ? '::float8' : ''} as "${prefix}${field}"`).join(', ')

/** `users` columns as a {@link UserRow}; `alias` is the table alias, `prefix` the column prefix. */
export const userColumns = (alias: string, prefix = ''): string => keyedColumns(alias, prefix, USER_FIELDS)

/** `workspaces` columns as a {@link WorkspaceRow}. */
export const workspaceColumns = (alias: string, prefix = ''): string => keyedColumns(alias, prefix, WORKSPACE_FIELDS)

/** Picks the fields that start with `prefix` from a joined row, without the prefix. */
export function unprefix<T>(row: Record<string, unknown>, prefix: string): T {
  const out: Record<string, unknown> = {}
  for (const key in row) if (key.startsWith(prefix)) out[key.slice(prefix.length)] = row[key]
  return out as T
}

/**
 * {@link unprefix} for rows whose `prefix`ed columns are known to be `fields` (read with
 * {@link selectColumns}, {@link userColumns} or {@link workspaceColumns}): the prefixed keys are
 * built once rather than sliced from every key of every row, and every object it answers has
 * the same shape. A field the row lacks is answered `undefined`.
 */
export function unprefixer<T>(prefix: string, fields: readonly string[]): (row: Record<string, unknown>) => T {
  const keys = fields.map((field) => [`${prefix}${field}`, field] as const)
  return (row) => {
    const out: Record<string, unknown> = {}
    for (const [key, field] of keys) out[field] = row[key]
    return out as T
  }
}

/** The snake_case column of a camelCase field. */
export const snake = (name: string): string => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)

/** Fields ending in `Id` that are no keys: a W3C trace id is 32 hex digits (./tracing.ts). */
const TEXT_ID_FIELDS = new Set(['traceId'])

/**
 * A select list for raw SQL: each camelCase field is read from its snake_case column as
 * `"<prefix><field>"`. Fields ending in `Id` or named `id` are bigint keys and are cast to
 * float8, so both drivers answer numbers (pg answers bigint as a string); `traceId` is text.
 */
export function selectColumns(alias: string, prefix: string, fields: readonly string[]): string {
  return fields
    .map((field) => {
      const column = `${alias}.${snake(field)}`
      const cast = field === 'id' || (field.endsWith('Id') && !TEXT_ID_FIELDS.has(field)) ? `${column}::float8` : column
      return `${cast} as "${prefix}${field}"`
    })
    .join(', ')
}

/**
 * `json_build_object('id', t.id, 'profilePhotoKey', t.profile_photo_key, ...)` over `alias`:
 * camelCase keys, as {@link selectColumns} names them, plus `extra` keys given as SQL.
 */
export function jsonObject(alias: string, fields: readonly string[], extra: Record<string, string> = {}): string {
  const pairs = [...fields.map((field) => `'${field}', ${alias}.${snake(field)}`), ...Object.entries(extra).map(([key, sql]) => `'${key}', ${sql}`)]
  return `json_build_object(${pairs.join(', ')})`
}

/**
 * A stored instant as a Date: PostgreSQL's text form (`2026-01-01 10:00:00.123+00`, what raw
 * statements answer on PGlite) or a Date already.
 */
export function toDate(value: Date | string): Date {
  return value instanceof Date ? value : new Date(value.replace(' ', 'T').replace(/([+-]\d{2})$/, '$1:00'))
}

/** A SQL fragment and its positional (`?`) parameters, in order. */
export interface SqlFragment {
  sql: string
  params: unknown[]
}
