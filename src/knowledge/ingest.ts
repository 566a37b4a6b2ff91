/**
 * Knowledge ingestion (docs/api/knowledge.md, "Ingestion"): the `knowledge.ingest` job of the
 * durable queue turns one document into chunks. It claims the document (`processing`, one more
 * `attempts`), reads its source (the stored text, the uploaded file, or the URL through the tools'
 * outbound guard), extracts its text (src/knowledge/extract.ts), cuts it into token chunks
 * (src/knowledge/chunk.ts), embeds them when the agent's provider has an embeddings API and the
 * database has pgvector, and stores the chunks and the `ready` document in one transaction.
 *
 * Faults: a source that cannot be read (empty, encrypted, corrupt, unsupported) fails the document
 * at once with the reason; anything transient (a URL that does not answer, an embedding upstream
 * that fails, a lost connection) is retried with backoff, and the last attempt fails the document
 * with the reason. A worker that dies mid-document loses its job to the queue's heartbeat, and the
 * recovery sweep sends back any document left `queued` or `processing` without progress; after
 * {@link MAX_ATTEMPTS} claims the document fails. A document (or its agent) deleted meanwhile is
 * never written: the final transaction locks the row and finds it gone.
 *
 * A URL's answer leaves its validators (`etag`, `last_modified`) and `last_synced_at` on the
 * document; later reads of the page are syncs (./sync.ts), which the engine registers too. A
 * crawl root, once ingested, has its first crawl started (./crawl.ts); the sweep starts it for a
 * root that was left without one. A crawled page is read with no redirect off its origin.
 */
import { recordCallUsage } from '../usage/index.ts'
import type { Logger } from '../platform/logger.ts'
import type { Config } from '../platform/config.ts'
import type { Em, Orm } from '../platform/db.ts'
import { databaseUnavailable } from '../platform/errors.ts'
import type { JobInfo, JobQueue } from '../platform/queue.ts'
import type { DueScheduler } from '../platform/scheduler.ts'
import { createStorage, type MediaStorage, type StoredObject } from '../platform/storage.ts'
import { resolveModel, type KnowledgeEmbedding } from '../models/index.ts'
import { isTrainable } from './extract.ts'
import { ExtractFailure, ExtractPool } from './extract-pool.ts'
import { prepareVectorStore, type RetrievalMode } from './vector-store.ts'
import { embedAll, insertChunks } from './chunk-store.ts'
import { KnowledgeSync, type SyncTarget } from './sync.ts'
import { fetchPage, PageRefusedError } from './page-fetch.ts'
import { ToolHttpError } from '../catalog/index.ts'

/** The job's name in the queue. */
export const INGEST_JOB = 'knowledge.ingest'
/** Attempts of one job after a failed one (transient faults), with backoff from {@link RETRY_DELAY_SECONDS}. */
const RETRY_LIMIT = 3
const RETRY_DELAY_SECONDS = 1
/** Claims of a document, across jobs and sweeps, before it fails for good (a document that kills its worker). */
export const MAX_ATTEMPTS = 5
/** Milliseconds between the heartbeats of a document being processed (its `updated_at`). */
const HEARTBEAT_MS = 5_000
/** Seconds without a heartbeat after which the sweep sends a `queued` or `processing` document back to the queue. */
const STALE_SECONDS = 30
/** Milliseconds between recovery sweeps. */
const SWEEP_MS = 10_000

/** The data of an ingestion job. */
interface IngestJob {
  document_uuid: string
}

/** A claimed document, as the job reads it. */
interface Claimed {
  id: number
  uuid: string
  agentId: number
  userId: number | null
  workspaceId: number
  sourceType: 'text' | 'file' | 'url'
  mediaKey: string | null
  url: string | null
  sourceText: string | null
  mimeType: string
  attempts: number
  /** The crawl root of a crawled page; null otherwise. */
  crawlRootId: number | null
  /** Set on a crawl root (its `crawl.max_pages`); null otherwise. */
  crawlMaxPages: number | null
}

/** A fault that retrying cannot mend: the document fails at once with this message. */
class PermanentError extends Error {
  override name = 'PermanentError'
}

