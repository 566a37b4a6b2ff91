/**
 * Crawling a site from a URL training source (docs/api/knowledge.md, "Crawling a site"), over
 * real HTTP against local sites (node:http on 127.0.0.1, one per test, so each has its own
 * robots.txt and sitemap.xml): scope, depth, robots.txt, the sitemap, redirects off the origin,
 * pages over the size cap or answering 304 without validators; re-crawls by a sync (asked for and
 * due) that add and delete pages; a link farm bounded by max_pages, max_depth and the byte budget;
 * a root deleted mid-crawl; a crawl run again (the sweep after a lost start) adding nothing twice;
 * robots.txt's Crawl-delay, rel="nofollow" and the robots meta; a service with a short
 * KNOWLEDGE_CRAWL_TIMEOUT_MS (a slow site, a crawl delay past the deadline); and the validation
 * of `crawl`. The pure parts (robots.txt rules, the links of a page) are tested on their own too. No new operation: the access rules are those of train and sync
 * (test/knowledge.test.ts, test/knowledge-sync.test.ts). Without a provider key, retrieval is full-text.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CRAWL_DELAY_MAX_MS, linksOf, robotsRules } from '../src/knowledge/crawl-links.ts'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { makeAgent } from './helpers/agents.ts'
import { expectErrorBody, expectInvalid, UUID } from './helpers/expect.ts'
import { upload } from './helpers/media.ts'
import { until } from './helpers/processes.ts'

/**
 * A page's answer: a string is an HTML page; else a status, headers and body, held until the test
 * releases it (`hold`) or sent `delay` ms late (a slow site).
 */
type Route = string | { status?: number; type?: string; body?: string; headers?: Record<string, string>; hold?: boolean; delay?: number }

/** A local site: its routes (changed by the tests as they go) and the requests it saw, by path. */
interface Site {
  url: string
  routes: Map<string, Route>
  hits: (path: string) => number
  /** Every request, in the order received, with when it came (ms since the epoch). */
  log: { path: string; at: number }[]
  /** Answers of held requests, waiting for the test. */
  held: (() => void)[]
  close: () => Promise<void>
}

/** Per-page cap and per-crawl byte budget of this file's server (small, so the tests can pass them). */
const UPLOAD_MAX_BYTES = 16_384
const CRAWL_MAX_BYTES = 50_000

/** An HTML page with a heading, a sentence of its own and links; `head` goes in its `<head>`. */
const page = (title: string, links: string[] = [], head = '') =>
  `<html><head><title>${title}</title>${head}</head><body><h1>${title}</h1><p>This page is about ${title}, and only ${title}.</p>` +
  links.map((href) => `<a href="${href}">${href}</a>`).join(' ') +
  '</body></html>'

