/**
 * URL documents kept in sync with their page (docs/api/knowledge.md, "Keeping URL documents in
 * sync"): the `knowledge.sync` job of the durable queue reads a `ready` URL document's page
 * again, through the tools' outbound guard, with a conditional request (`If-None-Match` with the
 * stored ETag, `If-Modified-Since` with the stored Last-Modified). A 304, or a page whose
 * extracted text hashes to the stored `content_hash`, changes nothing but `last_synced_at` (and
 * the validators). Changed text is extracted, chunked and embedded as ingestion does it, and the
 * document's chunks are replaced in one transaction that also writes its counts, so a search
 * sees the old chunks or the new ones, never a mix; the document keeps its uuid and stays `ready`.
 * A failed sync keeps the old chunks and `last_synced_at` and records why in `sync_error`; it is
 * not retried before the next due time (or a sync asked for).
 *
 * The sync of a crawl root goes on with a crawl of its site (./crawl.ts) under the same claim,
 * unless its page failed; the crawl after a root's first ingestion skips the page (it was just
 * read). Pages of a crawl are read with no redirect off their origin.
 *
 * One sync of a document at a time, across processes: a sync is claimed by setting
 * `sync_started_at` (an UPDATE that only matches an unclaimed document), and the job's writes are
 * fenced by that claim. The due times (`next_sync_at`) are a source of the process's one scheduler
 * (src/platform/scheduler.ts): {@link KnowledgeSync.fireDue} claims due documents with one
 * `UPDATE ... RETURNING` that also moves `next_sync_at` one interval on, so two processes never
 * sync one document twice for one due time. A worker that dies mid-sync stops its job's
 * heartbeat: the queue fails the job within seconds and runs it again once, under the same claim
 * (the job is idempotent: it reads the page again and replaces the chunks whole, or adds nothing).
 * A claim whose job was lost altogether (a send that failed) lapses after {@link CLAIM_SECONDS}.
 */
import { uuidv7 } from 'uuidv7'
import type { KnowledgeSyncError } from '../../entities/index.ts'
import type { Config } from '../platform/config.ts'
import type { Em, Orm } from '../platform/db.ts'
import type { Logger } from '../platform/logger.ts'
import type { JobQueue } from '../platform/queue.ts'
import type { DueScheduler, DueSource } from '../platform/scheduler.ts'
import { toDate } from '../platform/sql.ts'
import { databaseUnavailable } from '../platform/errors.ts'
import type { KnowledgeEmbedding } from '../models/index.ts'
import { ToolHttpError } from '../catalog/index.ts'
import { fetchPage, isConditional, PageRefusedError, type Page, type PageValidators } from './page-fetch.ts'
import { SiteCrawl } from './crawl.ts'
import { isTrainable } from './extract.ts'
import { ExtractFailure, type Extract } from './extract-pool.ts'
import { embedAll, insertChunks } from './chunk-store.ts'
import { nextSyncSql } from './refresh.ts'

/** The job's name in the queue. */
export const SYNC_JOB = 'knowledge.sync'
/** Seconds after which a sync's claim lapses (its job's time limit too): a lost job does not block the document for good. */
export const CLAIM_SECONDS = 600
/** Due documents one statement claims at most; {@link KnowledgeSync.fireDue} loops while batches come back full. */
const BATCH = 100

/** The data of a sync job: the document and the claim it was sent for. */
interface SyncJob {
  document_uuid: string
  /** The document's `sync_started_at` as PostgreSQL wrote it: the job writes nothing once the claim is another's. */
  claimed_at: string
  /** A crawl root's first crawl, right after its ingestion: its page is not read again. */
  crawl_only?: boolean
}

/** A claimed document, as the job reads it. */
export interface SyncTarget {
  id: number
  uuid: string
  agentId: number
  userId: number | null
  workspaceId: number
  url: string
  contentHash: string | null
  etag: string | null
  lastModified: string | null
  /** The crawl root of a crawled page (its reads follow no redirect off the origin); null otherwise. */
  crawlRootId: number | null
  /** A crawl root's settings; null unless it crawls. */
  maxPages: number | null
  maxDepth: number | null
}

