/**
 * Knowledge documents kept in sync with their sources (docs/api/knowledge.md, "Chunks" and
 * "Keeping URL documents in sync"): reading a document's chunks, and every operation's 401,
 * another tenant's 404 and read-only answers. Without a provider key, retrieval is full-text.
 */
import { createServer, type Server } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { makeAgent, readOnlyToken } from './helpers/agents.ts'
import { expectErrorBody, expectInvalid, hiddenCheck, UUID } from './helpers/expect.ts'
import { until } from './helpers/processes.ts'

const DOCUMENT_KEYS = [
  'agent_uuid', 'chunks_count', 'content_hash', 'created_at', 'error', 'last_synced_at', 'media_key', 'mime_type', 'name', 'next_sync_at',
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
    it('stores refresh and next_sync_at at training; text is never synced', async () => {
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
})
