/**
 * Knowledge documents kept in sync with their sources (docs/api/knowledge.md, "Chunks" and
 * "Keeping URL documents in sync"): reading a document's chunks; a URL's `refresh`; syncs against
 * a local site that serves ETag and Last-Modified and records each request's validators (304,
 * unchanged, changed, failing), the 409s, a due sync fired once through the scheduler; and every
 * operation's 401, another tenant's 404 and read-only answers. Without a provider key, retrieval
 * is full-text.
 */
import { createServer, type Server } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { makeAgent, readOnlyToken } from './helpers/agents.ts'
import { expectErrorBody, expectInvalid, hiddenCheck, UUID } from './helpers/expect.ts'
import { until } from './helpers/processes.ts'

const DOCUMENT_KEYS = [
  'agent_uuid', 'chunks_count', 'content_hash', 'crawl', 'crawl_root_uuid', 'created_at', 'error', 'last_synced_at', 'media_key', 'mime_type', 'name', 'next_sync_at',
  'refresh', 'size_bytes', 'source_type', 'status', 'sync_error', 'tokens_count', 'updated_at', 'url', 'uuid',
]

/** A page of the test site: what it answers, and the requests it saw. */
interface Page {
  body: string
  etag?: string
  lastModified?: string
  /** Answered instead of the page (a failing site). */
  status?: number
  /** Held requests wait until the test sends them (a sync stays running meanwhile). */
  hold?: boolean
  held: (() => void)[]
  /** Each request's validators and the status it was answered with. */
  requests: { ifNoneMatch?: string; ifModifiedSince?: string; answered: number }[]
}

/** A long text of numbered paragraphs: several chunks. */
const LONG_TEXT = Array.from(
  { length: 60 },
  (_, i) => `Paragraph ${i + 1}: the maintenance crew inspects valve ${i + 1} of the cooling loop every morning and writes down the pressure it reads.`,
).join('\n\n')