/** A sync that failed, with the `sync_error` it records. */
class SyncFailure extends Error {
  override name = 'SyncFailure'
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

/** What a sync needs from the knowledge engine (src/knowledge/ingest.ts) and the process. */
export interface SyncDeps {
  orm: Orm
  config: Config
  log: Logger
  jobs: JobQueue
  /** Extraction and chunking off the event loop (the engine's pool). */
  extract: (bytes: Uint8Array, o: { contentType: string; plain: boolean }) => Promise<Extract>
  /** The embedding model for the document's chunks; null for full-text retrieval only. */
  embeddingFor: (doc: SyncTarget) => Promise<KnowledgeEmbedding | null>
  /** Counts an embedding call's tokens in the document's usage. */
  countEmbedding: (doc: SyncTarget, key: string, tokens: number) => Promise<void>
  /** Queues documents for ingestion: the pages a crawl adds. */
  queue: (uuids: string[]) => Promise<void>
}

/** The columns of {@link SyncTarget}. */
const TARGET_COLUMNS = `id::float8 as id, uuid, agent_id::float8 as "agentId", user_id::float8 as "userId", workspace_id::float8 as "workspaceId",
  url, content_hash as "contentHash", etag, last_modified as "lastModified", crawl_root_id::float8 as "crawlRootId",
  crawl_max_pages as "maxPages", crawl_max_depth as "maxDepth"`

/** Which documents may be claimed: `ready` URL documents of a live agent, without a live claim. */
const CLAIMABLE = `status = 'ready' and source_type = 'url' and url is not null
  and (sync_started_at is null or sync_started_at < now() - make_interval(secs => ${CLAIM_SECONDS}))
  and exists (select 1 from agents a where a.id = agent_id and a.deleted_at is null)`

/** See the module comment. */
export class KnowledgeSync implements DueSource {
  readonly name = 'knowledge-sync'
  readonly #crawl: SiteCrawl

  private constructor(private readonly deps: SyncDeps) {
    this.#crawl = new SiteCrawl({ orm: deps.orm, config: deps.config, queue: deps.queue, startSync: (id) => this.start(id) })
  }

  /**
   * Registers {@link SYNC_JOB} with the queue (retried once, for a worker that died mid-sync; a
   * failed sync is not retried: the next due time is its retry) and the documents' due times with
   * `scheduler`.
   * @throws Error when the queue has started or holds the job already.
   */
  static create(deps: SyncDeps, scheduler: DueScheduler): KnowledgeSync {
    const sync = new KnowledgeSync(deps)
    deps.jobs.register<SyncJob>(SYNC_JOB, (data) => sync.run(data), {
      // The handler records a failed sync itself and never throws for one: a retry is for a job
      // whose worker died (its heartbeat stopped) or whose last write met a database fault.
      retryLimit: 1,
      retryDelay: 1,
      expireInSeconds: CLAIM_SECONDS,
      heartbeatSeconds: 10,
      localConcurrency: 2,
    })
    scheduler.register(sync)
    return sync
  }

  /**
   * Claims document `id` for a sync and sends its job; `o.crawlOnly` (a crawl root just ingested)
   * crawls without reading the root's page again. Answers false when it cannot be claimed (a sync
   * of it is running, or it is no longer a `ready` URL document).
   * @throws the queue's or the database's error (the claim is then released).
   */
  async start(id: number, o: { crawlOnly?: boolean } = {}): Promise<boolean> {
    const em = this.#em()
    const [claimed] = await em.execute<{ uuid: string; claimedAt: string }[]>(
      `update knowledge_documents set sync_started_at = now() where id = ? and ${CLAIMABLE}
       returning uuid, sync_started_at::text as "claimedAt"`,
      [id],
    )
    if (!claimed) return false
    try {
      const data: SyncJob = { document_uuid: claimed.uuid, claimed_at: claimed.claimedAt, ...(o.crawlOnly ? { crawl_only: true } : {}) }
      await this.deps.jobs.send<SyncJob>(SYNC_JOB, data, { id: uuidv7() })
    } catch (error) {
      await em.execute(`update knowledge_documents set sync_started_at = null where id = ? and sync_started_at = ?::timestamptz`, [id, claimed.claimedAt])
      throw error
    }
    return true
  }

  /**
   * The earliest due time of a claimable document; a document claimed now counts from when its
   * claim lapses, so a sync that outlives its due time does not have the scheduler look in a loop.
   */
  async earliestDue(): Promise<Date | null> {
    const [row] = await this.#em().execute<{ due: Date | string | null }[]>(
      `select min(greatest(next_sync_at, coalesce(sync_started_at + make_interval(secs => ${CLAIM_SECONDS}), next_sync_at))) as due
       from knowledge_documents where next_sync_at is not null and status = 'ready' and source_type = 'url'`,
    )
    return row?.due ? toDate(row.due) : null
  }

