/**
 * Pieces every tenant-owned resource shape shares (specification: "Conventions",
 * "ProfilePhotoConfig"; API.md section 5 for the enums and bounds).
 */
import { z } from 'zod'
import { VISIBILITIES, type ProfilePhotoConfigValue } from '../../entities/index.ts'
import { text } from './wire.ts'

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
