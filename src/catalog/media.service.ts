/**
 * Uploads (docs/api/resources.md, "Media"): a file is typed from its bytes (never from
 * the client's header), held to the allow-list and the size limit while it streams into the
 * store, and recorded in `media` for the request's workspace. Keys are random
 * (`<uuidv7>.<ext>`); client file names are kept as data only, never in paths.
 */
import { Readable } from 'node:stream'
import { fileTypeFromBuffer, fileTypeFromStream } from 'file-type/node'
import { uuidv7 } from 'uuidv7'
import { Media } from '../../entities/index.ts'
import { queries, type Em } from '../platform/db.ts'
import { PayloadTooLargeError, UnsupportedMediaTypeError, ValidationError } from '../platform/errors.ts'
import type { TMediaUpload } from './media.schema.ts'
import { mediaUrl } from '../access/user-workspace.schema.ts'
import type { ResourceCtx } from '../context.ts'
import { audit, entityFields, fieldChanges } from '../access/audit.ts'
import type { MediaStorage, StoredObject } from '../platform/storage.ts'

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'

/** Binary types recognised from their bytes (file-type), with the extension of their keys. */
const BINARY_TYPES: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'application/pdf': 'pdf',
  [DOCX]: 'docx',
}

/**
 * Text types, recognised by the file name's extension and then checked to be UTF-8 without NUL.
 * HTML is stored as data to train agents on; downloads are attachments under a sandboxing CSP,
 * so a browser never renders it (src/http/media.routes.ts).
 */
const TEXT_TYPES: Record<string, { mime: string; ext: string }> = {
  txt: { mime: 'text/plain', ext: 'txt' },
  text: { mime: 'text/plain', ext: 'txt' },
  md: { mime: 'text/markdown', ext: 'md' },
  markdown: { mime: 'text/markdown', ext: 'md' },
  csv: { mime: 'text/csv', ext: 'csv' },
  json: { mime: 'application/json', ext: 'json' },
  jsonl: { mime: 'application/jsonl', ext: 'jsonl' },
  html: { mime: 'text/html', ext: 'html' },
  htm: { mime: 'text/html', ext: 'html' },
}

/** What the allow-list says, for error messages. */
const ALLOWED_UPLOADS = 'PNG, JPEG, GIF and WebP images, PDF, DOCX, and UTF-8 text files (.txt, .md, .csv, .json, .jsonl, .html)'

/** Bytes file-type reads to recognise a format. */
const HEAD_BYTES = 4100

/** An upload in the store, before its row is written. */
export interface StoredFile {
  key: string
  mimeType: string
  size: number
  originalName: string
}

/** A client file name as data: no control characters, well-formed, at most 255 characters. */
function cleanName(name: string | undefined): string {
  // eslint-disable-next-line no-control-regex
  const controls = /[\u0000-\u001f\u007f]/g
  const cleaned = (name ?? '').replace(controls, '').slice(0, 255).toWellFormed()
  return cleaned || 'upload'
}

/** A file's type as its head shows it; `wholeFile`: to be confirmed on the whole file once stored. */
interface HeadType {
  mime: string
  ext: string
  text: boolean
  wholeFile?: boolean
}

/** The allowed type of a file from its first bytes and its name; null when not allowed. */
async function typeOf(head: Buffer, filename: string): Promise<HeadType | null> {
  const detected = await fileTypeFromBuffer(head)
  // A DOCX is a ZIP archive; what makes it one may be its last part ([Content_Types].xml), past the head.
  if (detected?.mime === 'application/zip') return { mime: DOCX, ext: 'docx', text: false, wholeFile: true }
  if (detected) {
    const ext = BINARY_TYPES[detected.mime]
    return ext ? { mime: detected.mime, ext, text: false } : null
  }
  const extension = /\.([A-Za-z0-9]{1,10})$/.exec(filename)?.[1]?.toLowerCase()
  const text = extension ? TEXT_TYPES[extension] : undefined
  return text ? { ...text, text: true } : null
}

/**
 * Streams one uploaded file into the store: reads its head to type it, then writes it whole,
 * counting bytes and (for text) checking UTF-8 on the way. Nothing is left in the store on failure,
 * and the rest of `stream` is drained so the request can finish. A ZIP archive is read once more
 * from the store, whole, and kept only if it is a DOCX.
 * @param stream the file's bytes; may end early past `maxBytes` (the multipart parser stops there).
 * @throws UnsupportedMediaTypeError (415) off the allow-list or not UTF-8 text (an empty file
 *   too); PayloadTooLargeError (413) over `maxBytes`; ValidationError naming `file` when the
 *   stream fails (a cut or malformed body).
 */
