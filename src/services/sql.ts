/**
 * Column lists for raw SQL that reads users and workspaces into the row shapes of src/schemas.
 * The hot paths (authentication, `GET /api/v1/user`) read with one hand-written query instead of
 * hydrating entities; these lists keep the aliases in one place.
 */

/** `users` columns as a {@link UserRow}; `alias` is the table alias, `prefix` the column prefix. */
export const userColumns = (alias: string, prefix = '') =>
  [
    `${alias}.id as "${prefix}id"`,
    `${alias}.name as "${prefix}name"`,
    `${alias}.first_name as "${prefix}firstName"`,
    `${alias}.last_name as "${prefix}lastName"`,
    `${alias}.email as "${prefix}email"`,
    `${alias}.profile_photo_key as "${prefix}profilePhotoKey"`,
    `${alias}.service_id as "${prefix}serviceId"`,
    `${alias}.created_at as "${prefix}createdAt"`,
    `${alias}.updated_at as "${prefix}updatedAt"`,
  ].join(', ')

/** `workspaces` columns as a {@link WorkspaceRow}. */
export const workspaceColumns = (alias: string, prefix = '') =>
  [
    `${alias}.id::float8 as "${prefix}id"`,
    `${alias}.uuid as "${prefix}uuid"`,
    `${alias}.slug as "${prefix}slug"`,
    `${alias}.name as "${prefix}name"`,
    `${alias}.profile_photo_key as "${prefix}profilePhotoKey"`,
    `${alias}.service_id as "${prefix}serviceId"`,
    `${alias}.is_onboarded as "${prefix}isOnboarded"`,
    `${alias}.metadata as "${prefix}metadata"`,
    `${alias}.user_id as "${prefix}userId"`,
    `${alias}.created_at as "${prefix}createdAt"`,
    `${alias}.updated_at as "${prefix}updatedAt"`,
  ].join(', ')

/** Picks the fields that start with `prefix` from a joined row, without the prefix. */
export function unprefix<T>(row: Record<string, unknown>, prefix: string): T {
  const out: Record<string, unknown> = {}
  for (const key in row) if (key.startsWith(prefix)) out[key.slice(prefix.length)] = row[key]
  return out as T
}

const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)

/**
 * A select list for raw SQL: each camelCase field is read from its snake_case column as
 * `"<prefix><field>"`. Fields ending in `Id` or named `id` are bigint keys and are cast to
 * float8, so both drivers answer numbers (pg answers bigint as a string).
 */
export function selectColumns(alias: string, prefix: string, fields: readonly string[]): string {
  return fields
    .map((field) => {
      const column = `${alias}.${snake(field)}`
      const cast = field === 'id' || field.endsWith('Id') ? `${column}::float8` : column
      return `${cast} as "${prefix}${field}"`
    })
    .join(', ')
}
