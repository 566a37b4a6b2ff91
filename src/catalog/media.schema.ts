/**
 * Media wire shapes (docs/api/resources.md, "Media": `POST media` answers `{key, url, mime_type, size}`).
 * Uploads are multipart, so these shapes document the plain route of src/http/media.routes.ts.
 */
import { z } from 'zod'
import { envelope } from '../access/wire.ts'

/** A stored upload as `POST /api/v1/media` answers it. */
export const MediaUpload = z
  .object({
    uuid: z.uuid(),
    /** What `profile_photo_key` and `file.keys` refer to. */
    key: z.string(),
    /** `GET` it to read the file: `${APP_URL}/api/v1/media/{key}`. */
    url: z.string(),
    /** Detected from the bytes, never taken from the client. */
    mime_type: z.string(),
    /** Bytes. */
    size: z.number().int(),
  })
  .meta({ id: 'MediaUpload' })
export type TMediaUpload = z.infer<typeof MediaUpload>

/** `{data: MediaUpload}`. */
export const MediaUploadResponse = envelope(MediaUpload)

/** The multipart body of `POST /api/v1/media`: one file in the field `file`. */
export const MediaUploadForm = z.object({ file: z.string().meta({ format: 'binary', description: 'The file (one).' }) })