/** What the engine needs from the process. */
export interface KnowledgeDeps {
  orm: Orm
  config: Config
  log: Logger
  jobs: JobQueue
  /** The process's one scheduler: URL documents' due syncs are a source of it (./sync.ts). */
  scheduler: DueScheduler
  storage?: MediaStorage
}

/** See the module comment. */
export class KnowledgeEngine {
  #sweep: NodeJS.Timeout | undefined
  readonly #storage: MediaStorage
  /** Extraction and chunking off the event loop (src/knowledge/extract-pool.ts). */
  readonly #extractor = new ExtractPool()
  /** URL documents' syncs (./sync.ts), set by {@link create}. */
  #sync!: KnowledgeSync

  private constructor(
    private readonly deps: KnowledgeDeps,
    /** Whether retrieval is hybrid or full-text in this database (src/knowledge/vector-store.ts). */
    readonly mode: RetrievalMode,
  ) {
    this.#storage = deps.storage ?? createStorage(deps.config)
  }

  /**
   * Prepares the vector store, registers {@link INGEST_JOB} and the syncs of URL documents
   * (`knowledge.sync`, and their due times with the scheduler: ./sync.ts) and logs the retrieval
   * mode. Call before the queue starts.
   * @throws the database's error when it cannot be reached.
   */
  static async create(deps: KnowledgeDeps): Promise<KnowledgeEngine> {
    const engine = new KnowledgeEngine(deps, await prepareVectorStore(deps.orm))
    deps.jobs.register<IngestJob>(INGEST_JOB, (data, job) => engine.#ingest(data, job), {
      retryLimit: RETRY_LIMIT,
      retryDelay: RETRY_DELAY_SECONDS,
      retryBackoff: true,
      heartbeatSeconds: 10,
      expireInSeconds: 1_800,
      localConcurrency: 2,
    })
    engine.#sync = KnowledgeSync.create(
      {
        ...deps,
        extract: (bytes, o) => engine.#extractor.run(bytes, o),
        embeddingFor: (doc) => (engine.mode === 'hybrid' ? engine.#embeddingFor(doc) : Promise.resolve(null)),
        countEmbedding: (doc, key, tokens) => engine.#countEmbedding(doc, key, tokens),
        queue: (uuids) => engine.queue(uuids),
      },
      deps.scheduler,
    )
    deps.log.info({ mode: engine.mode }, `knowledge retrieval: ${engine.mode}`)
    return engine
  }

  /**
   * Claims document `id` (a `ready` URL document) for a sync and queues it (./sync.ts). Answers
   * false when a sync of it is running already.
   * @throws the queue's or the database's error.
   */
  startSync(id: number): Promise<boolean> {
    return this.#sync.start(id)
  }

  /**
   * Queues the documents `uuids` for ingestion (each once: a document already waiting or being
   * worked is left as it is).
   * @throws the queue's error when the database cannot be reached (the sweep sends them later).
   */
  async queue(uuids: string[]): Promise<void> {
    for (const uuid of uuids) await this.deps.jobs.ensure(INGEST_JOB, { document_uuid: uuid }, { id: uuid })
  }

  /** Starts the recovery sweep (processes that work the queue). */
  startSweep(): void {
    if (this.#sweep) return
    this.#sweep = setInterval(() => void this.sweep().catch((error: unknown) => this.deps.log.warn({ err: error }, 'knowledge sweep failed')), SWEEP_MS)
    this.#sweep.unref()
  }

  /**
   * Sends back to the queue every document left `queued` or `processing` for {@link STALE_SECONDS}
   * without a heartbeat (its job was lost, or its worker died), and fails those claimed
   * {@link MAX_ATTEMPTS} times already; starts the first crawl of every `ready` crawl root left
   * without one as long (its start was lost). Answers how many documents it sent back.
   */
  async sweep(): Promise<number> {
    const em = this.deps.orm.em.fork()
    await em.execute(
      `update knowledge_documents set status = 'failed', updated_at = now(),
         error = 'Ingestion stopped ${MAX_ATTEMPTS} times before it could finish (the file may be too large or malformed); retry it or upload a smaller file'
       where status in ('queued', 'processing') and attempts >= ? and updated_at < now() - make_interval(secs => ?)`,
      [MAX_ATTEMPTS, STALE_SECONDS],
    )
    const stale = await em.execute<{ uuid: string }[]>(
      `update knowledge_documents set updated_at = now()
       where id in (select id from knowledge_documents where status in ('queued', 'processing') and updated_at < now() - make_interval(secs => ?)
                    order by updated_at limit 100 for update skip locked)
       returning uuid`,
      [STALE_SECONDS],
    )
    await this.queue(stale.map((row) => row.uuid))
    const uncrawled = await em.execute<{ id: number }[]>(
      `select id::float8 as id from knowledge_documents
       where crawl_max_pages is not null and crawled_at is null and status = 'ready' and updated_at < now() - make_interval(secs => ?)
       order by updated_at limit 100`,
      [STALE_SECONDS],
    )
    // A root whose crawl is running cannot be claimed: start answers false for it.
    for (const root of uncrawled) await this.#sync.start(Number(root.id), { crawlOnly: true })
    return stale.length
  }

  /** Stops the sweep and the extraction threads. */
  async close(): Promise<void> {
    clearInterval(this.#sweep)
    this.#sweep = undefined
    await this.#extractor.close()
  }

  /** The job handler: see the module comment. Throws only to have the queue retry a transient fault. */
  async #ingest(data: IngestJob, job: JobInfo): Promise<void> {
    const doc = await this.#claim(data.document_uuid)
    if (!doc) return
    const beat = setInterval(
      () => void this.#em().execute(`update knowledge_documents set updated_at = now() where id = ? and attempts = ? and status = 'processing'`, [doc.id, doc.attempts]).catch(() => undefined),
      HEARTBEAT_MS,
    )
    try {
      await this.#process(doc)
      if (doc.crawlMaxPages !== null) await this.#startCrawl(doc)
    } catch (error) {
      const last = error instanceof PermanentError || job.retryCount >= RETRY_LIMIT
      if (!last) {
        // Back to `queued` for the retry, so a worker that dies before it does not leave it `processing`.
        await this.#em().execute(`update knowledge_documents set status = 'queued', updated_at = now() where id = ? and attempts = ? and status = 'processing'`, [doc.id, doc.attempts])
        throw error
      }
      const reason = error instanceof PermanentError ? error.message : `Ingestion failed after ${RETRY_LIMIT + 1} attempts: ${describe(error)}`
      await this.#em().execute(`update knowledge_documents set status = 'failed', error = ?, updated_at = now() where id = ? and attempts = ? and status = 'processing'`, [
        reason,
        doc.id,
        doc.attempts,
      ])
    } finally {
      clearInterval(beat)
    }
  }

  #em(): Em {
    return this.deps.orm.em.fork()
  }

  /** Starts the first crawl of a root just ingested; a failure to start it is left to the sweep, never fails the document. */
  async #startCrawl(doc: Claimed): Promise<void> {
    await this.#sync.start(doc.id, { crawlOnly: true }).catch((error: unknown) => this.deps.log.warn({ err: error, document: doc.uuid }, 'knowledge crawl not started'))
  }

  /** Marks the document `processing` for this attempt; null when it is gone, done, failed or out of attempts. */
  async #claim(uuid: string): Promise<Claimed | null> {
    const [row] = await this.#em().execute<Record<string, unknown>[]>(
      `update knowledge_documents set status = 'processing', attempts = attempts + 1, error = null, updated_at = now()
       where uuid = ? and status in ('queued', 'processing') and attempts < ?
         and exists (select 1 from agents a where a.id = agent_id and a.deleted_at is null)
       returning id::float8 as id, uuid, agent_id::float8 as "agentId", user_id::float8 as "userId", workspace_id::float8 as "workspaceId",
         source_type as "sourceType", media_key as "mediaKey", url, source_text as "sourceText", mime_type as "mimeType", attempts,
         crawl_root_id::float8 as "crawlRootId", crawl_max_pages as "crawlMaxPages"`,
      [uuid, MAX_ATTEMPTS],
    )
    if (!row) return null
    const nullable = (value: unknown) => (value === null ? null : Number(value))
    return { ...(row as unknown as Claimed), userId: nullable(row.userId), crawlRootId: nullable(row.crawlRootId), crawlMaxPages: nullable(row.crawlMaxPages) }
  }

  /**
   * Counts the tokens of a document's embedding call in its agent's and owner's usage (no run, no
   * price: docs/api/usage-and-budgets.md, "How usage is counted"). A failure to count it does not fail the document.
   */
  async #countEmbedding(doc: Pick<Claimed, 'workspaceId' | 'agentId' | 'userId' | 'uuid'>, key: string, tokens: number): Promise<void> {
    const scope = { workspaceId: doc.workspaceId, agentId: doc.agentId, userId: doc.userId, accessTokenId: null }
    await recordCallUsage(this.#em(), scope, { model: key, promptTokens: tokens, completionTokens: 0, cost: 0, runs: 0 }).catch((error: unknown) =>
      this.deps.log.warn({ err: error, document: doc.uuid }, 'embedding usage not recorded'),
    )
  }

  async #process(doc: Claimed): Promise<void> {
    const source = await this.#read(doc)
    const sizeBytes = source.bytes.byteLength
    let extracted
    try {
      // Handed over: nothing reads the bytes after this, so a large file is not copied to the worker.
      extracted = await this.#extractor.run(source.bytes, { contentType: source.contentType ?? source.mimeType, plain: doc.sourceType === 'text', handOver: true })
    } catch (error) {
      if (error instanceof ExtractFailure) throw new PermanentError(error.message)
      throw error
    }
    const { contentHash, chunks, tokens } = extracted
    if (chunks.length === 0) throw new PermanentError('The source contains no text')
    const embedding = this.mode === 'hybrid' ? await this.#embeddingFor(doc) : null
    const vectors = embedding ? await embedAll(embedding, chunks.map((chunk) => chunk.text), (tokens) => this.#countEmbedding(doc, embedding.key, tokens)) : null
    await this.#store(doc, {
      contentHash,
      tokens,
      sizeBytes,
      mimeType: source.mimeType,
      chunks,
      vectors,
      embeddingKey: embedding?.key ?? null,
      validators: source.validators ?? { etag: null, lastModified: null },
    })
  }

  /** The document's bytes and type. @throws PermanentError for a missing or unreadable source; ToolHttpError (retried) for a URL that failed. */
  async #read(doc: Claimed): Promise<{ bytes: Uint8Array; mimeType: string; contentType?: string; validators?: { etag: string | null; lastModified: string | null } }> {
    if (doc.sourceType === 'text') return { bytes: Buffer.from(doc.sourceText ?? ''), mimeType: doc.mimeType }
    if (doc.sourceType === 'file') {
      const [media] = await this.#em().execute<{ path: string; disk: string }[]>(`select path, disk from media where key = ?`, [doc.mediaKey])
      const object = media && media.disk === this.#storage.disk ? await this.#storage.get(media.path) : null
      if (!object) throw new PermanentError('The uploaded file is gone; upload it again')
      return { bytes: await readWhole(object), mimeType: doc.mimeType }
    }
    try {
      const page = await fetchPage(doc.url ?? '', this.deps.config, { sameOrigin: doc.crawlRootId !== null })
      if (page.status >= 400) {
        const message = `The URL answered ${page.status}`
        throw page.status >= 500 || page.status === 429 ? new Error(message) : new PermanentError(`${message}; check the address`)
      }
      // Nothing was asked conditionally, so "not modified" (or any other 3xx left) has no page to read.
      if (page.status === 304) throw new PermanentError('The URL answered 304 (not modified) to a request that was not conditional')
      if (page.status >= 300) throw new PermanentError(`The URL answered ${page.status}; check the address`)
      if (!isTrainable(page.mimeType)) throw new PermanentError(`The URL answered ${page.mimeType}, which cannot be trained`)
      // The page's validators make its first sync a conditional request.
      return page
    } catch (error) {
      if (error instanceof PageRefusedError) throw new PermanentError(error.message)
      throw error
    }
  }

  /** The embedding model of the agent's provider, with the trainer's credentials; null when there is none. */
  async #embeddingFor(doc: Pick<Claimed, 'workspaceId' | 'agentId' | 'userId'> | SyncTarget): Promise<KnowledgeEmbedding | null> {
    if (doc.userId === null) return null
    const [agent] = await this.#em().execute<{ slug: string | null }[]>(
      `select case when jsonb_typeof(metadata->'large_language_model') = 'string' then nullif(metadata->>'large_language_model', '') end as slug from agents where id = ?`,
      [doc.agentId],
    )
    try {
      const model = await resolveModel(
        { em: this.#em(), config: this.deps.config },
        { workspaceId: doc.workspaceId, userId: doc.userId, slug: agent?.slug ?? null, field: ['metadata', 'large_language_model'] },
      )
      return model.embedding()
    } catch {
      // No usable model or credential: the document is still retrievable by full-text search.
      return null
    }
  }

  /** Writes the chunks and the `ready` document in one transaction, unless the document is gone or claimed again. */
  async #store(
    doc: Claimed,
    o: {
      contentHash: string
      tokens: number
      sizeBytes: number
      mimeType: string
      chunks: { index: number; text: string; tokens: number }[]
      vectors: number[][] | null
      embeddingKey: string | null
      validators: { etag: string | null; lastModified: string | null }
    },
  ): Promise<void> {
    const duplicate = await this.#em().execute<{ name: string }[]>(
      `select name from knowledge_documents where agent_id = ? and content_hash = ? and id <> ? limit 1`,
      [doc.agentId, o.contentHash, doc.id],
    )
    if (duplicate[0]) throw new PermanentError(`The same text is already trained as "${duplicate[0].name}"`)
    await this.deps.orm.em.fork().transactional(async (em) => {
      const [locked] = await em.execute(
        `select d.id from knowledge_documents d join agents a on a.id = d.agent_id and a.deleted_at is null
         where d.id = ? and d.attempts = ? and d.status = 'processing' for update of d`,
        [doc.id, doc.attempts],
      )
      if (!locked) return
      await em.execute(`delete from knowledge_chunks where document_id = ?`, [doc.id])
      await insertChunks(em, doc, o.chunks, o.vectors, o.embeddingKey)
      // A URL's first read counts as its first sync.
      await em.execute(
        `update knowledge_documents set status = 'ready', error = null, content_hash = ?, size_bytes = ?, mime_type = ?, chunks_count = ?, tokens_count = ?,
           etag = ?, last_modified = ?, last_synced_at = case when source_type = 'url' then now() end, updated_at = now()
         where id = ?`,
        [o.contentHash, o.sizeBytes, o.mimeType, o.chunks.length, o.tokens, o.validators.etag, o.validators.lastModified, doc.id],
      )
    })
  }
}

