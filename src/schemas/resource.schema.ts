/**
 * Pieces every tenant-owned resource shape shares (specification: "Conventions",
 * "ProfilePhotoConfig"; API.md section 5 for the enums and bounds).
 */
import { z } from 'zod'
import { VISIBILITIES, type ProfilePhotoConfigValue } from '../../entities/index.ts'
import { jsonBytes, text } from './wire.ts'

/** `public`, `private` or `workspace`. */
export const Visibility = z.enum(VISIBILITIES)

/** `profile_photo_config.preference` values (API.md section 5). */
export const PHOTO_PREFERENCES = ['emoji', 'image'] as const

/** ProfilePhotoConfig as sent: every member optional, unknown members refused. */
export const ProfilePhotoConfigInput = z.strictObject({
  emoji: text(32).optional(),
  background_color: text(32).optional(),
  preference: z.enum(PHOTO_PREFERENCES).optional(),
})

/** ProfilePhotoConfig as answered. */
export const ProfilePhotoConfig = z
  .object({
    emoji: z.string().optional(),
    background_color: z.string().optional(),
    preference: z.string().optional(),
  })
  .meta({ id: 'ProfilePhotoConfig' })

/** A stored ProfilePhotoConfig as answered: only the known members. */
export function toProfilePhotoConfig(value: ProfilePhotoConfigValue | null | undefined): z.infer<typeof ProfilePhotoConfig> | null {
  if (!value) return null
  const out: z.infer<typeof ProfilePhotoConfig> = {}
  if (typeof value.emoji === 'string') out.emoji = value.emoji
  if (typeof value.background_color === 'string') out.background_color = value.background_color
  if (typeof value.preference === 'string') out.preference = value.preference
  return out
}

/** A media key as sent in `profile_photo_key` / `file.keys`. */
export const MediaKey = text(255, 1)

/** A category as embedded in agents and workflows, and listed by `GET /api/v1/categories`. */
export const Category = z
  .object({ uuid: z.uuid(), slug: z.string(), name: z.string(), description: z.string() })
  .meta({ id: 'Category' })
export type TCategory = z.infer<typeof Category>

/** Most category uuids one request names (body or filter). */
export const MAX_CATEGORY_UUIDS = 50

/** `category_uuids` in a body: the whole set of a row's categories. */
export const CategoryUuids = z.array(z.uuid()).max(MAX_CATEGORY_UUIDS)

/**
 * A boolean query flag (`favorite`, `template`): `true`/`false`/`1`/`0` as REST sends it, or a
 * real boolean from tRPC callers. Anything else is a 400 naming the parameter.
 */
export const queryBoolean = () =>
  z
    .union([z.boolean(), z.enum(['true', 'false', '1', '0'])])
    .transform((value) => value === true || value === 'true' || value === '1')

/**
 * `category_uuids` as a list filter: comma-separated (`?category_uuids=a,b`), repeated
 * (`?category_uuids=a&category_uuids=b`), or an array from tRPC callers.
 */
export const CategoryUuidsQuery = z
  .union([z.string().max(2000), z.array(z.string().max(2000)).max(MAX_CATEGORY_UUIDS)])
  .transform((value) =>
    (Array.isArray(value) ? value : [value])
      .flatMap((part) => part.split(','))
      .map((part) => part.trim())
      .filter(Boolean),
  )
  .pipe(CategoryUuids)

/**
 * The filters of the agent and workflow lists (specification: "Resource-specific filters"),
 * besides the page, `sort` and `with`; src/services/list-filters.ts turns them into SQL.
 */
export const resourceListFilters = {
  workspace_uuid: z.uuid().optional(),
  user_id: z.number().int().min(1).max(2_147_483_647).optional(),
  search: text(255).optional(),
  visibility: Visibility.optional(),
  category_uuids: CategoryUuidsQuery.optional(),
  favorite: queryBoolean().optional(),
  template: queryBoolean().optional(),
}
export const ResourceListFilters = z.object(resourceListFilters)
export type TResourceListFilters = z.infer<typeof ResourceListFilters>

/** Names of the extra (string-valued) metadata keys. */
const EXTRA_METADATA_KEY = /^[A-Za-z0-9_.-]{1,64}$/
/** An extra metadata value: a string of at most 10,000 characters. */
const ExtraMetadataValue = text(10_000)

/**
 * A `metadata` refinement: keys other than `known` are extra keys (names 1..64 of `A-Za-z0-9_.-`,
 * string values; `null` too when `nullable`, for an update that removes the key), and the whole
 * object serializes to at most `maxBytes` of JSON. Extras are checked here rather than through
 * `catchall(text())` so the inferred type stays usable by tRPC clients.
 */
export const checkMetadata =
  (known: readonly string[], maxBytes: number, nullable: boolean) => (value: Record<string, unknown>, ctx: z.RefinementCtx) => {
    for (const [key, extra] of Object.entries(value)) {
      if (known.includes(key)) continue
      if (!EXTRA_METADATA_KEY.test(key)) {
        ctx.addIssue({ code: 'custom', path: [key], message: 'metadata keys are 1..64 letters, digits and "_.-"' })
        continue
      }
      if (nullable && extra === null) continue
      for (const issue of ExtraMetadataValue.safeParse(extra).error?.issues ?? []) {
        ctx.addIssue({ code: 'custom', path: [key, ...issue.path], message: issue.message })
      }
    }
    if (jsonBytes(value) > maxBytes) {
      ctx.addIssue({ code: 'custom', path: [], message: `metadata must not exceed ${maxBytes} bytes as JSON` })
    }
  }
