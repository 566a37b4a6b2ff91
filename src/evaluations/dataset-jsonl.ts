/**
 * Dataset items from JSON Lines uploads (docs/api/evaluations.md, "Adding items from a file"):
 * each non-empty line of each file named by `file.keys` is one item `{input, expected_output?,
 * metadata?}`, checked by the same schema as an item of `items`. The files are read as streams,
 * line by line, and reading stops at the first bad line or once the request holds more items than
 * it may add, so a large file costs no more than the items it may add.
 */
import { resolveMediaKeys, type MediaRef } from '../access/references.ts'
import { fieldName } from '../access/issues.ts'
import type { ResourceCtx } from '../context.ts'
import { ValidationError } from '../platform/errors.ts'
import { createStorage, type StoredObject } from '../platform/storage.ts'
import { DATASET_ITEMS_PER_REQUEST_MAX, DatasetItemInput, type TDatasetItemInput } from './dataset.schema.ts'

/**
 * Upload types read as JSON Lines: `.jsonl` uploads, and `.json` and `.txt` ones (the same text
 * under another name). Every one of them was checked to be UTF-8 without NUL when uploaded.
 */
const JSONL_TYPES: readonly string[] = ['application/jsonl', 'application/json', 'text/plain']

/**
 * Longest line, in characters: an item whose fields are all at their limits, written with every
 * character escaped, stays under it; a longer line is refused before it is held whole.
 */
export const JSONL_LINE_MAX_CHARS = 2 * 1024 * 1024

/** What the request field of the `index`th key is called in an issue (`file.keys.0`). */
const keyPath = (index: number) => ['file', 'keys', index]

/**
 * The items of the JSONL uploads `keys`, in file order and line order.
 * @throws ValidationError naming `file.keys.N` for an upload the caller may not use, one that is
 *   not JSON Lines or is gone from the store, a file without items, or a bad line (its number in
 *   the message); naming `file.keys` when the files hold more than
 *   {@link DATASET_ITEMS_PER_REQUEST_MAX} items together.
 */
export async function readJsonlItems(ctx: ResourceCtx, keys: readonly string[]): Promise<TDatasetItemInput[]> {
  const uploads = await resolveMediaKeys(ctx, keys, ['file', 'keys'])
  uploads.forEach((upload, index) => {
    if (!JSONL_TYPES.includes(upload.mimeType)) {
      throw new ValidationError(keyPath(index), `A ${upload.mimeType} upload is not JSON Lines; upload a .jsonl file with one item per line`)
    }
  })
  const storage = createStorage(ctx.config)
  const items: TDatasetItemInput[] = []
  for (const [index, upload] of uploads.entries()) {
    const object = await openUpload(ctx, upload, storage)
    if (!object) throw new ValidationError(keyPath(index), 'The uploaded file is gone; upload it again')
    const before = items.length
    try {
      for await (const { line, number } of lines(object, index)) {
        items.push(parseLine(line, number, index))
        if (items.length > DATASET_ITEMS_PER_REQUEST_MAX) {
          throw new ValidationError(['file', 'keys'], `The files hold more than ${DATASET_ITEMS_PER_REQUEST_MAX} items; add at most ${DATASET_ITEMS_PER_REQUEST_MAX} per request`)
        }
      }
    } finally {
      object.body.destroy()
    }
    if (items.length === before) throw new ValidationError(keyPath(index), 'The file holds no items: write one JSON object per line')
  }
  return items
}

/** The stored object of an upload; null when its store or object is gone. */
async function openUpload(ctx: ResourceCtx, upload: MediaRef, storage: ReturnType<typeof createStorage>): Promise<StoredObject | null> {
  const [row] = await ctx.em.execute(`select path, disk from media where id = ?`, [upload.id])
  if (!row || row.disk !== storage.disk) return null
  return storage.get(String(row.path)).catch(() => null)
}

/**
 * The non-blank lines of a stored UTF-8 text, with their 1-based numbers (blank lines count).
 * `\r\n` ends a line as `\n` does; a byte-order mark at the start is dropped.
 * @throws ValidationError naming `file.keys.<index>` for a line over {@link JSONL_LINE_MAX_CHARS}
 *   or bytes that are not UTF-8.
 */
async function* lines(object: StoredObject, index: number): AsyncGenerator<{ line: string; number: number }> {
  const decoder = new TextDecoder('utf-8', { fatal: true })
  let pending = ''
  let number = 0
  const decode = (chunk?: Buffer): string => {
    try {
      return chunk ? decoder.decode(chunk, { stream: true }) : decoder.decode()
    } catch {
      throw new ValidationError(keyPath(index), `Line ${number + 1}: the file is not UTF-8 text`)
    }
  }
  const complete = function* (text: string, final: boolean) {
    // Only the new text is split; a line longer than a chunk grows in `pending` without being split again.
    const parts = text.split('\n')
    parts[0] = pending + parts[0]
    pending = final ? '' : (parts.pop() ?? '')
    for (const part of parts) {
      number += 1
      if (part.length > JSONL_LINE_MAX_CHARS) throw tooLong(number, index)
      const line = part.endsWith('\r') ? part.slice(0, -1) : part
      if (line.trim()) yield { line, number }
    }
    if (pending.length > JSONL_LINE_MAX_CHARS) throw tooLong(number + 1, index)
  }
  for await (const chunk of object.body) {
    yield* complete(decode(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk))), false)
  }
  yield* complete(decode(), true)
}

const tooLong = (number: number, index: number) =>
  new ValidationError(keyPath(index), `Line ${number}: longer than ${JSONL_LINE_MAX_CHARS} characters; an item's fields hold at most 100,000 characters each`)

/**
 * One line as an item.
 * @throws ValidationError naming `file.keys.<index>`: the line is not JSON, or not an item (the
 *   first problem, with the member it concerns).
 */
function parseLine(line: string, number: number, index: number): TDatasetItemInput {
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch {
    throw new ValidationError(keyPath(index), `Line ${number}: not valid JSON`)
  }
  const parsed = DatasetItemInput.safeParse(value)
  if (parsed.success) return parsed.data
  const [issue] = parsed.error.issues
  const member = fieldName(issue.path)
  const problem = issue.code === 'unrecognized_keys' ? `unknown member ${issue.keys.map((key) => JSON.stringify(key)).join(', ')}` : issue.message
  throw new ValidationError(keyPath(index), `Line ${number}: ${member ? `${member}: ` : ''}${problem}`)
}