describe('knowledge sync', () => {
  let t: TestApp
  let site: Server
  let siteUrl: string
  const pages = new Map<string, Page>()
  let served = 0
  /** Serves a new page; answers its path. */
  const servePage = (page: Omit<Page, 'held' | 'requests'>): string => {
    served += 1
    const path = `/page-${served}.html`
    pages.set(path, { ...page, held: [], requests: [] })
    return path
  }
  let alice: TestUser
  let bob: TestUser

  beforeAll(async () => {
    site = createServer((req, res) => {
      const page = pages.get(req.url ?? '')
      if (!page) return void res.writeHead(404, { 'content-type': 'text/plain' }).end('missing')
      const ifNoneMatch = req.headers['if-none-match']
      const ifModifiedSince = req.headers['if-modified-since']
      const answer = () => {
        const fresh = (page.etag !== undefined && ifNoneMatch === page.etag) || (page.etag === undefined && page.lastModified !== undefined && ifModifiedSince === page.lastModified)
        const status = page.status ?? (fresh ? 304 : 200)
        page.requests.push({ ...(ifNoneMatch ? { ifNoneMatch } : {}), ...(ifModifiedSince ? { ifModifiedSince } : {}), answered: status })
        const headers: Record<string, string> = { 'content-type': 'text/plain; charset=utf-8' }
        if (page.etag) headers.etag = page.etag
        if (page.lastModified) headers['last-modified'] = page.lastModified
        res.writeHead(status, headers).end(status === 200 ? page.body : status === 304 ? undefined : 'server error')
      }
      if (page.hold) page.held.push(answer)
      else answer()
    })
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve))
    const address = site.address()
    siteUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
    t = await createTestApp({ TOOL_ALLOW_PRIVATE_NETWORK: 'true' })
    alice = await t.make.user({ name: 'Alice Syncer' })
    bob = await t.make.user({ name: 'Bob Outsider' })
  })
  afterAll(async () => {
    await t?.close()
    await new Promise((resolve) => site?.close(resolve))
  })

  const train = (user: { token: string }, agentUuid: string, sources: unknown) =>
    t.http('POST', `/api/v1/agents/${agentUuid}/train`, { token: user.token, body: { sources } })
  const settled = (user: { token: string }, uuid: string) =>
    until(
      () => t.http('GET', `/api/v1/knowledge/${uuid}`, { token: user.token }),
      (res) => res.status !== 200 || ['ready', 'failed'].includes(res.body.data.status),
      20_000,
      (res) => res.body,
    ).then((res) => res.body.data)
  const trained = async (user: { token: string }, agentUuid: string, sources: unknown[]) => {
    const res = await train(user, agentUuid, sources)
    expect(res.status, JSON.stringify(res.body)).toBe(202)
    return Promise.all(res.body.data.map((doc: { uuid: string }) => settled(user, doc.uuid)))
  }

  describe('chunks (GET /api/v1/knowledge/{document_uuid}/chunks)', () => {
    it('answers the paginator of the chunks in document order, with their text and tokens', async () => {
      const agent = await makeAgent(t, alice)
      const [doc] = await trained(alice, agent.uuid, [{ type: 'text', name: 'Valves', text: LONG_TEXT }])
      expect(doc.status).toBe('ready')
      expect(doc.chunks_count).toBeGreaterThanOrEqual(3)
      const all = await t.http('GET', `/api/v1/knowledge/${doc.uuid}/chunks?per_page=100`, { token: alice.token })
      expect(all.status, JSON.stringify(all.body)).toBe(200)
      expect(all.body.data).toHaveLength(doc.chunks_count)
      expect(all.body.meta).toMatchObject({ current_page: 1, per_page: 100, total: doc.chunks_count, last_page: 1 })
      for (const [index, chunk] of all.body.data.entries()) {
        expect(Object.keys(chunk).sort()).toEqual(['position', 'text', 'tokens_count', 'uuid'])
        expect(chunk.uuid).toMatch(UUID)
        expect(chunk.position).toBe(index)
        expect(chunk.tokens_count).toBeGreaterThan(0)
      }
      expect(all.body.data[0].text).toContain('Paragraph 1:')
      expect(all.body.data.at(-1).text).toContain('Paragraph 60:')
      const rows = await t.sql('select uuid, position, tokens from knowledge_chunks c where document_id = (select id from knowledge_documents where uuid = ?) order by position', [doc.uuid])
      expect(all.body.data.map((chunk: { uuid: string }) => chunk.uuid)).toEqual(rows.map((row) => row.uuid))

      const second = await t.http('GET', `/api/v1/knowledge/${doc.uuid}/chunks?per_page=2&page=2`, { token: alice.token })
      expect(second.status).toBe(200)
      expect(second.body.data.map((chunk: { position: number }) => chunk.position)).toEqual([2, 3])
      expect(second.body.meta).toMatchObject({ current_page: 2, per_page: 2, total: doc.chunks_count, last_page: Math.ceil(doc.chunks_count / 2) })
      expect(second.body.links.prev).toContain(`/api/v1/knowledge/${doc.uuid}/chunks?`)
      expect(second.body.links.prev).toContain('page=1')
      const next = await t.http('GET', new URL(second.body.links.next).pathname + new URL(second.body.links.next).search, { token: alice.token })
      expect(next.status, JSON.stringify(next.body)).toBe(200)
      expect(next.body.data[0].position).toBe(4)
    })

    it('401 without a token, 404 for another tenant or an unknown uuid, 200 for a read-only token, 400 naming a bad per_page', async () => {
      const agent = await makeAgent(t, alice, { name: 'Secret Chunk Agent' })
      const [doc] = await trained(alice, agent.uuid, [{ type: 'text', name: 'Secret chunks', text: 'The vault opens at dawn.' }])
      const path = `/api/v1/knowledge/${doc.uuid}/chunks`
      expectErrorBody(await t.http('GET', path), 401, 'UNAUTHORIZED')
      const hidden = await t.http('GET', path, { token: bob.token })
      hiddenCheck('Knowledge document')(hidden, { uuid: doc.uuid, name: 'Secret chunks' })
      expect(JSON.stringify(hidden.body)).not.toContain(agent.name)
      expectErrorBody(await t.http('GET', `/api/v1/knowledge/0190aaaa-0000-7000-8000-000000000000/chunks`, { token: alice.token }), 404, 'NOT_FOUND', 'Knowledge document not found')
      const readOnly = await readOnlyToken(t, alice)
      const read = await t.http('GET', path, { token: readOnly.token })
      expect(read.status, JSON.stringify(read.body)).toBe(200)
      expect(read.body.data.map((chunk: { text: string }) => chunk.text)).toEqual(['The vault opens at dawn.'])
      for (const bad of ['0', '101', 'many']) expectInvalid(await t.http('GET', `${path}?per_page=${bad}`, { token: alice.token }), 'per_page')
      expectInvalid(await t.http('GET', `${path}?page=0`, { token: alice.token }), 'page')
    })
  })

  describe('refresh (train with {type: "url", refresh}, PUT /api/v1/knowledge/{document_uuid})', () => {
    it('stores refresh and next_sync_at at training; a URL read once has last_synced_at and its validators; text is never synced', async () => {
      const agent = await makeAgent(t, alice)
      const path = servePage({ body: 'The ferry leaves the harbour at nine.', etag: '"v1"' })
      const before = Date.now()
      const [page, text] = await trained(alice, agent.uuid, [
        { type: 'url', url: `${siteUrl}${path}`, refresh: 'daily' },
        { type: 'text', name: 'Plain', text: 'The bakery opens at six.' },
      ])
      expect(Object.keys(page).sort()).toEqual(DOCUMENT_KEYS)
      expect(page).toMatchObject({ status: 'ready', refresh: 'daily', sync_error: null })
      expect(Date.parse(page.next_sync_at) - before).toBeGreaterThan(86_400_000 - 60_000)
      expect(Date.parse(page.next_sync_at) - Date.now()).toBeLessThanOrEqual(86_400_000)
      expect(Date.parse(page.last_synced_at)).toBeGreaterThanOrEqual(before - 1000)
      const [stored] = await t.sql('select etag, last_modified from knowledge_documents where uuid = ?', [page.uuid])
      expect(stored).toEqual({ etag: '"v1"', last_modified: null })
      expect(text).toMatchObject({ refresh: 'never', next_sync_at: null, last_synced_at: null, sync_error: null })
      const [plain] = await trained(alice, agent.uuid, [{ type: 'url', url: `${siteUrl}${servePage({ body: 'No refresh asked.' })}` }])
      expect(plain).toMatchObject({ refresh: 'never', next_sync_at: null })
    })

    it('PUT {refresh} moves next_sync_at one interval from now, or clears it for never; 400 naming refresh for text, files and bad values', async () => {
      const agent = await makeAgent(t, alice)
      const [page, text] = await trained(alice, agent.uuid, [
        { type: 'url', url: `${siteUrl}${servePage({ body: 'The tram runs every ten minutes.' })}` },
        { type: 'text', name: 'Plain', text: 'The museum closes on Mondays.' },
      ])
      const put = (user: { token: string }, uuid: string, body: unknown) => t.http('PUT', `/api/v1/knowledge/${uuid}`, { token: user.token, body })
      const before = Date.now()
      const hourly = await put(alice, page.uuid, { refresh: 'hourly' })
      expect(hourly.status, JSON.stringify(hourly.body)).toBe(200)
      expect(Object.keys(hourly.body.data).sort()).toEqual(DOCUMENT_KEYS)
      expect(hourly.body.data.refresh).toBe('hourly')
      expect(Date.parse(hourly.body.data.next_sync_at) - before).toBeGreaterThan(3_600_000 - 60_000)
      expect(Date.parse(hourly.body.data.next_sync_at) - Date.now()).toBeLessThanOrEqual(3_600_000)
      const weekly = await put(alice, page.uuid, { refresh: 'weekly' })
      expect(Date.parse(weekly.body.data.next_sync_at) - before).toBeGreaterThan(7 * 86_400_000 - 60_000)
      const never = await put(alice, page.uuid, { refresh: 'never' })
      expect(never.body.data).toMatchObject({ refresh: 'never', next_sync_at: null })
      expectInvalid(await put(alice, text.uuid, { refresh: 'daily' }), 'refresh')
      expectInvalid(await put(alice, page.uuid, { refresh: 'monthly' }), 'refresh')
      expectInvalid(await put(alice, page.uuid, {}), 'refresh')
      expectInvalid(await train(alice, agent.uuid, [{ type: 'url', url: `${siteUrl}/x`, refresh: 'yearly' }]), 'sources.0.refresh')
      expectInvalid(await train(alice, agent.uuid, [{ type: 'text', name: 'x', text: 'x', refresh: 'daily' }]), 'sources.0')
      const [{ count }] = await t.sql(`select count(*)::int as count from audit_events where action = 'knowledge_document.update' and resource_uuid = ?`, [page.uuid])
      expect(count).toBe(3)
    })
  })

  describe('sync (POST /api/v1/knowledge/{document_uuid}/sync)', () => {
    /** Trains `path` on a new agent of alice's and answers the agent and the ready document. */
    const trainPage = async (path: string, refresh?: string) => {
      const agent = await makeAgent(t, alice)
      const [doc] = await trained(alice, agent.uuid, [{ type: 'url', url: `${siteUrl}${path}`, ...(refresh ? { refresh } : {}) }])
      expect(doc.status, JSON.stringify(doc)).toBe('ready')
      return { agent, doc }
    }
    const sync = (user: { token: string }, uuid: string) => t.http('POST', `/api/v1/knowledge/${uuid}/sync`, { token: user.token })
    /** The document once its sync (claimed in the database) is over. */
    const synced = async (uuid: string) => {
      await until(
        () => t.sql('select sync_started_at from knowledge_documents where uuid = ?', [uuid]),
        (rows) => rows[0]?.sync_started_at === null,
        20_000,
      )
      return (await t.http('GET', `/api/v1/knowledge/${uuid}`, { token: alice.token })).body.data
    }
    const chunkTexts = async (uuid: string) =>
      (await t.http('GET', `/api/v1/knowledge/${uuid}/chunks?per_page=100`, { token: alice.token })).body.data as { uuid: string; text: string }[]
    const search = async (agentUuid: string, query: string) =>
      (await t.http('POST', `/api/v1/agents/${agentUuid}/knowledge/search`, { token: alice.token, body: { query } })).body.data as { document_uuid: string; text: string }[]

    it('asks conditionally with the stored ETag and Last-Modified; a 304 changes only last_synced_at', async () => {
      const path = servePage({ body: 'The lighthouse lamp turns every twelve seconds.', etag: '"lamp-1"', lastModified: 'Wed, 01 Jan 2025 10:00:00 GMT' })
      const { doc } = await trainPage(path)
      const chunks = await chunkTexts(doc.uuid)
      const res = await sync(alice, doc.uuid)
      expect(res.status, JSON.stringify(res.body)).toBe(202)
      expect(Object.keys(res.body.data).sort()).toEqual(DOCUMENT_KEYS)
      expect(res.body.data.uuid).toBe(doc.uuid)
      const after = await synced(doc.uuid)
      const page = pages.get(path)!
      expect(page.requests).toHaveLength(2)
      expect(page.requests[1]).toEqual({ ifNoneMatch: '"lamp-1"', ifModifiedSince: 'Wed, 01 Jan 2025 10:00:00 GMT', answered: 304 })
      expect(Date.parse(after.last_synced_at)).toBeGreaterThan(Date.parse(doc.last_synced_at))
      expect(after).toMatchObject({ status: 'ready', sync_error: null, content_hash: doc.content_hash, updated_at: doc.updated_at, chunks_count: doc.chunks_count })
      expect(await chunkTexts(doc.uuid)).toEqual(chunks)
    })

    it('an unchanged page without validators keeps its chunks; a changed page replaces them (same document, search finds the new text only)', async () => {
      const path = servePage({ body: 'The orchard grows Quillberry apples on the north slope.' })
      const { agent, doc } = await trainPage(path)
      const before = await chunkTexts(doc.uuid)
      expect((await sync(alice, doc.uuid)).status).toBe(202)
      const unchanged = await synced(doc.uuid)
      expect(pages.get(path)!.requests[1]).toEqual({ answered: 200 })
      expect(Date.parse(unchanged.last_synced_at)).toBeGreaterThan(Date.parse(doc.last_synced_at))
      expect(await chunkTexts(doc.uuid)).toEqual(before)

      pages.get(path)!.body = 'The orchard now grows Zephyrine pears on the south slope.'
      pages.get(path)!.etag = '"pears"'
      expect((await sync(alice, doc.uuid)).status).toBe(202)
      const changed = await synced(doc.uuid)
      expect(changed).toMatchObject({ uuid: doc.uuid, status: 'ready', sync_error: null })
      expect(changed.content_hash).not.toBe(doc.content_hash)
      const after = await chunkTexts(doc.uuid)
      expect(after.map((chunk) => chunk.text).join(' ')).toContain('Zephyrine pears')
      expect(after.map((chunk) => chunk.uuid)).not.toContain(before[0].uuid)
      const hits = await search(agent.uuid, 'Zephyrine pears')
      expect(hits[0]).toMatchObject({ document_uuid: doc.uuid })
      expect(hits[0].text).toContain('Zephyrine')
      expect(await search(agent.uuid, 'Quillberry')).toEqual([])
      const [stored] = await t.sql('select etag from knowledge_documents where uuid = ?', [doc.uuid])
      expect(stored.etag).toBe('"pears"')
      const [{ count }] = await t.sql('select count(*)::int as count from knowledge_chunks c join knowledge_documents d on d.id = c.document_id where d.uuid = ?', [doc.uuid])
      expect(count).toBe(changed.chunks_count)
    })

    it('a failing page keeps the old chunks and last_synced_at, sets sync_error, and stays ready; the next good sync clears it', async () => {
      const path = servePage({ body: 'The glacier moves forty metres a year.' })
      const { agent, doc } = await trainPage(path)
      pages.get(path)!.status = 500
      expect((await sync(alice, doc.uuid)).status).toBe(202)
      const failed = await synced(doc.uuid)
      expect(failed).toMatchObject({ status: 'ready', sync_error: { code: 'http_error', message: 'The URL answered 500' }, last_synced_at: doc.last_synced_at, content_hash: doc.content_hash })
      expect((await search(agent.uuid, 'glacier'))[0]).toMatchObject({ document_uuid: doc.uuid })
      pages.get(path)!.status = 200
      expect((await sync(alice, doc.uuid)).status).toBe(202)
      const mended = await synced(doc.uuid)
      expect(mended.sync_error).toBeNull()
      expect(Date.parse(mended.last_synced_at)).toBeGreaterThan(Date.parse(doc.last_synced_at))
    })

    it('409 for a text document and while a sync is running', async () => {
      const agent = await makeAgent(t, alice)
      const [text] = await trained(alice, agent.uuid, [{ type: 'text', name: 'Plain', text: 'The canal freezes in January.' }])
      expectErrorBody(await sync(alice, text.uuid), 409, 'CONFLICT')
      const path = servePage({ body: 'The clock tower chimes at noon.' })
      const { doc } = await trainPage(path)
      pages.get(path)!.hold = true
      expect((await sync(alice, doc.uuid)).status).toBe(202)
      await until(async () => pages.get(path)!.held.length, (held) => held > 0, 10_000)
      expectErrorBody(await sync(alice, doc.uuid), 409, 'CONFLICT')
      pages.get(path)!.hold = false
      for (const release of pages.get(path)!.held.splice(0)) release()
      expect((await synced(doc.uuid)).sync_error).toBeNull()
      expect((await sync(alice, doc.uuid)).status).toBe(202)
      await synced(doc.uuid)
    })

    it('a due sync is claimed once through the scheduler, even by looks at once, and moves next_sync_at one interval on', async () => {
      const path = servePage({ body: 'The night train departs at 23:40.', etag: '"night"' })
      const { doc } = await trainPage(path, 'hourly')
      await t.sql(`update knowledge_documents set next_sync_at = now() - interval '1 second' where uuid = ?`, [doc.uuid])
      // Two looks at once, besides the scheduler's own: the due time is claimed by one of them.
      const fired = await Promise.all([t.runtime.scheduler.fireDue(), t.runtime.scheduler.fireDue()])
      expect(fired[0] + fired[1]).toBeLessThanOrEqual(1)
      await until(async () => pages.get(path)!.requests.length, (count) => count >= 2, 10_000)
      const after = await synced(doc.uuid)
      // Longer than the scheduler's longest wait between looks (src/platform/scheduler.ts, LOOK_MS).
      await new Promise((resolve) => setTimeout(resolve, 2_500))
      expect(pages.get(path)!.requests).toEqual([{ answered: 200 }, { ifNoneMatch: '"night"', answered: 304 }])
      expect(Date.parse(after.last_synced_at)).toBeGreaterThan(Date.parse(doc.last_synced_at))
      expect(Date.parse(after.next_sync_at) - Date.now()).toBeGreaterThan(3_600_000 - 60_000)
      expect(after.sync_error).toBeNull()
    })

    it('401 without a token; 404 for another tenant; 403 for a read-only token and a read share (PUT and sync)', async () => {
      const path = servePage({ body: 'The secret garden gate is painted green.' })
      const { agent, doc } = await trainPage(path)
      const put = (token: string | undefined) => t.http('PUT', `/api/v1/knowledge/${doc.uuid}`, { token, body: { refresh: 'daily' } })
      expectErrorBody(await put(undefined), 401, 'UNAUTHORIZED')
      expectErrorBody(await t.http('POST', `/api/v1/knowledge/${doc.uuid}/sync`), 401, 'UNAUTHORIZED')
      const hidden = hiddenCheck('Knowledge document')
      hidden(await put(bob.token), { uuid: doc.uuid, name: doc.name })
      hidden(await sync(bob, doc.uuid), { uuid: doc.uuid, name: doc.name })
      const readOnly = await readOnlyToken(t, alice)
      expectErrorBody(await put(readOnly.token), 403, 'FORBIDDEN')
      expectErrorBody(await sync(readOnly, doc.uuid), 403, 'FORBIDDEN')
      const shared = await t.http('POST', `/api/v1/agents/${agent.uuid}/share`, { token: alice.token, body: { entity_type: 'user', entity_id: bob.id, permission: 'read' } })
      expect(shared.status, JSON.stringify(shared.body)).toBe(200)
      expectErrorBody(await put(bob.token), 403, 'FORBIDDEN')
      expectErrorBody(await sync(bob, doc.uuid), 403, 'FORBIDDEN')
      expect((await t.http('GET', `/api/v1/knowledge/${doc.uuid}/chunks`, { token: bob.token })).status).toBe(200)
      expect(pages.get(path)!.requests).toHaveLength(1)
      const [row] = await t.sql('select refresh from knowledge_documents where uuid = ?', [doc.uuid])
      expect(row.refresh).toBe('never')
    })
  })
})
