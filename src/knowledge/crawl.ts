/**
 * Crawling a site from a URL document (docs/api/knowledge.md, "Crawling a site"). A crawl root is
 * a URL document trained with `crawl: {max_pages, max_depth}`; its crawl runs inside its sync job
 * (./sync.ts), under the sync's claim, after its first ingestion and at every sync of it.
 *
 * A crawl has two steps. The walk reads the site breadth-first from the root (depth 0): the
 * origin's robots.txt first, then its /sitemap.xml (entries count as linked from the root), then
 * each page at most once, through the outbound guard with no redirect off the origin, waiting
 * robots.txt's `Crawl-delay` (capped) between two page reads. It follows the links of HTML pages
 * that stay on the origin and under the root's folder (./crawl-links.ts), except those the page
 * marks nofollow, while the depth allows; a page whose robots meta says noindex is read for its
 * links but not kept. It stops after `max_pages` reads (the root's included), or when the crawl's
 * time or byte budget (`KNOWLEDGE_CRAWL_TIMEOUT_MS`, `KNOWLEDGE_CRAWL_MAX_BYTES`) is spent, a
 * crawl delay that would end past the deadline counting as spent time. The walk only reads: a
 * restart mid-walk loses nothing but time.
 *
 * The apply step then makes the root's pages match what the walk found: pages answering 404 or
 * 410 lose their document; after a walk that read everything it meant to, so do the root's
 * pages it no longer reached (unlinked, unlisted or forbidden by robots.txt). Pages already
 * documents of the root are synced (./sync.ts), failed ones ingested again, and new pages become
 * `queued` documents of the root, ingested as any URL document (./ingest.ts). New documents are
 * inserted with `on conflict do nothing` on the agent's one-document-per-URL index, fenced by the
 * root's claim, so a crawl run twice (after a restart) or racing a deletion of its root adds no
 * page twice and nothing under a root that is gone; deleting a root deletes its pages (a foreign
 * key that cascades) and their chunks.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { uuidv7 } from 'uuidv7'
import { ToolHttpError } from '../catalog/index.ts'
import type { Config } from '../platform/config.ts'
import type { Em, Orm } from '../platform/db.ts'
import { isTrainable } from './extract.ts'
import { fetchPage, PageRefusedError } from './page-fetch.ts'
import { ALLOW_ALL, crawlScope, inScope, linksOf, pageUrl, robotsRules, sitemapEntries, type CrawlScope, type RobotsRules } from './crawl-links.ts'

/** Links taken from one page at most: a page of endless links cannot flood the walk's memory. */
const LINKS_PER_PAGE = 1_000
/** Pages waiting to be read at most; links found past it are dropped (max_pages is at most 500). */
const QUEUE_MAX = 5_000
/** Nested sitemaps of a sitemap index read at most. */
const NESTED_SITEMAPS_MAX = 5

/** A crawl root, as its crawl reads it. */
export interface CrawlRoot {
  id: number
  url: string
  maxPages: number
  maxDepth: number
}

/** How a crawl went: complete, or cut short and why (the root's `sync_error` says so). */
export type CrawlReport = { complete: true } | { complete: false; reason: string }

/** What a crawl needs from the knowledge engine and the process. */
export interface CrawlDeps {
  orm: Orm
  config: Pick<Config, 'tools' | 'uploadMaxBytes' | 'knowledge'>
  /** Queues documents for ingestion (./ingest.ts). */
  queue: (uuids: string[]) => Promise<void>
  /** Claims and sends the sync of a `ready` URL document; false when it cannot be claimed now. */
  startSync: (id: number) => Promise<boolean>
}

/** What one walk found, by page URL (fragment-free). */
interface Walk {
  /** Readable pages other than the root and those marked noindex, in the order found, with their depth. */
  pages: Map<string, number>
  /** Pages that answered 404 or 410. */
  gone: Set<string>
  /** Pages read but not trainable now (a redirect off the origin, over the size cap, another status): an existing document of one stays. */
  kept: Set<string>
  /** Why the walk did not read all it meant to; null when it did. */
  cutShort: string | null
}

/** One read of the walk. */
type Read = { kind: 'page'; url: string; links: string[]; index: boolean } | { kind: 'gone' } | { kind: 'kept' } | { kind: 'failed'; reason: string }

