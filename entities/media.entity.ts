import { defineEntity, p, type InferEntity } from '@mikro-orm/core'
import { resourceKeys, timestamps } from './columns.ts'
import { ownership } from './ownership.ts'

/**
 * An uploaded file (`media`, docs/api/resources.md). `key` is what requests refer to
 * (`profile_photo_key`, `file.keys`); `disk` names the storage backend and `path` the object's
 * location in it, so an S3-compatible store can be added beside the local folder.
 */
export const Media = defineEntity({
  name: 'Media',
  tableName: 'media',
  indexes: [{ properties: ['workspace', 'createdAt'] }],
  properties: {
    ...resourceKeys(),
    key: p.string().length(255).unique(),
    disk: p.string().length(32).default('local'),
    path: p.string().length(1024),
    originalName: p.string().length(255).fieldName('original_name'),
    mimeType: p.string().length(255).fieldName('mime_type'),
    size: p.bigint('number'),
    ...ownership(),
    ...timestamps(),
  },
})

export type IMedia = InferEntity<typeof Media>