export async function storeFile(
  storage: MediaStorage,
  file: { filename: string | undefined; stream: Readable },
  maxBytes: number,
): Promise<StoredFile> {
  const { stream } = file
  const chunks = stream[Symbol.asyncIterator]()
  let size = 0
  const take = async (): Promise<Buffer | null> => {
    const next = await chunks.next().catch(() => {
      throw new ValidationError(['file'], 'The file could not be read: the upload ended early or was malformed')
    })
    if (next.done) return null
    const chunk: Buffer = next.value
    size += chunk.length
    if (size > maxBytes) throw new PayloadTooLargeError(`The file is larger than ${maxBytes} bytes`)
    return chunk
  }
  try {
    const head: Buffer[] = []
    let headSize = 0
    while (headSize < HEAD_BYTES) {
      const chunk = await take()
      if (!chunk) break
      head.push(chunk)
      headSize += chunk.length
    }
    const first = Buffer.concat(head)
    if (!first.length) throw new UnsupportedMediaTypeError('The file is empty')
    const originalName = cleanName(file.filename)
    const type = await typeOf(first, originalName)
    if (!type) throw new UnsupportedMediaTypeError(`Unsupported file type; allowed: ${ALLOWED_UPLOADS}`)
    const decoder = type.text ? new TextDecoder('utf-8', { fatal: true }) : null
    const checkText = (chunk: Buffer | null) => {
      if (!decoder) return
      try {
        if (chunk?.includes(0)) throw new Error('NUL')
        // With a chunk: part of the stream; without: the end, where a cut sequence is an error.
        if (chunk) decoder.decode(chunk, { stream: true })
        else decoder.decode()
      } catch {
        throw new UnsupportedMediaTypeError('A text file must be UTF-8 without NUL characters')
      }
    }
    async function* body() {
      checkText(first)
      yield first
      for (let chunk = await take(); chunk; chunk = await take()) {
        checkText(chunk)
        yield chunk
      }
      checkText(null)
    }
    const key = `${uuidv7()}.${type.ext}`
    const written = await storage.put(key, Readable.from(body()))
    if (type.wholeFile && !(await storedAs(storage, key, type.mime))) {
      await storage.delete(key)
      throw new UnsupportedMediaTypeError(`Unsupported file type; allowed: ${ALLOWED_UPLOADS}`)
    }
    return { key, mimeType: type.mime, size: written, originalName }
  } finally {
    // Read what is left of the part (the parser stops at the size limit), so the request can finish.
    try {
      for (let next = await chunks.next(); !next.done; next = await chunks.next());
    } catch {
      // The client went away or sent a broken body; the caller answers for the first error.
    }
  }
}

/**
 * Whether the stored object `key` is of type `mime`, read from its bytes in full (file-type
 * reads a ZIP archive's entries, within its own bounds on their number and size).
 */
async function storedAs(storage: MediaStorage, key: string, mime: string): Promise<boolean> {
  const object = await storage.get(key).catch(() => null)
  if (!object) return false
  try {
    return (await fileTypeFromStream(object.body))?.mime === mime
  } catch {
    return false
  } finally {
    object.body.destroy()
  }
}

/** An upload's fields the audit log records (docs/api/audit.md). */
const AUDITED = ['key', 'originalName', 'mimeType', 'size'] as const

/**
 * Records a stored file as a `media` row of the request's workspace, owned by the caller, with
 * its audit event. Removes the stored object when the row cannot be written.
 */
export async function recordUpload(ctx: ResourceCtx, storage: MediaStorage, stored: StoredFile): Promise<{ data: TMediaUpload }> {
  try {
    const media = await ctx.em.transactional(async (em) => {
      const created = em.create(Media, {
        key: stored.key,
        disk: storage.disk,
        path: stored.key,
        originalName: stored.originalName,
        mimeType: stored.mimeType,
        size: stored.size,
        user: ctx.auth.user.id,
        workspace: ctx.workspace.workspace.id,
      })
      await em.flush()
      await audit(em, ctx, {
        action: 'media.create',
        resource: { type: 'media', uuid: created.uuid },
        changes: fieldChanges(null, entityFields(created, AUDITED)),
      })
      return created
    })
    return {
      data: {
        uuid: media.uuid,
        key: media.key,
        url: mediaUrl(ctx.config.appUrl, media.key) ?? '',
        mime_type: media.mimeType,
        size: stored.size,
      },
    }
  } catch (error) {
    await storage.delete(stored.key)
    throw error
  }
}

/** Removes a stored file whose upload failed after it was written. */
export async function discardFile(storage: MediaStorage, stored: StoredFile): Promise<void> {
  await storage.delete(stored.key)
}

/** A stored upload opened for reading. */
export interface OpenedMedia extends StoredObject {
  mimeType: string
  originalName: string
}

/**
 * Opens the upload with this key for `GET /api/v1/media/{key}` (public: keys are random and
 * unguessable). Null for an unknown key, a key no store could hold, or a missing object.
 */
export async function openMedia(em: Em, storage: MediaStorage, key: string): Promise<OpenedMedia | null> {
  if (!key || key.length > 255 || key.includes('\u0000') || !key.isWellFormed()) return null
  const row = await queries(em)
    .selectFrom('media')
    .select(['mime_type as mimeType', 'original_name as originalName', 'path', 'disk'])
    .where('key', '=', key)
    .executeTakeFirst()
  if (!row || row.disk !== storage.disk) return null
  const object = await storage.get(row.path).catch(() => null)
  return object ? { ...object, mimeType: row.mimeType, originalName: row.originalName } : null
}
