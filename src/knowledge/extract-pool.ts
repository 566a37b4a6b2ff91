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
/**
 * Young generation of one worker, in MB. Extraction makes short-lived strings by the million; a
 * small nursery collects them sooner and costs nothing measurable in speed, where V8's default
 * let a 50 MB PDF's ingestion peak about 30 MB higher (docs/benchmarks.md, "A large PDF").
 */
const WORKER_YOUNG_MB = 8
/** Longest one document may take to extract and chunk, in milliseconds, unless it is large (see {@link extractDeadlineMs}). */
export const EXTRACT_TIMEOUT_MS = 120_000
/**
 * Milliseconds per MB a large file may take: about twice what a 50 MB PDF takes end to end on a
 * busy 2-core machine (docs/benchmarks.md, "A large PDF"), so a file of a size the uploads allow
 * is not failed for its size alone.
 */
const EXTRACT_MS_PER_MB = 4_000
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
    resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB, maxYoungGenerationSizeMb: WORKER_YOUNG_MB },
  })

  /**
   * Extracts and chunks `bytes` in a worker.
   * @param o.contentType the file's MIME type (src/knowledge/extract.ts, `TRAINABLE_TYPES`).
   * @param o.plain a text source: taken as UTF-8 text, not parsed.
   * @param o.handOver the caller gives `bytes` up: when they are the whole of their `ArrayBuffer`,
   *   that buffer moves to the worker (and is empty here afterwards) instead of being copied.
   * @returns the text's SHA-256 (hex), its chunks and its tokens.
   * @throws ExtractFailure with a reason a user can act on: an unreadable file, a worker out of
   *   memory, or its {@link extractDeadlineMs} passed.
   */
  async run(bytes: Uint8Array, o: { contentType: string; plain: boolean; handOver?: boolean }): Promise<Extract> {
    const deadline = extractDeadlineMs(bytes.byteLength)
    // Otherwise copied to the worker: a Buffer's memory may be Node's shared pool, which cannot be moved.
    const movable = o.handOver === true && bytes.buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
    let result: ExtractResult
    try {
      result = await this.#pool.run(
        { bytes, contentType: o.contentType, plain: o.plain },
        { signal: AbortSignal.timeout(deadline), ...(movable ? { transferList: [bytes.buffer] } : {}) },
      )
    } catch (error) {
      if ((error as { name?: string }).name === 'AbortError' || (error as { name?: string }).name === 'TimeoutError')
        throw new ExtractFailure(`Reading the file took longer than ${Math.round(deadline / 1000)} s; split it into smaller files`)
      throw new ExtractFailure('The file is too large or too complex to read; split it into smaller files')
    }
    if (!result.ok) throw new ExtractFailure(result.reason ?? `The ${o.contentType.split(';')[0]} file could not be read`)
    return { contentHash: result.contentHash, chunks: result.chunks, tokens: result.tokens }
  }

  /** Stops every thread (a task under way is abandoned). */
  async close(): Promise<void> {
    await this.#pool.destroy()
  }
}

/**
 * How long a file of `bytes` bytes may take to extract and chunk, in milliseconds:
 * {@link EXTRACT_TIMEOUT_MS}, or 4 s per MB for a file over 30 MB.
 */
export function extractDeadlineMs(bytes: number): number {
  return Math.max(EXTRACT_TIMEOUT_MS, Math.ceil((bytes / 1024 / 1024) * EXTRACT_MS_PER_MB))
}

/** A document's text, as its SHA-256 (hex), its chunks and its tokens. */
export interface Extract {
  contentHash: string
  chunks: { index: number; text: string; tokens: number }[]
  tokens: number
}