/** The time and bytes one walk may still spend. */
interface Budget {
  deadline: number
  bytesLeft: number
}

/** See the module comment. */
export class SiteCrawl {
  constructor(private readonly deps: CrawlDeps) {}

  /**
   * Crawls from `root`, whose sync claim `claimedAt` is held, and applies what it found. Answers
   * whether the walk was complete (only a complete one deletes pages no longer reached).
   * @throws the database's error (the sync records it as the root's `sync_error`).
   */
  async run(root: CrawlRoot, claimedAt: string): Promise<CrawlReport> {
    const walk = await this.#walk(root)
    await this.#apply(root, walk, claimedAt)
    return walk.cutShort === null ? { complete: true } : { complete: false, reason: walk.cutShort }
  }

  #em(): Em {
    return this.deps.orm.em.fork()
  }

  /** Reads the site breadth-first from the root (see the module comment). */
  async #walk(root: CrawlRoot): Promise<Walk> {
    const walk: Walk = { pages: new Map(), gone: new Set(), kept: new Set(), cutShort: null }
    const scope = crawlScope(root.url)
    const budget: Budget = { deadline: Date.now() + this.deps.config.knowledge.crawlTimeoutMs, bytesLeft: this.deps.config.knowledge.crawlMaxBytes }
    const robots = await this.#robots(scope, budget)
    if (typeof robots === 'string') return { ...walk, cutShort: robots }
    const start = pageUrl(root.url, root.url) ?? root.url
    const listed = root.maxDepth >= 1 && root.maxPages > 1 ? await this.#sitemap(scope, budget) : []
    if (typeof listed === 'string') return { ...walk, cutShort: listed }
    const queue: { url: string; depth: number }[] = [{ url: start, depth: 0 }]
    const seen = new Set([start])
    const enqueue = (urls: string[], depth: number) => {
      for (const url of urls) {
        if (seen.size >= QUEUE_MAX || seen.has(url) || !inScope(scope, url)) continue
        seen.add(url)
        queue.push({ url, depth })
      }
    }
    let reads = 0
    /** When the last page read ended: the next one waits the crawl delay from there. */
    let lastRead: number | null = null
    for (let next = queue.shift(); next && reads < root.maxPages; next = queue.shift()) {
      const spent = this.#spent(budget)
      if (spent) {
        walk.cutShort = spent
        break
      }
      const { url, depth } = next
      if (robots.allows(url)) {
        if (lastRead !== null && !(await this.#pause(lastRead + robots.delayMs, budget))) {
          walk.cutShort = this.#timedOut()
          break
        }
        reads += 1
        const read = await this.#read(url, scope, budget, depth < root.maxDepth)
        lastRead = Date.now()
        // A redirect within the origin may land where robots.txt forbids: that page is not kept.
        if (read.kind === 'page' && !robots.allows(read.url)) walk.kept.add(url)
        else if (read.kind === 'page') {
          seen.add(read.url)
          if (depth > 0 && read.url !== start && read.index) walk.pages.set(read.url, depth)
          enqueue(read.links, depth + 1)
        } else if (read.kind === 'gone') walk.gone.add(url)
        else walk.kept.add(url)
        if (read.kind === 'failed') walk.cutShort ??= read.reason
      }
      // Listed pages come after the root's links: a sitemap adds what the links miss.
      if (depth === 0) enqueue(listed, 1)
    }
    return walk
  }

  /** Why the budget is spent, or null while it is not. */
  #spent(budget: Budget): string | null {
    if (Date.now() >= budget.deadline) return this.#timedOut()
    if (budget.bytesLeft <= 0) return `The crawl stopped after KNOWLEDGE_CRAWL_MAX_BYTES (${this.deps.config.knowledge.crawlMaxBytes} bytes); nothing was deleted`
    return null
  }

  /** The reason of a crawl out of time, one wording whether a read was cut off or a crawl delay would have ended too late. */
  #timedOut(): string {
    return `The crawl stopped after KNOWLEDGE_CRAWL_TIMEOUT_MS (${this.deps.config.knowledge.crawlTimeoutMs} ms); nothing was deleted`
  }

  /**
   * Waits until `until` (the crawl delay robots.txt asks for after the last read), unless that
   * is past the crawl's deadline: then answers false at once, as waiting would only end the crawl
   * later with the same pages.
   */
  async #pause(until: number, budget: Budget): Promise<boolean> {
    if (until >= budget.deadline) return false
    const wait = until - Date.now()
    if (wait > 0) await sleep(wait)
    return true
  }

  /** Aborts a read when the crawl's time is up: one slow page cannot stretch the crawl past its budget. */
  #deadline(budget: Budget): AbortSignal {
    return AbortSignal.timeout(Math.max(1, budget.deadline - Date.now()))
  }

  /**
   * Reads one page of the walk, with its links when `follow`. An HTML page is parsed even when its
   * links are not followed: its robots meta may say noindex.
   * @throws only what is not the page's fault (the database, a bug).
   */
  async #read(url: string, scope: CrawlScope, budget: Budget, follow: boolean): Promise<Read> {
    let page
    try {
      page = await fetchPage(url, this.deps.config, { sameOrigin: true, signal: this.#deadline(budget) })
    } catch (error) {
      if (error instanceof PageRefusedError) {
        // The guard stops reading at the cap, but the cap's worth may have come in.
        if (error.reason === 'too_large') budget.bytesLeft -= this.deps.config.uploadMaxBytes
        return { kind: 'kept' }
      }
      if (error instanceof ToolHttpError && error.reason === 'cancelled') return { kind: 'failed', reason: this.#spent(budget) ?? error.message }
      if (error instanceof ToolHttpError) return { kind: 'failed', reason: `A page could not be read (${error.message}); nothing was deleted` }
      throw error
    }
    budget.bytesLeft -= page.bytes.byteLength
    if (page.status === 404 || page.status === 410) return { kind: 'gone' }
    if (page.status >= 500 || page.status === 429) return { kind: 'failed', reason: `A page answered ${page.status}; nothing was deleted` }
    // A 304 to a request without validators, another 3xx, a 4xx: nothing to train, and not gone.
    if (page.status < 200 || page.status >= 300 || !isTrainable(page.mimeType) || !inScope(scope, page.url)) return { kind: 'kept' }
    const found = page.mimeType === 'text/html' ? await linksOf(page.bytes, page.contentType, page.url, LINKS_PER_PAGE) : { links: [], index: true }
    return { kind: 'page', url: pageUrl(page.url, page.url) ?? url, links: follow ? found.links : [], index: found.index }
  }

  /**
   * The origin's robots.txt rules; everything allowed when it has none (any 4xx, a redirect off
   * the origin, over the size cap); a reason to stop when it cannot be read now (5xx, 429, no
   * answer), as RFC 9309 asks: a crawler that cannot read the rules reads nothing.
   */
  async #robots(scope: CrawlScope, budget: Budget): Promise<RobotsRules | string> {
    const url = `${scope.origin}/robots.txt`
    const text = await this.#readText(url, budget)
    if (text === 'failed') return 'robots.txt could not be read; no page was read and nothing was deleted'
    return text === null ? ALLOW_ALL : robotsRules(url, text)
  }

  /**
   * The pages the origin's /sitemap.xml lists under the root's folder (and those of the sitemaps
   * a sitemap index names, on the origin, at most {@link NESTED_SITEMAPS_MAX}); none when there is
   * no sitemap; a reason to stop when it cannot be read now (its pages would seem unlisted).
   */
  async #sitemap(scope: CrawlScope, budget: Budget): Promise<string[] | string> {
    const reason = 'The sitemap could not be read; nothing was deleted'
    const first = await this.#readText(`${scope.origin}/sitemap.xml`, budget)
    if (first === 'failed') return reason
    if (first === null) return []
    const top = sitemapEntries(first)
    const pages = [...top.pages]
    const nested = top.sitemaps.map((loc) => pageUrl(loc, scope.origin)).filter((loc): loc is string => loc !== null && new URL(loc).origin === scope.origin)
    for (const loc of nested.slice(0, NESTED_SITEMAPS_MAX)) {
      const text = await this.#readText(loc, budget)
      if (text === 'failed') return reason
      if (text !== null) pages.push(...sitemapEntries(text).pages)
    }
    return pages.map((loc) => pageUrl(loc, scope.origin)).filter((loc): loc is string => loc !== null && inScope(scope, loc))
  }

  /** A text resource of the origin: its text on a 2xx, null when there is none for good, `failed` for a fault that may pass. */
  async #readText(url: string, budget: Budget): Promise<string | null | 'failed'> {
    try {
      const answer = await fetchPage(url, this.deps.config, { sameOrigin: true, signal: this.#deadline(budget) })
      budget.bytesLeft -= answer.bytes.byteLength
      if (answer.status >= 500 || answer.status === 429) return 'failed'
      return answer.status >= 200 && answer.status < 300 ? Buffer.from(answer.bytes).toString('utf8') : null
    } catch (error) {
      if (error instanceof PageRefusedError) return null
      if (error instanceof ToolHttpError) return 'failed'
      throw error
    }
  }

  /** Makes the root's pages match the walk (see the module comment); writes nothing once the claim is not the root's. */
  async #apply(root: CrawlRoot, walk: Walk, claimedAt: string): Promise<void> {
    const em = this.#em()
    const [held] = await em.execute(`select 1 as held from knowledge_documents where id = ? and sync_started_at = ?::timestamptz`, [root.id, claimedAt])
    if (!held) return
    const existing = await em.execute<{ id: number; url: string; status: string }[]>(
      `select id::float8 as id, url, status from knowledge_documents where crawl_root_id = ? order by id`,
      [root.id],
    )
    const reached = (url: string) => walk.pages.has(url) || walk.kept.has(url)
    const doomed = existing.filter((doc) => walk.gone.has(doc.url) || (walk.cutShort === null && !reached(doc.url)))
    if (doomed.length) await em.execute(`delete from knowledge_documents where crawl_root_id = ? and id in (?)`, [root.id, doomed.map((doc) => Number(doc.id))])
    const doomedIds = new Set(doomed.map((doc) => doc.id))
    const kept = existing.filter((doc) => !doomedIds.has(doc.id))
    for (const doc of kept) {
      // A sync of it already running, or one claimed meanwhile, is as good as a new one.
      if (doc.status === 'ready' && reached(doc.url)) await this.deps.startSync(Number(doc.id))
    }
    const retried = await this.#retryFailed(em, kept.filter((doc) => doc.status === 'failed' && walk.pages.has(doc.url)).map((doc) => Number(doc.id)))
    const known = new Set(existing.map((doc) => doc.url))
    const room = Math.max(0, root.maxPages - 1 - kept.length)
    const fresh = [...walk.pages.keys()].filter((url) => !known.has(url)).slice(0, room)
    const added = fresh.length ? await this.#insertPages(em, root, fresh, claimedAt) : []
    await this.deps.queue([...retried, ...added])
  }

  /** Failed pages the walk read again go back to `queued` with their attempts reset; answers their uuids. */
  async #retryFailed(em: Em, ids: number[]): Promise<string[]> {
    if (!ids.length) return []
    const rows = await em.execute<{ uuid: string }[]>(
      `update knowledge_documents set status = 'queued', error = null, attempts = 0, updated_at = now() where id in (?) and status = 'failed' returning uuid`,
      [ids],
    )
    return rows.map((row) => row.uuid)
  }

  /**
   * Inserts `urls` as `queued` documents of the root, owned as the root is, in one statement
   * fenced by the root's claim; a URL the agent has as a document already is left to it. Answers
   * the new documents' uuids.
   */
  async #insertPages(em: Em, root: CrawlRoot, urls: string[], claimedAt: string): Promise<string[]> {
    const rows = await em.execute<{ uuid: string }[]>(
      `insert into knowledge_documents (uuid, agent_id, user_id, workspace_id, name, source_type, url, mime_type, size_bytes, refresh, status, crawl_root_id, created_at, updated_at)
       select x.uuid, r.agent_id, r.user_id, r.workspace_id, left(x.url, 255), 'url', x.url, 'text/html', 0, 'never', 'queued', r.id, now(), now()
       from knowledge_documents r cross join jsonb_to_recordset(?::jsonb) as x(uuid uuid, url text, n int)
       where r.id = ? and r.sync_started_at = ?::timestamptz and r.status = 'ready'
       order by x.n
       on conflict ("agent_id", "url") where "source_type" = 'url' do nothing
       returning uuid`,
      [JSON.stringify(urls.map((url, n) => ({ uuid: uuidv7(), url, n }))), root.id, claimedAt],
    )
    return rows.map((row) => row.uuid)
  }
}