/**
 * A stored object's bytes in one buffer of their own, filled as they arrive: collecting the parts
 * and concatenating them would hold the file twice. An object that turns out longer than its
 * stated size is read on into a larger buffer.
 */
async function readWhole(object: StoredObject): Promise<Uint8Array> {
  let bytes = new Uint8Array(object.size)
  let length = 0
  for await (const part of object.body) {
    const chunk = part as Buffer
    if (length + chunk.byteLength > bytes.byteLength) {
      const larger = new Uint8Array(Math.max(2 * bytes.byteLength, length + chunk.byteLength))
      larger.set(bytes.subarray(0, length))
      bytes = larger
    }
    bytes.set(chunk, length)
    length += chunk.byteLength
  }
  return length === bytes.byteLength ? bytes : bytes.slice(0, length)
}

/** A short, secret-free description of a transient fault for a document's `error`. */
function describe(error: unknown): string {
  if (error instanceof ToolHttpError) return error.message
  // Never the driver's own text (docs/operations.md, "Database deadlines").
  if (databaseUnavailable(error)) return 'the database was unavailable'
  const status = (error as { statusCode?: unknown }).statusCode
  if (typeof status === 'number') return `the embedding model answered ${status}`
  return error instanceof Error ? error.message.replace(/\s+/g, ' ').slice(0, 200) : 'unknown error'
}
