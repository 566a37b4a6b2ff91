/**
 * The task a worker thread of src/knowledge/extract-pool.ts runs: extract a document's text
 * and cut it into chunks, off the event loop of the process that serves requests.
 */
import { chunkText, countTokens, type Chunk } from './chunk.ts'
import { ExtractionError, extractText } from './extract.ts'

/** What the pool sends. */
export interface ExtractTask {
  bytes: Uint8Array
  contentType: string
  /** True for a text source: its text is used as it is, not parsed. */
  plain: boolean
}

/** What the worker answers: the text, its chunks and its tokens, or the reason it cannot be read. */
export type ExtractResult = { ok: true; text: string; chunks: Chunk[]; tokens: number } | { ok: false; reason: string | null }

/** Extracts and chunks one document; an {@link ExtractionError}'s message comes back as `reason`, any other failure as null. */
export default async function extract(task: ExtractTask): Promise<ExtractResult> {
  try {
    const text = task.plain ? Buffer.from(task.bytes).toString('utf8') : await extractText(task.bytes, task.contentType)
    return { ok: true, text, chunks: await chunkText(text), tokens: countTokens(text) }
  } catch (error) {
    return { ok: false, reason: error instanceof ExtractionError ? error.message : null }
  }
}
