import type { ResourceCtx } from '../context.ts'
/**
 * Resolving media keys sent in requests (`profile_photo_key`, `file.keys`; docs/api/resources.md)
 * to stored uploads the caller may use: files the caller uploaded, or files of the request's
 * workspace. Anything else is a 400 naming the field, never a hint that the key exists.
 */
import { ValidationError, type FieldPath } from '../platform/errors.ts'

/** A stored upload as the resolvers answer it. */
export interface MediaRef {
  id: number
  key: string
  mimeType: string
  size: number
}

/**
 * Resolves `keys` (in order) to uploads the caller may use.
 * @param field the request field holding the keys; issues name `[...field, index]`, or `field`
 *   itself when `single` is set.
 * @param options.imagesOnly refuse uploads that are not images (profile photos).
 * @throws ValidationError naming the first unusable key.
 */
export async function resolveMediaKeys(
  ctx: ResourceCtx,
  keys: readonly string[],
  field: FieldPath,
  options: { imagesOnly?: boolean; single?: boolean } = {},
): Promise<MediaRef[]> {
  if (!keys.length) return []
  const rows = await ctx.em.execute(
    `select m.id::float8 as id, m.key, m.mime_type as "mimeType", m.size::float8 as size from media m
     where m.key in (?) and (m.user_id = ? or m.workspace_id = ?)`,
    [keys, ctx.auth.user.id, ctx.workspace.workspace.id],
  )
  const byKey = new Map(rows.map((row) => [String(row.key), row]))
  return keys.map((key, index) => {
    const path = options.single ? field : [...field, index]
    const row = byKey.get(key)
    if (!row) throw new ValidationError(path, 'No uploaded file has this key')
    const mimeType = String(row.mimeType)
    if (options.imagesOnly && !mimeType.startsWith('image/')) throw new ValidationError(path, 'The file is not an image')
    return { id: Number(row.id), key, mimeType, size: Number(row.size) }
  })
}

/** Resolves an optional single `profile_photo_key`: undefined stays undefined, null clears. */
export async function resolveProfilePhotoKey(ctx: ResourceCtx, key: string | null | undefined): Promise<string | null | undefined> {
  if (key === undefined || key === null) return key
  await resolveMediaKeys(ctx, [key], ['profile_photo_key'], { imagesOnly: true, single: true })
  return key
}
