/**
 * Extraction and chunking in worker threads (piscina), so a large or hostile file never blocks
 * the event loop that serves requests, and cannot take more than its own heap
 * (docs/api/knowledge.md, "Ingestion"). Threads start on demand and stop when idle.
 */
import { Piscina } from 'piscina'
import type { ExtractResult, ExtractTask } from './extract-task.ts'

/** Most worker threads: as many as the ingestion jobs one process works at once. */
const MAX_THREADS = 2
/** Heap of one worker, in MB: a file whose parsing needs more fails instead of growing the process. */
export const WORKER_HEAP_MB = 512
/** Longest one document may take to extract and chunk, in milliseconds. */
export const EXTRACT_TIMEOUT_MS = 120_000
/** Milliseconds an idle thread lives. */
const IDLE_MS = 30_000

/** Why a document could not be read in its worker: what the document's `error` says. */
export class ExtractFailure extends Error {
  override name = 'ExtractFailure'
}

/** See the module comment. */
export class ExtractPool {
  readonly #pool = new Piscina<ExtractTask, ExtractResult>({
    filename: new URL('./extract-task.ts', import.meta.url).href,
    // The task is TypeScript, loaded as the process itself is (`node --import tsx`).
    execArgv: ['--import', 'tsx'],
    minThreads: 0,
    maxThreads: MAX_THREADS,
    idleTimeout: IDLE_MS,
    resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
  })

  /**
   * Extracts and chunks `bytes` in a worker.
   * @param o.plain a text source: taken as UTF-8 text, not parsed.
   * @throws ExtractFailure with a reason a user can act on: an unreadable file, a worker out of
   *   memory, or {@link EXTRACT_TIMEOUT_MS} passed.
   */
  async run(bytes: Uint8Array, o: { contentType: string; plain: boolean }): Promise<Extract> {
    let result: ExtractResult
    try {
      result = await this.#pool.run(
        // Copied to the worker: a Buffer's memory may be Node's shared pool, which cannot be moved.
        { bytes, contentType: o.contentType, plain: o.plain },
        { signal: AbortSignal.timeout(EXTRACT_TIMEOUT_MS) },
      )
    } catch (error) {
      if ((error as { name?: string }).name === 'AbortError' || (error as { name?: string }).name === 'TimeoutError')
        throw new ExtractFailure(`Reading the file took longer than ${EXTRACT_TIMEOUT_MS / 1000} s; split it into smaller files`)
      throw new ExtractFailure('The file is too large or too complex to read; split it into smaller files')
    }
    if (!result.ok) throw new ExtractFailure(result.reason ?? `The ${o.contentType.split(';')[0]} file could not be read`)
    return { text: result.text, chunks: result.chunks, tokens: result.tokens }
  }

  /** Stops every thread (a task under way is abandoned). */
  async close(): Promise<void> {
    await this.#pool.destroy()
  }
}

/** A document's text, its chunks and its tokens. */
export interface Extract {
  text: string
  chunks: { index: number; text: string; tokens: number }[]
  tokens: number
}
