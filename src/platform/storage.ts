/**
 * Where uploaded files live. The rest of the code sees only
 * {@link MediaStorage}; the local-folder store under `DATA_DIR/media` is the one built in, and
 * an S3-compatible store can implement the same three operations (the `media.disk` column names
 * the store that holds each object).
 */
import { randomUUID } from 'node:crypto'
import { createReadStream, createWriteStream } from 'node:fs'
import { mkdir, rename, rm, stat } from 'node:fs/promises'
import path from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'

/** A stored object as read back. */
export interface StoredObject {
  body: Readable
  size: number
}

/** A store of immutable objects addressed by key. */
export interface MediaStorage {
  /** The name written to `media.disk`. */
  readonly disk: string
  /**
   * Writes an object whole: readers never see a partial one. When `body` fails (a stream error,
   * a limit the caller enforces while streaming), nothing is left behind and the error is thrown.
   * @returns the number of bytes written.
   */
  put(key: string, body: Readable | Buffer): Promise<number>
  /** Opens an object; null when there is none. */
  get(key: string): Promise<StoredObject | null>
  /** Removes an object; no error when there is none. */
  delete(key: string): Promise<void>
}

/** Keys the local store accepts: one path segment of safe characters, never `.`/`..`. */
const SAFE_KEY = /^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/

/** A folder on the local disk (`DATA_DIR/media` by default). */
export class LocalStorage implements MediaStorage {
  readonly disk = 'local'

  constructor(private readonly root: string) {}

  /** The file of `key`; refuses anything that is not a plain file name, so no key escapes the folder. */
  private fileOf(key: string): string {
    if (!SAFE_KEY.test(key) || key.includes('..')) throw new Error('Invalid storage key')
    return path.join(this.root, key)
  }

  async put(key: string, body: Readable | Buffer): Promise<number> {
    const file = this.fileOf(key)
    await mkdir(this.root, { recursive: true })
    const partial = path.join(this.root, `.${randomUUID()}.part`)
    try {
      await pipeline(Buffer.isBuffer(body) ? Readable.from([body]) : body, createWriteStream(partial, { flags: 'wx', mode: 0o600 }))
      const { size } = await stat(partial)
      await rename(partial, file)
      return size
    } catch (error) {
      await rm(partial, { force: true })
      throw error
    }
  }

  async get(key: string): Promise<StoredObject | null> {
    const file = this.fileOf(key)
    const stats = await stat(file).catch((error: unknown) => {
      if (error instanceof Error && 'code' in error && error.code === 'ENOENT') return null
      throw error
    })
    return stats?.isFile() ? { body: createReadStream(file), size: stats.size } : null
  }

  async delete(key: string): Promise<void> {
    await rm(this.fileOf(key), { force: true })
  }
}

/** The store of a deployment: the local folder `DATA_DIR/media`. */
export function createStorage(config: { dataDir: string }): MediaStorage {
  return new LocalStorage(path.join(config.dataDir, 'media'))
}