/** Starts a site answering `routes`, else what `generated` makes of a path (a site without end), else 404. */
async function startSite(routes: Record<string, Route>, generated: (path: string) => Route | undefined = () => undefined): Promise<Site> {
  const hits = new Map<string, number>()
  const log: Site['log'] = []
  const held: (() => void)[] = []
  const table = new Map(Object.entries(routes))
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? '/'
    hits.set(path, (hits.get(path) ?? 0) + 1)
    log.push({ path, at: Date.now() })
    const route = table.get(path) ?? generated(path)
    if (route === undefined) return void res.writeHead(404, { 'content-type': 'text/plain' }).end('missing')
    const answer = typeof route === 'string' ? { body: route } : route
    const send = () => {
      res.writeHead(answer.status ?? 200, { 'content-type': answer.type ?? 'text/html; charset=utf-8', ...answer.headers })
      res.end(answer.status === 304 ? undefined : (answer.body ?? ''))
    }
    if (answer.hold) held.push(send)
    else if (answer.delay) {
      // A reader that gives up (the crawl's deadline) closes the connection: nothing is sent then.
      const timer = setTimeout(send, answer.delay)
      res.on('close', () => clearTimeout(timer))
    } else send()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  return {
    url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`,
    routes: table,
    hits: (path) => hits.get(path) ?? 0,
    log,
    held,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}

/**
 * The crawl's own reads of `paths`, in order: the first request of each after the site's first
 * robots.txt request (a crawl reads robots.txt first; the root's ingestion reads the root before
 * it, and the ingestion of the pages found reads them only after the walk).
 */
function crawlReads(s: Site, paths: string[]): Site['log'] {
  const from = s.log.findIndex((entry) => entry.path === '/robots.txt')
  expect(from).toBeGreaterThanOrEqual(0)
  const firsts = new Map<string, Site['log'][number]>()
  for (const entry of s.log.slice(from)) if (paths.includes(entry.path) && !firsts.has(entry.path)) firsts.set(entry.path, entry)
  return [...firsts.values()]
}

interface Doc {
  uuid: string
  url: string
  status: string
  source_type: string
  crawl_root_uuid: string | null
  crawl: { max_pages: number; max_depth: number } | null
  last_synced_at: string | null
  sync_error: { code: string; message: string } | null
}

/**
 * What the tests of a service do, against the service and user the getters answer once started
 * (each describe block starts its own), with the local sites they start kept in `sites`.
 */
function crawlHelpers(app: () => TestApp, user: () => TestUser, sites: Site[]) {
  const site = async (routes: Record<string, Route>, generated?: (path: string) => Route | undefined) => {
    const started = await startSite(routes, generated)
    sites.push(started)
    return started
  }
  const train = (agentUuid: string, sources: unknown) => app().http('POST', `/api/v1/agents/${agentUuid}/train`, { token: user().token, body: { sources } })
  const sync = (uuid: string) => app().http('POST', `/api/v1/knowledge/${uuid}/sync`, { token: user().token })
  /** The agent's documents, by URL. */
  const documents = async (agentUuid: string): Promise<Map<string, Doc>> => {
    const res = await app().http('GET', `/api/v1/agents/${agentUuid}/knowledge?per_page=100`, { token: user().token })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    return new Map((res.body.data as Doc[]).map((doc) => [doc.url, doc]))
  }
  /** Waits until a crawl of the root ended after `since` and every document of the agent settled (ingested, no sync running). */
  const crawled = async (agentUuid: string, rootUuid: string, since = new Date(0)) => {
    await until(
      () => app().sql('select crawled_at, sync_started_at from knowledge_documents where uuid = ?', [rootUuid]),
      ([row]) => row !== undefined && row.crawled_at !== null && new Date(String(row.crawled_at)) > since && row.sync_started_at === null,
      30_000,
    )
    await until(
      () =>
        app().sql(
          `select count(*)::int as busy from knowledge_documents d join agents a on a.id = d.agent_id
           where a.uuid = ? and (d.status in ('queued', 'processing') or d.sync_started_at is not null)`,
          [agentUuid],
        ),
      ([row]) => row?.busy === 0,
      30_000,
    )
    return documents(agentUuid)
  }
  /** Trains `url` with `crawl` on a new agent and waits for its first crawl. */
  const crawlSite = async (url: string, crawl: unknown, extra: Record<string, unknown> = {}) => {
    const agent = await makeAgent(app(), user())
    const res = await train(agent.uuid, [{ type: 'url', url, crawl, ...extra }])
    expect(res.status, JSON.stringify(res.body)).toBe(202)
    const root: Doc = res.body.data[0]
    return { agent, root, docs: await crawled(agent.uuid, root.uuid) }
  }
  const crawledAt = async (uuid: string) => new Date(String((await app().sql('select crawled_at from knowledge_documents where uuid = ?', [uuid]))[0].crawled_at))
  const chunksOf = async (uuids: string[]) =>
    Number((await app().sql('select count(*)::int as n from knowledge_chunks c join knowledge_documents d on d.id = c.document_id where d.uuid in (?)', [uuids]))[0].n)
  return { site, train, sync, documents, crawled, crawlSite, crawledAt, chunksOf }
}

describe('knowledge crawl (POST /api/v1/agents/{agent_uuid}/train with {type: "url", crawl})', () => {
  let t: TestApp
  let alice: TestUser
  const sites: Site[] = []

  beforeAll(async () => {
    t = await createTestApp({ TOOL_ALLOW_PRIVATE_NETWORK: 'true', UPLOAD_MAX_BYTES: String(UPLOAD_MAX_BYTES), KNOWLEDGE_CRAWL_MAX_BYTES: String(CRAWL_MAX_BYTES) })
    alice = await t.make.user({ name: 'Alice Crawler' })
  })
  afterAll(async () => {
    await t?.close()
    for (const started of sites) await started.close()
  })

  const { site, train, sync, crawled, crawlSite, crawledAt, chunksOf } = crawlHelpers(
    () => t,
    () => alice,
    sites,
  )

  it('makes one document per page within the origin, the path and the depth, honouring robots.txt and the sitemap, skipping what cannot be trained', async () => {
    const other = await site({ '/landing.html': page('Elsewhere') })
    const s = await site({})
    const routes: Record<string, Route> = {
      '/robots.txt': { type: 'text/plain', body: 'User-agent: *\nDisallow: /docs/private/\n' },
      '/sitemap.xml': {
        type: 'application/xml',
        body: `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
          <url><loc>${s.url}/docs/listed.html</loc></url><url><loc>${s.url}/outside/listed.html</loc></url></urlset>`,
      },
      '/docs/': page('Docs home', [
        'a.html#intro', 'a.html', 'b.html', 'private/secret.html', '/outside/x.html', `${other.url}/landing.html`,
        'away.html', 'big.html', 'stale.html', 'missing.html', 'logo.png',
      ]),
      '/docs/a.html': page('Anchovies'),
      '/docs/b.html': page('Barnacles', ['c.html']),
      '/docs/c.html': page('Cormorants', ['d.html']),
      '/docs/d.html': page('Dunlins'),
      '/docs/listed.html': page('Limpets'),
      '/docs/private/secret.html': page('Secrets'),
      '/outside/x.html': page('Outside'),
      '/outside/listed.html': page('Outside listed'),
      '/docs/away.html': { status: 302, headers: { location: `${other.url}/landing.html` } },
      '/docs/big.html': page('Big', ['huge.html']).replace('</body>', `<p>${'whale '.repeat(4_000)}</p></body>`),
      '/docs/stale.html': { status: 304 },
      '/docs/logo.png': { type: 'image/png', body: 'PNG' },
    }
    for (const [path, route] of Object.entries(routes)) s.routes.set(path, route)
    const { agent, root, docs } = await crawlSite(`${s.url}/docs/`, {})
    expect(root).toMatchObject({ status: 'queued', source_type: 'url', crawl_root_uuid: null, crawl: { max_pages: 50, max_depth: 2 } })
    expect([...docs.keys()].sort()).toEqual(['/docs/', '/docs/a.html', '/docs/b.html', '/docs/c.html', '/docs/listed.html'].map((path) => `${s.url}${path}`))
    for (const [url, doc] of docs) {
      expect(doc.uuid).toMatch(UUID)
      if (url === `${s.url}/docs/`) expect(doc).toMatchObject({ uuid: root.uuid, status: 'ready', crawl_root_uuid: null, crawl: { max_pages: 50, max_depth: 2 }, sync_error: null })
      else expect(doc).toMatchObject({ status: 'ready', source_type: 'url', crawl_root_uuid: root.uuid, crawl: null })
    }
    // Never requested: forbidden by robots.txt, deeper than max_depth, outside the path, another origin (linked or redirected to).
    for (const path of ['/docs/private/secret.html', '/docs/d.html', '/outside/x.html', '/outside/listed.html', '/docs/huge.html']) expect(s.hits(path), path).toBe(0)
    expect(other.hits('/landing.html')).toBe(0)
    expect(s.hits('/robots.txt')).toBeGreaterThan(0)
    expect(s.hits('/sitemap.xml')).toBe(1)
    // Read once by the crawl, then skipped: a redirect off the origin, over the size cap, 304 without validators, 404, not trainable.
    for (const path of ['/docs/away.html', '/docs/big.html', '/docs/stale.html', '/docs/missing.html', '/docs/logo.png']) expect(s.hits(path), path).toBe(1)
    const hits = await t.http('POST', `/api/v1/agents/${agent.uuid}/knowledge/search`, { token: alice.token, body: { query: 'Cormorants' } })
    expect(hits.body.data[0]).toMatchObject({ document_uuid: docs.get(`${s.url}/docs/c.html`)!.uuid })
  })

  it('a sync of the root crawls again: new pages are added, pages gone (410, unlinked) are deleted with their chunks, the others synced', async () => {
    const s = await site({
      '/kb/': page('Knowledge base', ['a.html', 'b.html', 's.html']),
      '/kb/a.html': page('Alpacas'),
      '/kb/b.html': page('Bison', ['c.html']),
      '/kb/c.html': page('Caribou'),
      '/kb/s.html': page('Stoats'),
    })
    const { agent, root, docs } = await crawlSite(`${s.url}/kb/`, { max_depth: 3 }, { refresh: 'daily' })
    expect(docs.size).toBe(5)
    const before = Object.fromEntries([...docs].map(([url, doc]) => [url.slice(s.url.length), doc]))
    expect(await chunksOf([before['/kb/a.html'].uuid, before['/kb/c.html'].uuid])).toBe(2)

    s.routes.set('/kb/', page('Knowledge base', ['a.html', 'b.html', 's.html', 'e.html']))
    s.routes.set('/kb/a.html', { status: 410 })
    s.routes.set('/kb/b.html', page('Bison'))
    s.routes.set('/kb/e.html', page('Elks'))
    // Answers "not modified" though nothing was asked conditionally: kept, and its own sync says why.
    s.routes.set('/kb/s.html', { status: 304 })
    const since = await crawledAt(root.uuid)
    const res = await sync(root.uuid)
    expect(res.status, JSON.stringify(res.body)).toBe(202)
    const after = await crawled(agent.uuid, root.uuid, since)
    expect([...after.keys()].sort()).toEqual(['/kb/', '/kb/b.html', '/kb/e.html', '/kb/s.html'].map((path) => `${s.url}${path}`))
    expect(await chunksOf([before['/kb/a.html'].uuid, before['/kb/c.html'].uuid])).toBe(0)
    const b = after.get(`${s.url}/kb/b.html`)!
    expect(b.uuid).toBe(before['/kb/b.html'].uuid)
    expect(Date.parse(b.last_synced_at!)).toBeGreaterThan(Date.parse(before['/kb/b.html'].last_synced_at!))
    expect(after.get(`${s.url}/kb/e.html`)).toMatchObject({ status: 'ready', crawl_root_uuid: root.uuid })
    expect(after.get(`${s.url}/kb/s.html`)).toMatchObject({
      uuid: before['/kb/s.html'].uuid,
      status: 'ready',
      sync_error: { code: 'http_error', message: 'The URL answered 304 (not modified) to a request that was not conditional' },
    })
    expect(after.get(`${s.url}/kb/`)!.sync_error).toBeNull()

    // A page that fails now makes the crawl incomplete: nothing is deleted, and the root says why.
    s.routes.set('/kb/', page('Knowledge base', ['b.html']))
    s.routes.set('/kb/b.html', { status: 503 })
    const since2 = await crawledAt(root.uuid)
    expect((await sync(root.uuid)).status).toBe(202)
    const incomplete = await crawled(agent.uuid, root.uuid, since2)
    expect(incomplete.size).toBe(4)
    expect(incomplete.get(`${s.url}/kb/`)!.sync_error).toEqual({ code: 'crawl_incomplete', message: 'A page answered 503; nothing was deleted' })

    // Mended, the due sync (refresh: daily) crawls again and removes what is no longer linked.
    s.routes.set('/kb/b.html', page('Bison'))
    const since3 = await crawledAt(root.uuid)
    await t.sql(`update knowledge_documents set next_sync_at = now() - interval '1 second' where uuid = ?`, [root.uuid])
    await t.runtime.scheduler.fireDue()
    const mended = await crawled(agent.uuid, root.uuid, since3)
    expect([...mended.keys()].sort()).toEqual(['/kb/', '/kb/b.html'].map((path) => `${s.url}${path}`))
    expect(mended.get(`${s.url}/kb/`)!.sync_error).toBeNull()
  })

  it('a link farm is bounded by max_pages (the root counted), max_depth and the byte budget', async () => {
    // Every plot links to two new ones, for ever; `fat` words of padding each.
    const farm = (fat: number) => (path: string): Route | undefined => {
      const n = /^\/farm\/p(\d+)\.html$/.exec(path)?.[1]
      if (n === undefined) return undefined
      const links = [`p${2 * Number(n) + 1}.html`, `p${2 * Number(n) + 2}.html`]
      return page(`Farm ${fat} plot ${n}`, links).replace('</body>', `<p>${'corn '.repeat(fat)}</p></body>`)
    }
    const s = await site({}, farm(0))
    const byPages = await crawlSite(`${s.url}/farm/p0.html`, { max_pages: 5, max_depth: 5 })
    expect(byPages.docs.size).toBe(5)
    expect([...byPages.docs.values()].filter((doc) => doc.crawl_root_uuid === byPages.root.uuid)).toHaveLength(4)
    expect(s.hits('/farm/p5.html')).toBe(0)

    const byDepth = await crawlSite(`${s.url}/farm/p0.html`, { max_pages: 500, max_depth: 1 })
    expect([...byDepth.docs.keys()].sort()).toEqual(['p0', 'p1', 'p2'].map((name) => `${s.url}/farm/${name}.html`))

    const fat = await site({}, farm(1_800))
    const byBytes = await crawlSite(`${fat.url}/farm/p0.html`, { max_pages: 500, max_depth: 5 })
    expect(byBytes.docs.size).toBeGreaterThan(1)
    expect(byBytes.docs.size).toBeLessThan(10)
    expect(byBytes.docs.get(`${fat.url}/farm/p0.html`)!.sync_error).toEqual({
      code: 'crawl_incomplete',
      message: `The crawl stopped after KNOWLEDGE_CRAWL_MAX_BYTES (${CRAWL_MAX_BYTES} bytes); nothing was deleted`,
    })
  })

  it('deleting the root mid-crawl deletes its pages and chunks at once, and the crawl adds nothing after', async () => {
    const s = await site({ '/wiki/': page('Wiki', ['one.html', 'two.html']), '/wiki/one.html': page('Ospreys'), '/wiki/two.html': page('Terns') })
    const { agent, root, docs } = await crawlSite(`${s.url}/wiki/`, { max_depth: 1 })
    expect(docs.size).toBe(3)
    s.routes.set('/wiki/', page('Wiki', ['one.html', 'two.html', 'three.html']))
    s.routes.set('/wiki/three.html', { body: page('Puffins'), hold: true })
    expect((await sync(root.uuid)).status).toBe(202)
    // A second sync while the crawl runs: its claim is held.
    await until(async () => s.held.length, (held) => held > 0, 15_000)
    expectErrorBody(await sync(root.uuid), 409, 'CONFLICT')
    expect((await t.http('DELETE', `/api/v1/knowledge/${root.uuid}`, { token: alice.token })).status).toBe(204)
    const count = async () => (await t.sql('select count(*)::int as n from knowledge_documents d join agents a on a.id = d.agent_id where a.uuid = ?', [agent.uuid]))[0].n
    expect(await count()).toBe(0)
    for (const release of s.held.splice(0)) release()
    await until(
      () => t.sql(`select count(*)::int as n from pgboss.job where name = 'knowledge.sync' and data->>'document_uuid' = ? and state in ('created', 'retry', 'active')`, [root.uuid]),
      ([row]) => row?.n === 0,
      15_000,
    )
    expect(await count()).toBe(0)
    const [{ n }] = await t.sql('select count(*)::int as n from knowledge_chunks c join agents a on a.id = c.agent_id where a.uuid = ?', [agent.uuid])
    expect(n).toBe(0)
  })

  it('adds nothing twice: a crawl run again (its start lost, restarted by the sweep) syncs the same documents; a page trained on its own stays its own', async () => {
    const s = await site({ '/shop/': page('Shop', ['tea.html', 'jam.html']), '/shop/tea.html': page('Teapots'), '/shop/jam.html': page('Jam jars') })
    const agent = await makeAgent(t, alice)
    const own = await train(agent.uuid, [{ type: 'url', url: `${s.url}/shop/jam.html` }])
    expect(own.status).toBe(202)
    const res = await train(agent.uuid, [{ type: 'url', url: `${s.url}/shop/`, crawl: { max_pages: 10 } }])
    const root: Doc = res.body.data[0]
    const first = await crawled(agent.uuid, root.uuid)
    expect([...first.keys()].sort()).toEqual(['/shop/', '/shop/jam.html', '/shop/tea.html'].map((path) => `${s.url}${path}`))
    expect(first.get(`${s.url}/shop/jam.html`)).toMatchObject({ uuid: own.body.data[0].uuid, crawl_root_uuid: null })
    expect(first.get(`${s.url}/shop/tea.html`)!.crawl_root_uuid).toBe(root.uuid)

    // As if the process died before the first crawl was sent: the sweep starts it, and it adds nothing new.
    await t.sql(`update knowledge_documents set crawled_at = null, updated_at = now() - interval '1 minute' where uuid = ?`, [root.uuid])
    await t.runtime.knowledge.sweep()
    const again = await crawled(agent.uuid, root.uuid)
    expect([...again.values()].map((doc) => doc.uuid).sort()).toEqual([...first.values()].map((doc) => doc.uuid).sort())
    // Training the root again answers it.
    const twice = await train(agent.uuid, [{ type: 'url', url: `${s.url}/shop/`, crawl: { max_pages: 3 } }])
    expect(twice.body.data[0]).toMatchObject({ uuid: root.uuid, crawl: { max_pages: 10, max_depth: 2 } })
    const [{ n }] = await t.sql('select count(*)::int as n from knowledge_documents d join agents a on a.id = d.agent_id where a.uuid = ?', [agent.uuid])
    expect(n).toBe(3)
  })

  it("waits robots.txt's Crawl-delay of this service's group between two page reads", async () => {
    const s = await site({
      // The `*` group's delay (capped at 10 s) is not this service's: its own group's 1 s applies.
      '/robots.txt': { type: 'text/plain', body: 'User-agent: *\nCrawl-delay: 30\n\nUser-agent: Agent-Workspace-Crawler\nCrawl-delay: 1\nDisallow: /paced/private.html\n' },
      '/paced/': page('Paced home', ['a.html', 'private.html', 'b.html', 'missing.html', 'c.html']),
      '/paced/a.html': page('Avocets'),
      '/paced/b.html': page('Bitterns'),
      '/paced/c.html': page('Curlews'),
      '/paced/private.html': page('Private'),
    })
    const { docs } = await crawlSite(`${s.url}/paced/`, { max_depth: 1 })
    expect([...docs.keys()].sort()).toEqual(['/paced/', '/paced/a.html', '/paced/b.html', '/paced/c.html'].map((path) => `${s.url}${path}`))
    expect(s.hits('/paced/private.html')).toBe(0)
    const reads = crawlReads(s, ['/paced/', '/paced/a.html', '/paced/b.html', '/paced/missing.html', '/paced/c.html'])
    expect(reads.map((read) => read.path)).toEqual(['/paced/', '/paced/a.html', '/paced/b.html', '/paced/missing.html', '/paced/c.html'])
    for (let n = 1; n < reads.length; n++) {
      const gap = reads[n].at - reads[n - 1].at
      expect(gap, `${reads[n - 1].path} to ${reads[n].path}`).toBeGreaterThanOrEqual(950)
      expect(gap, `${reads[n - 1].path} to ${reads[n].path}`).toBeLessThan(CRAWL_DELAY_MAX_MS - 2_000)
    }
  })

  it('follows no link marked rel="nofollow", no link of a page whose robots meta says nofollow, and keeps no page whose robots meta says noindex', async () => {
    const s = await site({
      '/blog/': page('Blog', ['a.html', 'hidden.html', 'closed.html', 'none.html', 'other-bot.html']).replace(
        '</body>',
        '<a rel="External NOFOLLOW" href="skip.html">skip</a><a rel="nofollow" href="twice.html">twice</a><area rel="noopener nofollow" href="map.html"></body>',
      ),
      // Linked with nofollow from the root, but followed from here.
      '/blog/a.html': page('Aardvarks', ['twice.html']),
      '/blog/twice.html': page('Tapirs'),
      '/blog/skip.html': page('Skipped'),
      '/blog/map.html': page('Mapped'),
      '/blog/hidden.html': page('Hidden', ['under-hidden.html'], '<meta name="ROBOTS" content="NoIndex">'),
      '/blog/under-hidden.html': page('Hyraxes'),
      '/blog/closed.html': page('Closed', ['behind-closed.html'], '<meta name="agent-workspace-crawler" content="index, NOFOLLOW">'),
      '/blog/behind-closed.html': page('Behind closed'),
      '/blog/none.html': page('None', ['behind-none.html'], '<meta name="robots" content="none">'),
      '/blog/behind-none.html': page('Behind none'),
      // Said to another crawler: not this one's concern.
      '/blog/other-bot.html': page('Otters', [], '<meta name="googlebot" content="noindex, nofollow">'),
    })
    const { agent, root, docs } = await crawlSite(`${s.url}/blog/`, {})
    expect([...docs.keys()].sort()).toEqual(
      ['/blog/', '/blog/a.html', '/blog/closed.html', '/blog/other-bot.html', '/blog/twice.html', '/blog/under-hidden.html'].map((path) => `${s.url}${path}`),
    )
    for (const path of ['/blog/skip.html', '/blog/map.html', '/blog/behind-closed.html', '/blog/behind-none.html']) expect(s.hits(path), path).toBe(0)
    // Read by the crawl for their links, and by nothing else: they have no document to ingest.
    for (const path of ['/blog/hidden.html', '/blog/none.html']) expect(s.hits(path), path).toBe(1)

    // A page that says noindex now loses its document after a complete crawl; its links still count.
    // The root, trained by name, stays whatever its meta says.
    s.routes.set('/blog/', page('Blog', ['a.html', 'hidden.html', 'closed.html', 'none.html', 'other-bot.html'], '<meta name="robots" content="noindex">'))
    s.routes.set('/blog/a.html', page('Aardvarks', ['twice.html'], '<meta name="robots" content="noindex">'))
    const since = await crawledAt(root.uuid)
    expect((await sync(root.uuid)).status).toBe(202)
    const after = await crawled(agent.uuid, root.uuid, since)
    expect([...after.keys()].sort()).toEqual(
      ['/blog/', '/blog/closed.html', '/blog/other-bot.html', '/blog/twice.html', '/blog/under-hidden.html'].map((path) => `${s.url}${path}`),
    )
    expect(after.get(`${s.url}/blog/`)).toMatchObject({ uuid: root.uuid, status: 'ready', sync_error: null })
  })

  it('400 naming the field: crawl values out of range or of the wrong type, unknown crawl fields, crawl on a text or file source', async () => {
    const agent = await makeAgent(t, alice)
    const url = 'http://127.0.0.1:9/docs/'
    for (const max_pages of [0, 501, 1.5, 'many', null]) expectInvalid(await train(agent.uuid, [{ type: 'url', url, crawl: { max_pages } }]), 'sources.0.crawl.max_pages')
    for (const max_depth of [-1, 6, '2']) expectInvalid(await train(agent.uuid, [{ type: 'url', url, crawl: { max_depth } }]), 'sources.0.crawl.max_depth')
    expectInvalid(await train(agent.uuid, [{ type: 'url', url, crawl: { max_pages: 5, follow: 'all' } }]), 'sources.0.crawl')
    expectInvalid(await train(agent.uuid, [{ type: 'url', url, crawl: true }]), 'sources.0.crawl')
    expectInvalid(await train(agent.uuid, [{ type: 'text', name: 'x', text: 'x' }, { type: 'text', name: 'Notes', text: 'Otters', crawl: {} }]), 'sources.1.crawl')
    const file = await upload(t, { token: alice.token, files: [{ bytes: 'Seals nap on the rocks.', filename: 'seals.txt', type: 'text/plain' }] })
    expectInvalid(await train(agent.uuid, [{ type: 'file', key: file.body.data.key, crawl: { max_pages: 2 } }]), 'sources.0.crawl')
    const [{ n }] = await t.sql('select count(*)::int as n from knowledge_documents d join agents a on a.id = d.agent_id where a.uuid = ?', [agent.uuid])
    expect(n).toBe(0)
  })
})

describe('knowledge crawl with a short KNOWLEDGE_CRAWL_TIMEOUT_MS', () => {
  const TIMEOUT_MS = 3_000
  const timedOut = { code: 'crawl_incomplete', message: `The crawl stopped after KNOWLEDGE_CRAWL_TIMEOUT_MS (${TIMEOUT_MS} ms); nothing was deleted` }
  let t: TestApp
  let bob: TestUser
  const sites: Site[] = []

  beforeAll(async () => {
    t = await createTestApp({ TOOL_ALLOW_PRIVATE_NETWORK: 'true', KNOWLEDGE_CRAWL_TIMEOUT_MS: String(TIMEOUT_MS) })
    bob = await t.make.user({ name: 'Bob Budget' })
  })
  afterAll(async () => {
    await t?.close()
    for (const started of sites) await started.close()
  })

  const { site, sync, crawled, crawlSite, crawledAt } = crawlHelpers(
    () => t,
    () => bob,
    sites,
  )

  it('a site that answers slowly: the crawl stops at the deadline, keeps the pages read so far and deletes nothing', async () => {
    const s = await site({
      '/slow/': page('Slow site', ['p1.html', 'p2.html']),
      '/slow/p1.html': page('Pelicans'),
      '/slow/p2.html': page('Plovers'),
    })
    const { agent, root, docs } = await crawlSite(`${s.url}/slow/`, { max_depth: 1 })
    expect(docs.size).toBe(3)
    expect(docs.get(`${s.url}/slow/`)!.sync_error).toBeNull()

    // Now the root links to a new page, then to one that answers long after the deadline, then to another new one.
    s.routes.set('/slow/', page('Slow site', ['n1.html', 'late.html', 'n2.html']))
    s.routes.set('/slow/n1.html', page('Nightjars'))
    s.routes.set('/slow/late.html', { body: page('Loons'), delay: 4 * TIMEOUT_MS })
    s.routes.set('/slow/n2.html', page('Nuthatches'))
    const since = await crawledAt(root.uuid)
    expect((await sync(root.uuid)).status).toBe(202)
    const after = await crawled(agent.uuid, root.uuid, since)
    // p1 and p2 are no longer linked, but an incomplete crawl deletes nothing; n1, read in time, is added.
    expect([...after.keys()].sort()).toEqual(['/slow/', '/slow/n1.html', '/slow/p1.html', '/slow/p2.html'].map((path) => `${s.url}${path}`))
    expect(after.get(`${s.url}/slow/n1.html`)).toMatchObject({ status: 'ready', crawl_root_uuid: root.uuid })
    expect(after.get(`${s.url}/slow/`)!.sync_error).toEqual(timedOut)
    expect(s.hits('/slow/late.html')).toBe(1)
    expect(s.hits('/slow/n2.html')).toBe(0)
  })

  it('a Crawl-delay that would end past the deadline stops the crawl at once: nothing more is read, nothing deleted', async () => {
    const s = await site({
      '/docs/': page('Docs', ['a.html', 'b.html']),
      '/docs/a.html': page('Auks'),
      '/docs/b.html': page('Boobies'),
    })
    const { agent, root, docs } = await crawlSite(`${s.url}/docs/`, { max_depth: 1 })
    expect(docs.size).toBe(3)

    // 10 s (the cap) between two pages, with 3 s for the whole crawl: after the root, the next read would come too late.
    s.routes.set('/robots.txt', { type: 'text/plain', body: 'User-agent: agent-workspace-crawler\nCrawl-delay: 60\n' })
    s.routes.set('/docs/', page('Docs', ['c.html']))
    s.routes.set('/docs/c.html', page('Cranes'))
    const hitsBefore = ['/docs/a.html', '/docs/b.html'].map((path) => s.hits(path))
    const since = await crawledAt(root.uuid)
    const logged = s.log.length
    expect((await sync(root.uuid)).status).toBe(202)
    const after = await crawled(agent.uuid, root.uuid, since)
    // Not waited, neither the crawl delay nor the rest of the time budget: the crawl ended right
    // after its read of the root (the last request the site saw, after the new robots.txt).
    const rootRead = s.log.slice(logged).findLast((entry) => entry.path === '/docs/')
    expect(s.log.slice(logged).map((entry) => entry.path)).toContain('/robots.txt')
    const [{ ms }] = await t.sql('select (extract(epoch from crawled_at) * 1000)::float8 as ms from knowledge_documents where uuid = ?', [root.uuid])
    expect(Number(ms) - rootRead!.at).toBeLessThan(TIMEOUT_MS - 1_000)
    expect([...after.keys()].sort()).toEqual(['/docs/', '/docs/a.html', '/docs/b.html'].map((path) => `${s.url}${path}`))
    expect(after.get(`${s.url}/docs/`)!.sync_error).toEqual(timedOut)
    expect(s.hits('/docs/c.html')).toBe(0)
    expect(['/docs/a.html', '/docs/b.html'].map((path) => s.hits(path))).toEqual(hitsBefore)
  })
})

describe('robotsRules (a robots.txt for this service)', () => {
  const rules = (text: string) => robotsRules('http://example.test/robots.txt', text)

  it("takes the Crawl-delay of this service's group, else the * group's, in milliseconds, capped", () => {
    expect(rules('User-agent: *\nCrawl-delay: 2\n').delayMs).toBe(2_000)
    expect(rules('User-agent: *\nCrawl-delay: 2\n\nUser-agent: agent-workspace-crawler\nCrawl-delay: 0.5\n').delayMs).toBe(500)
    // This service's group without a delay has none, whatever `*` asks.
    expect(rules('User-agent: *\nCrawl-delay: 2\n\nUser-agent: agent-workspace-crawler\nDisallow: /x\n').delayMs).toBe(0)
    expect(rules('User-agent: otherbot\nCrawl-delay: 5\n').delayMs).toBe(0)
    expect(rules('User-agent: *\nCrawl-delay: 3600\n').delayMs).toBe(CRAWL_DELAY_MAX_MS)
    for (const value of ['-1', 'soon', '0', '']) expect(rules(`User-agent: *\nCrawl-delay: ${value}\n`).delayMs, value).toBe(0)
    expect(rules('').delayMs).toBe(0)
  })

  it('allows and forbids by the longest match of the group that applies', () => {
    const robots = rules('User-agent: *\nDisallow: /\n\nUser-agent: agent-workspace-crawler\nDisallow: /private/\nAllow: /private/open.html\n')
    expect(robots.allows('http://example.test/docs/')).toBe(true)
    expect(robots.allows('http://example.test/private/x.html')).toBe(false)
    expect(robots.allows('http://example.test/private/open.html')).toBe(true)
  })
})

describe('linksOf (the links of an HTML page)', () => {
  const links = (html: string) => linksOf(new TextEncoder().encode(html), 'text/html; charset=utf-8', 'http://example.test/docs/', 100)

  it('skips links whose rel holds nofollow, in any case, among other tokens', async () => {
    const html =
      '<a href="a.html">a</a><a rel="nofollow" href="b.html">b</a><a rel="external NoFollow noopener" href="c.html">c</a>' +
      '<a rel="nofollowing" href="d.html">d</a><map><area rel="NOFOLLOW" href="e.html"><area href="f.html"></map><a rel="nofollow" href="a.html">again</a>'
    expect(await links(html)).toEqual({ links: ['http://example.test/docs/a.html', 'http://example.test/docs/d.html', 'http://example.test/docs/f.html'], index: true })
  })

  it('honours a robots meta for every crawler or for this one: nofollow, noindex, none', async () => {
    const body = '<a href="a.html">a</a>'
    const meta = (name: string, content: string) => `<html><head><meta name="${name}" content="${content}"></head><body>${body}</body></html>`
    const a = ['http://example.test/docs/a.html']
    expect(await links(meta('robots', 'NOFOLLOW'))).toEqual({ links: [], index: true })
    expect(await links(meta('Robots', 'noindex'))).toEqual({ links: a, index: false })
    expect(await links(meta('robots', 'noindex,nofollow'))).toEqual({ links: [], index: false })
    expect(await links(meta('agent-workspace-crawler', 'noarchive noindex'))).toEqual({ links: a, index: false })
    expect(await links(meta('robots', 'none'))).toEqual({ links: [], index: false })
    expect(await links(meta('robots', 'index, follow'))).toEqual({ links: a, index: true })
    expect(await links(meta('googlebot', 'noindex, nofollow'))).toEqual({ links: a, index: true })
    expect(await links(meta('description', 'noindex nofollow'))).toEqual({ links: a, index: true })
  })
})
