/**
 * The task a worker thread of src/knowledge/extract-pool.ts runs: extract a document's text
 * and cut it into chunks, off the event loop of the process that serves requests.
 */
import { createHash } from 'node:crypto'
import { chunkText, countTokens, type Chunk } from './chunk.ts'
import { ExtractionError, extractText } from './extract.ts'

/** What the pool sends. */
export interface ExtractTask {
  /** The file: the worker's own (transferred or copied to it), so its parser may take it over. */
  bytes: Uint8Array
  contentType: string
  /** True for a text source: its text is used as it is, not parsed. */
  plain: boolean
}

/**
 * What the worker answers: the text's SHA-256 (hex), its chunks and its tokens, or the reason it
 * cannot be read. Not the text itself: its only use past the chunks is that hash, and a copy of
 * it in the calling thread would cost as much memory as the chunks.
 */
export type ExtractResult = { ok: true; contentHash: string; chunks: Chunk[]; tokens: number } | { ok: false; reason: string | null }

/** Extracts and chunks one document; an {@link ExtractionError}'s message comes back as `reason`, any other failure as null. */
export default async function extract(task: ExtractTask): Promise<ExtractResult> {
  try {
    const { bytes } = task
    const text = task.plain
      ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')
      : await extractText(bytes, task.contentType, { handOver: true })
    const contentHash = createHash('sha256').update(text).digest('hex')
    return { ok: true, contentHash, chunks: await chunkText(text), tokens: countTokens(text) }
  } catch (error) {
    return { ok: false, reason: error instanceof ExtractionError ? error.message : null }
  }
}