  /**
   * Claims every document due at `now` and sends their jobs. Each batch is one `UPDATE ...
   * RETURNING` over rows taken `for update skip locked` that moves `next_sync_at` one interval
   * from now with the claim, so a due time is claimed by one process once. Answers how many.
   * @throws the database's error (the scheduler looks again later).
   */
  async fireDue(now: Date = new Date()): Promise<number> {
    let fired = 0
    for (;;) {
      const claimed = await this.#em().execute<{ uuid: string; claimedAt: string }[]>(
        `update knowledge_documents set sync_started_at = now(), next_sync_at = ${nextSyncSql('refresh')}
         where id in (select id from knowledge_documents where next_sync_at <= ? and ${CLAIMABLE}
                      order by next_sync_at limit ${BATCH} for update skip locked)
         returning uuid, sync_started_at::text as "claimedAt"`,
        [now],
      )
      fired += claimed.length
      if (claimed.length) {
        await this.deps.jobs
          .sendMany<SyncJob>(SYNC_JOB, claimed.map((row) => ({ data: { document_uuid: row.uuid, claimed_at: row.claimedAt }, id: uuidv7() })))
          // The claims lapse after CLAIM_SECONDS; the documents sync at their next due time.
          .catch((error: unknown) => this.deps.log.warn({ err: error, documents: claimed.length }, 'knowledge syncs not sent'))
      }
      if (claimed.length < BATCH) return fired
    }
  }

  #em(): Em {
    return this.deps.orm.em.fork()
  }

  /** The job handler: see the module comment. Never throws for a sync that failed (it is recorded). */
  async run(data: SyncJob): Promise<void> {
    const [row] = await this.#em().execute<Record<string, unknown>[]>(
      `select ${TARGET_COLUMNS} from knowledge_documents
       where uuid = ? and sync_started_at = ?::timestamptz and status = 'ready' and source_type = 'url'`,
      [data.document_uuid, data.claimed_at],
    )
    if (!row) return
    const doc: SyncTarget = {
      ...(row as unknown as SyncTarget),
      id: Number(row.id),
      agentId: Number(row.agentId),
      userId: row.userId === null ? null : Number(row.userId),
      crawlRootId: row.crawlRootId === null ? null : Number(row.crawlRootId),
    }
    const crawl = doc.maxPages !== null && doc.maxDepth !== null ? { id: doc.id, url: doc.url, maxPages: doc.maxPages, maxDepth: doc.maxDepth } : null
    try {
      if (!data.crawl_only) await this.#sync(doc, data.claimed_at, crawl === null)
      if (!crawl) return
      const report = await this.#crawl.run(crawl, data.claimed_at)
      const syncError: KnowledgeSyncError | null = report.complete ? null : { code: 'crawl_incomplete', message: report.reason }
      await this.#em().execute(
        `update knowledge_documents set sync_error = ?::jsonb, sync_started_at = null, crawled_at = now() where id = ? and sync_started_at = ?::timestamptz`,
        [syncError && JSON.stringify(syncError), doc.id, data.claimed_at],
      )
    } catch (error) {
      const failure = error instanceof SyncFailure ? error : new SyncFailure('failed', describe(error))
      if (!(error instanceof SyncFailure)) this.deps.log.warn({ err: error, document: doc.uuid }, 'knowledge sync failed')
      const syncError: KnowledgeSyncError = { code: failure.code, message: failure.message }
      // A root whose page failed is not crawled this time; `crawled_at` still tells the sweep it was tried.
      await this.#em().execute(
        `update knowledge_documents set sync_error = ?::jsonb, sync_started_at = null, updated_at = now(),
           crawled_at = case when crawl_max_pages is null then crawled_at else now() end
         where id = ? and sync_started_at = ?::timestamptz`,
        [JSON.stringify(syncError), doc.id, data.claimed_at],
      )
    }
  }

  /** Syncs the document's page; `release` ends the claim with the last write (a crawl root keeps it for its crawl). */
  async #sync(doc: SyncTarget, claimedAt: string, release: boolean): Promise<void> {
    const releaseSql = release ? 'sync_started_at = null,' : ''
    const answer = await this.#fetch(doc)
    const page = answer.status === 304 ? null : answer
    const validators = page ? page.validators : { etag: doc.etag, lastModified: doc.lastModified }
    let extracted: Extract | null = null
    if (page) {
      try {
        extracted = await this.deps.extract(page.bytes, { contentType: page.contentType, plain: false })
      } catch (error) {
        if (error instanceof ExtractFailure) throw new SyncFailure('unreadable', error.message)
        throw error
      }
    }
    const contentHash = extracted ? extracted.contentHash : doc.contentHash
    if (!page || !extracted || contentHash === doc.contentHash) {
      // Nothing changed: the chunks, their embeddings and `updated_at` stay as they are.
      await this.#em().execute(
        `update knowledge_documents set last_synced_at = now(), sync_error = null, ${releaseSql} etag = ?, last_modified = ?
         where id = ? and sync_started_at = ?::timestamptz`,
        [validators.etag, validators.lastModified, doc.id, claimedAt],
      )
      return
    }
    if (extracted.chunks.length === 0) throw new SyncFailure('unreadable', 'The page contains no text')
    const [duplicate] = await this.#em().execute<{ name: string }[]>(
      `select name from knowledge_documents where agent_id = ? and content_hash = ? and id <> ? limit 1`,
      [doc.agentId, contentHash, doc.id],
    )
    if (duplicate) throw new SyncFailure('duplicate', `The page's new text is already trained as "${duplicate.name}"`)
    const embedding = await this.deps.embeddingFor(doc)
    let vectors: number[][] | null = null
    if (embedding) {
      try {
        vectors = await embedAll(embedding, extracted.chunks.map((chunk) => chunk.text), (tokens) => this.deps.countEmbedding(doc, embedding.key, tokens))
      } catch (error) {
        const status = (error as { statusCode?: unknown }).statusCode
        throw new SyncFailure('embedding_failed', typeof status === 'number' ? `The embedding model answered ${status}` : 'The embedding model could not be reached')
      }
    }
    const chunks = extracted.chunks
    const tokens = extracted.tokens
    await this.deps.orm.em.fork().transactional(async (em) => {
      // Locked with the claim checked: a document deleted, or claimed again after a lapse, is not written.
      const [locked] = await em.execute(`select id from knowledge_documents where id = ? and sync_started_at = ?::timestamptz and status = 'ready' for update`, [
        doc.id,
        claimedAt,
      ])
      if (!locked) return
      await em.execute(`delete from knowledge_chunks where document_id = ?`, [doc.id])
      await insertChunks(em, { id: doc.id, agentId: doc.agentId }, chunks, vectors, embedding?.key ?? null)
      await em.execute(
        `update knowledge_documents set content_hash = ?, size_bytes = ?, mime_type = ?, chunks_count = ?, tokens_count = ?, etag = ?, last_modified = ?,
           last_synced_at = now(), sync_error = null, ${releaseSql} updated_at = now()
         where id = ?`,
        [contentHash, page.bytes.byteLength, page.mimeType, chunks.length, tokens, validators.etag, validators.lastModified, doc.id],
      )
    })
  }

  /**
   * The page, asked for conditionally with the stored validators.
   * @throws SyncFailure for an answer of 4xx or 5xx, a 304 to a request without validators, a type
   *   that cannot be trained, or a request the guard refused or that failed.
   */
  async #fetch(doc: SyncTarget): Promise<{ status: 304 } | ({ status: 200 } & Omit<Page, 'status'>)> {
    let page: Page
    const since: PageValidators = { etag: doc.etag, lastModified: doc.lastModified }
    try {
      page = await fetchPage(doc.url, this.deps.config, { since, sameOrigin: doc.crawlRootId !== null })
    } catch (error) {
      if (error instanceof PageRefusedError) throw new SyncFailure('refused', error.message)
      if (error instanceof ToolHttpError) throw new SyncFailure('unreachable', error.message)
      throw error
    }
    // "Not modified" since nothing: a broken cache or server; the stored text cannot be vouched for.
    if (page.status === 304 && !isConditional(since)) throw new SyncFailure('http_error', 'The URL answered 304 (not modified) to a request that was not conditional')
    if (page.status === 304) return { status: 304 }
    if (page.status >= 300) throw new SyncFailure('http_error', `The URL answered ${page.status}`)
    if (!isTrainable(page.mimeType)) throw new SyncFailure('unreadable', `The URL answered ${page.mimeType}, which cannot be trained`)
    return { ...page, status: 200 }
  }
}

/** A short, secret-free description of an unexpected fault. */
function describe(error: unknown): string {
  // Never the driver's own text (docs/operations.md, "Database deadlines").
  if (databaseUnavailable(error)) return 'The database was unavailable'
  return error instanceof Error ? error.message.replace(/\s+/g, ' ').slice(0, 200) : 'Unknown error'
}
