/**
 * Pieces every tenant-owned resource shape shares (specification: "Conventions",
 * "ProfilePhotoConfig"; docs/api/resources.md for the enums and bounds).
 */
import { z } from 'zod'
import { VISIBILITIES, type ProfilePhotoConfigValue, type Visibility as TVisibility } from '../../entities/index.ts'
import type { FieldIssue, FieldPath } from '../platform/errors.ts'
import { jsonBytes, pageQuery, sortParam, text } from './wire.ts'

/**
 * The columns every tenant-owned resource row has (entities/columns.ts: `resourceKeys`,
 * `presentation`, `ownership`, `timestamps`), as raw SQL reads them with `selectColumns`.
 */
export interface ResourceRow {
  id: number
  uuid: string
  name: string
  description: string
  profilePhotoKey: string | null
  profilePhotoConfig: ProfilePhotoConfigValue | null
  visibility: TVisibility
  userId: number
  workspaceId: number
  createdAt: Date | string
  updatedAt: Date | string
}

/** `public`, `private` or `workspace`. */
export const Visibility = z.enum(VISIBILITIES)

/** `profile_photo_config.preference` values (docs/api/resources.md). */
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

/** Sortable columns of the category list; `position` (the catalogue order) by default. */
export const CATEGORY_SORTS = ['position', '-position', 'name', '-name', 'created_at', '-created_at'] as const

/** `GET /api/v1/categories` query. */
export const ListCategoriesInput = z.strictObject({
  ...pageQuery,
  sort: sortParam(CATEGORY_SORTS, 'position'),
  search: text(255).optional(),
}).prefault({})
export type TListCategoriesInput = z.infer<typeof ListCategoriesInput>

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
 * besides the page, `sort` and `with`; src/access/list-filters.ts turns them into SQL.
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
 * The JSON Schema meta of a `metadata` object checked by {@link checkMetadata}: its extra keys
 * are documented as strings (`null` too when `nullable`), as that refinement checks them, where
 * the zod object's `catchall(z.unknown())` alone would document any value.
 */
export const extraStringsDocumented = (nullable: boolean) => ({
  override: ({ jsonSchema }: { jsonSchema: Record<string, unknown> }) => {
    jsonSchema.additionalProperties = nullable
      ? { type: ['string', 'null'], maxLength: 10_000 }
      : { type: 'string', maxLength: 10_000 }
  },
})

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

/**
 * Deepest nesting of arrays and objects inside one stored free-form JSON value (a workflow's
 * `settings`, `static_data`, `pin_data`, node `parameters` and unknown node/edge members).
 */
export const STORED_JSON_MAX_DEPTH = 16

/** Whether PostgreSQL refuses this text (in `text` and `jsonb`): a NUL character or a lone surrogate. */
export const unstorableText = (value: string) => value.includes('\u0000') || !value.isWellFormed()

/**
 * The first place in a JSON value that PostgreSQL's `jsonb` cannot store or that nests deeper than
 * `maxDepth`: a string (or object key) holding NUL or a lone surrogate, or a nesting level past the
 * limit. Iterative, so deep values cannot overflow the stack. Null when the value is storable.
 * @param path where the value sits in the request; the issue's path starts with it.
 */
export function unstorableJson(value: unknown, path: FieldPath, maxDepth = STORED_JSON_MAX_DEPTH): Omit<FieldIssue, 'code'> | null {
  const stack: [unknown, FieldPath][] = [[value, path]]
  for (let entry = stack.pop(); entry; entry = stack.pop()) {
    const [node, at] = entry
    if (typeof node === 'string') {
      if (unstorableText(node)) return { path: at, message: 'must not hold NUL characters or lone surrogates' }
      continue
    }
    if (typeof node !== 'object' || node === null) continue
    if (at.length - path.length >= maxDepth) return { path: at, message: `nested deeper than ${maxDepth} levels` }
    const entries: [string | number, unknown][] = Array.isArray(node) ? node.map((item, i) => [i, item]) : Object.entries(node)
    for (let i = entries.length - 1; i >= 0; i -= 1) {
      const [key, child] = entries[i]
      if (typeof key === 'string' && unstorableText(key)) {
        return { path: [...at, key], message: 'keys must not hold NUL characters or lone surrogates' }
      }
      stack.push([child, [...at, key]])
    }
  }
  return null
}

/** A zod refinement step: adds an issue, relative to the refined value, for what {@link unstorableJson} finds. */
export function refineStorableJson(value: unknown, ctx: z.RefinementCtx, path: FieldPath = []): void {
  const issue = unstorableJson(value, path)
  if (issue) ctx.addIssue({ code: 'custom', ...issue })
}

/** A free-form JSON object that jsonb can store, nested at most {@link STORED_JSON_MAX_DEPTH} levels. */
export const StorableObject = () => z.record(z.string(), z.unknown()).superRefine((value, ctx) => refineStorableJson(value, ctx))
