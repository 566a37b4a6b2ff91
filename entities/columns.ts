/**
 * Column builders every resource table repeats (docs/api/conventions.md: `uuid`, `created_at`,
 * `updated_at` in UTC, `deleted_at` where soft-deleted; `visibility` per docs/api/tenancy.md).
 */
import { p } from '@mikro-orm/core'
import { uuidv7 } from 'uuidv7'

/** `visibility` values of the specification ("Conventions"). */
export const VISIBILITIES = ['public', 'private', 'workspace'] as const
export type Visibility = (typeof VISIBILITIES)[number]

/** `{emoji, background_color, preference}` (specification: "ProfilePhotoConfig"). */
export interface ProfilePhotoConfigValue {
  emoji?: string
  background_color?: string
  preference?: string
}

/** Surrogate key, generated UUIDv7 and the two timestamps. */
export const resourceKeys = () => ({
  id: p.bigint('number').primary().autoincrement(),
  uuid: p.uuid().unique().onCreate(() => uuidv7()),
})

/**
 * `created_at` / `updated_at`, set by the ORM on insert and update.
 */
export function timestamps() {
  return {
    createdAt: p.datetime().fieldName('created_at').onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .fieldName('updated_at')
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  }
}

/** `deleted_at` of a soft-deleted resource. */
export const softDelete = () => ({ deletedAt: p.datetime().nullable().fieldName('deleted_at') })

/** The presentational columns agents, prompts, tools and workflows share. */
export const presentation = () => ({
  name: p.string().length(255),
  description: p.text().default(''),
  profilePhotoKey: p.string().length(512).nullable().fieldName('profile_photo_key'),
  profilePhotoConfig: p.json<ProfilePhotoConfigValue>().nullable().fieldName('profile_photo_config'),
  visibility: p.enum(VISIBILITIES).default('private'),
})

/**
 * `slug` unique among the live rows of one workspace, the service's own rows (no workspace)
 * counting as one more workspace (providers, large language models).
 */
export const workspaceSlugUnique = (table: string) => ({
  name: `${table}_workspace_id_slug_unique`,
  expression: `create unique index "${table}_workspace_id_slug_unique" on "${table}" (coalesce("workspace_id", 0), "slug") where "deleted_at" is null`,
})

/**
 * A partial index of the ids of the few soft-deleted rows of `table`, so "whose row is not
 * deleted" is an anti-join on a tiny index instead of a scan of every live row.
 */
export const deletedIdIndex = (table: string) => ({
  name: `${table}_deleted_id_index`,
  expression: `create index "${table}_deleted_id_index" on "${table}" ("id") where "deleted_at" is not null`,
})
