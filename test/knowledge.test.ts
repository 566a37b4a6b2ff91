/**
 * Agent knowledge (docs/api/knowledge.md): training from text, uploads and URLs, documents,
 * search, ingestion through the durable queue, retrieval in runs with citations, and every
 * operation's validation, 401, another tenant's 404 and read-only 403. The model and the
 * embeddings are the real OpenAI provider client talking to test/helpers/upstream.ts.
 */
import { createServer, type Server } from 'node:http'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { makeAgent, readOnlyToken } from './helpers/agents.ts'
import { expectErrorBody, expectInvalid, hiddenCheck, sha256, UUID } from './helpers/expect.ts'
import { PNG, upload } from './helpers/media.ts'
import { makeDocx, makePdf } from './helpers/documents.ts'
import { startUpstream, type Upstream } from './helpers/upstream.ts'
import { until } from './helpers/processes.ts'
import { readSse } from './helpers/sse.ts'
import { lexemeGroups, retrieve } from '../src/knowledge/retrieval.ts'

const DOCUMENT_KEYS = [
  'agent_uuid', 'chunks_count', 'content_hash', 'crawl', 'crawl_root_uuid', 'created_at', 'error', 'last_synced_at', 'media_key', 'mime_type', 'name', 'next_sync_at',
  'refresh', 'size_bytes', 'source_type', 'status', 'sync_error', 'tokens_count', 'updated_at', 'url', 'uuid',
]

const FACT = 'The Zorblax reactor on deck seven is cooled with liquid argon at minus 186 degrees.'
const expectHidden = hiddenCheck('Agent')

describe('knowledge', () => {
  let t: TestApp
  let upstream: Upstream
  let site: Server
  let siteUrl: string
  let alice: TestUser
  let bob: TestUser
  /** Answers of `/held/...` requests, waiting for the test to send them. */
  const held: (() => void)[] = []

  beforeAll(async () => {
    upstream = await startUpstream()
    site = createServer((req, res) => {
      if (req.url?.startsWith('/held/')) {
        // Answers once the test lets it go: its document stays `processing` meanwhile.
        held.push(() => res.writeHead(200, { 'content-type': 'text/plain' }).end(`Held page ${req.url} about the lighthouse keeper.`))
      } else if (req.url === '/page.html') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        res.end(`<html><head><title>Ops</title><script>var secret = 1</script></head><body><h1>Ops manual</h1><p>${FACT.replace('Zorblax', 'Quixotl')}</p></body></html>`)
      } else {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('missing')
      }
    })
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve))
    const address = site.address()
    siteUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
    t = await createTestApp({ OPENAI_API_KEY: 'sk-upstream-test', OPENAI_BASE_URL: upstream.url, TOOL_ALLOW_PRIVATE_NETWORK: 'true' })
    alice = await t.make.user({ name: 'Alice Trainer' })
    bob = await t.make.user({ name: 'Bob Outsider' })
  })
  afterAll(async () => {
    await t?.close()
    await upstream?.close()
    await new Promise((resolve) => site?.close(resolve))
  })
  beforeEach(() => upstream.reset())

  const train = (user: { token: string }, agentUuid: string, sources: unknown) =>
    t.http('POST', `/api/v1/agents/${agentUuid}/train`, { token: user.token, body: { sources } })
  const settled = (user: { token: string }, uuid: string, timeoutMs = 30_000) =>
    until(
      () => t.http('GET', `/api/v1/knowledge/${uuid}`, { token: user.token }),
      (res) => res.status !== 200 || ['ready', 'failed'].includes(res.body.data.status),
      timeoutMs,
      (res) => res.body,
    ).then((res) => res.body.data)
  const trained = async (user: { token: string }, agentUuid: string, sources: unknown[], timeoutMs?: number) => {
    const res = await train(user, agentUuid, sources)
    expect(res.status, JSON.stringify(res.body)).toBe(202)
    return Promise.all(res.body.data.map((doc: { uuid: string }) => settled(user, doc.uuid, timeoutMs)))
  }

  describe('training (POST /api/v1/agents/{agent_uuid}/train)', () => {
    it('answers 202 with one queued document per source, in order; ingestion makes it ready with its chunks and hash', async () => {
      const agent = await makeAgent(t, alice)
      const text = `# Reactor notes\n\n${FACT}\n\nOther decks use water.`
      const res = await train(alice, agent.uuid, [{ type: 'text', name: 'Reactor notes', text }])
      expect(res.status, JSON.stringify(res.body)).toBe(202)
      expect(res.body.data).toHaveLength(1)
      const doc = res.body.data[0]
      expect(Object.keys(doc).sort()).toEqual(DOCUMENT_KEYS)
      expect(doc).toMatchObject({ agent_uuid: agent.uuid, name: 'Reactor notes', source_type: 'text', media_key: null, url: null, status: 'queued', error: null })
      expect(doc.uuid).toMatch(UUID)
      const ready = await settled(alice, doc.uuid)
      expect(ready).toMatchObject({ status: 'ready', error: null, content_hash: sha256(text), size_bytes: Buffer.byteLength(text) })
      expect(ready.chunks_count).toBeGreaterThanOrEqual(1)
      expect(ready.tokens_count).toBeGreaterThan(0)
      const [{ count }] = await t.sql('select count(*)::int as count from knowledge_chunks c join knowledge_documents d on d.id = c.document_id where d.uuid = ?', [doc.uuid])
      expect(count).toBe(ready.chunks_count)
    })

    it('answers the existing document when the same text is trained again (no second copy)', async () => {
      const agent = await makeAgent(t, alice)
      const [first] = await trained(alice, agent.uuid, [{ type: 'text', name: 'Once', text: FACT }])
      const again = await train(alice, agent.uuid, [{ type: 'text', name: 'Twice', text: FACT }, { type: 'text', name: 'Other', text: 'Something else entirely.' }])
      expect(again.status).toBe(202)
      expect(again.body.data[0].uuid).toBe(first.uuid)
      expect(again.body.data[0].name).toBe('Once')
      expect(again.body.data[1].uuid).not.toBe(first.uuid)
      const [{ count }] = await t.sql('select count(*)::int as count from knowledge_documents d join agents a on a.id = d.agent_id where a.uuid = ?', [agent.uuid])
      expect(count).toBe(2)
    })

    it('trains a URL through the outbound guard (HTML to text, scripts dropped) and an uploaded Markdown file', async () => {
      const agent = await makeAgent(t, alice)
      const file = await upload(t, { token: alice.token, files: [{ bytes: `# Handbook\n\nThe cafeteria opens at 7:15 every weekday.`, filename: 'handbook.md', type: 'text/markdown' }] })
      expect(file.status, JSON.stringify(file.body)).toBe(201)
      const [page, handbook] = await trained(alice, agent.uuid, [
        { type: 'url', url: `${siteUrl}/page.html` },
        { type: 'file', key: file.body.data.key },
      ])
      expect(page).toMatchObject({ status: 'ready', source_type: 'url', url: `${siteUrl}/page.html`, mime_type: 'text/html' })
      expect(handbook).toMatchObject({ status: 'ready', source_type: 'file', media_key: file.body.data.key, name: 'handbook.md', mime_type: 'text/markdown' })
      const hits = await t.http('POST', `/api/v1/agents/${agent.uuid}/knowledge/search`, { token: alice.token, body: { query: 'How is the Quixotl reactor cooled?' } })
      expect(hits.status, JSON.stringify(hits.body)).toBe(200)
      expect(hits.body.data[0]).toMatchObject({ document_uuid: page.uuid, document_name: page.name })
      expect(hits.body.data[0].text).toContain('liquid argon')
      expect(hits.body.data.map((hit: { text: string }) => hit.text).join(' ')).not.toContain('var secret')
    })

    it('trains an upload of each trainable type end to end (PDF, DOCX, HTML, CSV, JSON); an encrypted PDF fails with a reason to act on', async () => {
      const agent = await makeAgent(t, alice)
      const files = [
        { filename: 'manual.pdf', type: 'application/pdf', bytes: await makePdf([['Pump P-100 runs on 48 volts.']]) },
        { filename: 'memo.docx', type: 'application/octet-stream', bytes: await makeDocx({ paragraphs: ['The vault combination changes every Tuesday.'] }) },
        { filename: 'page.html', type: 'text/html', bytes: Buffer.from('<html><body><h1>Hours</h1><p>The gym closes at 22:00.</p><script>var x = 1</script></body></html>') },
        { filename: 'prices.csv', type: 'text/csv', bytes: Buffer.from('plan,price\nbasic,10\npro,25\n') },
        { filename: 'config.json', type: 'application/json', bytes: Buffer.from(JSON.stringify({ server: { port: 8443 } })) },
        { filename: 'locked.pdf', type: 'application/pdf', bytes: await makePdf([['Hidden.']], { userPassword: 'secret' }) },
      ]
      const keys: string[] = []
      for (const file of files) {
        const res = await upload(t, { token: alice.token, files: [file] })
        expect(res.status, `${file.filename}: ${JSON.stringify(res.body)}`).toBe(201)
        keys.push(res.body.data.key)
      }
      const docs = await trained(alice, agent.uuid, keys.map((key) => ({ type: 'file', key })))
      expect(docs.map((d: { name: string; status: string }) => `${d.name} ${d.status}`)).toEqual([
        'manual.pdf ready', 'memo.docx ready', 'page.html ready', 'prices.csv ready', 'config.json ready', 'locked.pdf failed',
      ])
      expect(docs[5].error).toBe('The PDF is encrypted with a password; upload an unencrypted copy')
      const find = async (query: string) =>
        (await t.http('POST', `/api/v1/agents/${agent.uuid}/knowledge/search`, { token: alice.token, body: { query, limit: 1 } })).body.data[0]
      expect(await find('pump volts')).toMatchObject({ document_name: 'manual.pdf' })
      expect((await find('vault combination')).text).toContain('every Tuesday')
      expect((await find('gym closes')).text).not.toContain('var x')
      expect((await find('pro plan price')).text).toContain('price: 25')
      expect((await find('What is server.port?')).text).toContain('server.port: 8443')
    })

    it('fails a document whose URL answers 404 with a reason, leaving the others alone; retry queues it again (409 unless failed)', async () => {
      const agent = await makeAgent(t, alice)
      const [missing, fine] = await trained(alice, agent.uuid, [
        { type: 'url', url: `${siteUrl}/gone.html` },
        { type: 'text', name: 'Fine', text: 'Fine text about deck nine.' },
      ])
      expect(missing).toMatchObject({ status: 'failed', chunks_count: 0 })
      expect(missing.error).toMatch(/404/)
      expect(fine.status).toBe('ready')
      const refused = await t.http('POST', `/api/v1/knowledge/${fine.uuid}/retry`, { token: alice.token })
      expectErrorBody(refused, 409, 'CONFLICT')
      const retried = await t.http('POST', `/api/v1/knowledge/${missing.uuid}/retry`, { token: alice.token })
      expect(retried.status, JSON.stringify(retried.body)).toBe(202)
      expect(retried.body.data).toMatchObject({ uuid: missing.uuid, status: 'queued', error: null })
      expect((await settled(alice, missing.uuid)).status).toBe('failed')
    })

    it('retries a failing embedding upstream with backoff, and fails the document with the reason after the last attempt (hybrid mode)', async () => {
      if (t.runtime.knowledge.mode !== 'hybrid') return
      const agent = await makeAgent(t, alice)
      upstream.enqueueEmbeddings({ kind: 'status', status: 500 })
      const [recovered] = await trained(alice, agent.uuid, [{ type: 'text', name: 'Recovered', text: 'The second attempt embeds this.' }])
      expect(recovered.status).toBe('ready')
      upstream.enqueueEmbeddings(...Array.from({ length: 4 }, () => ({ kind: 'status' as const, status: 503 })))
      // Three retries, each after its backoff and the queue's next poll.
      const [failed] = await trained(alice, agent.uuid, [{ type: 'text', name: 'Unlucky', text: 'No attempt embeds this.' }], 60_000)
      expect(failed).toMatchObject({ status: 'failed', chunks_count: 0 })
      expect(failed.error).toBe('Ingestion failed after 4 attempts: the embedding model answered 503')
      expect(upstream.requests.filter((r) => r.path === '/v1/embeddings')).toHaveLength(6)
    }, 100_000)

    it('refuses bad sources with 400s naming the field, storing nothing', async () => {
      const agent = await makeAgent(t, alice)
      const image = await upload(t, { token: alice.token, files: [{ bytes: PNG, filename: 'pixel.png', type: 'image/png' }] })
      expectInvalid(await train(alice, agent.uuid, []), 'sources')
      expectInvalid(await train(alice, agent.uuid, Array.from({ length: 21 }, (_, i) => ({ type: 'text', name: `n${i}`, text: 'x' }))), 'sources')
      expectInvalid(await train(alice, agent.uuid, [{ type: 'text', name: 'Blank', text: '   ' }]), 'sources.0.text')
      expectInvalid(await train(alice, agent.uuid, [{ type: 'text', name: '', text: 'x' }]), 'sources.0.name')
      expectInvalid(await train(alice, agent.uuid, [{ type: 'pdf', key: 'x' }]), 'sources.0.type')
      expectInvalid(await train(alice, agent.uuid, [{ type: 'file', key: 'no-such-key.pdf' }]), 'sources.0.key')
      expectInvalid(await train(alice, agent.uuid, [{ type: 'text', name: 'ok', text: 'ok' }, { type: 'file', key: image.body.data.key }]), 'sources.1.key')
      expectInvalid(await train(alice, agent.uuid, [{ type: 'url', url: 'not a url' }]), 'sources.0.url')
      expectInvalid(await train(alice, agent.uuid, [{ type: 'url', url: 'ftp://example.com/file.txt' }]), 'sources.0.url')
      expectInvalid(await train(alice, agent.uuid, [{ type: 'text', name: 'x', text: 'x', extra: true }]), 'sources.0')
      const [{ count }] = await t.sql('select count(*)::int as count from knowledge_documents d join agents a on a.id = d.agent_id where a.uuid = ?', [agent.uuid])
      expect(count).toBe(0)
    })

    it('refuses a URL that points at a blocked address when private networks are off, and a text over 1 MiB (400s naming the field)', async () => {
      // The body limit raised so that a text over 1 MiB reaches validation (by default the whole body is 1 MiB).
      const guarded = await createTestApp({ OPENAI_API_KEY: 'sk-upstream-test', OPENAI_BASE_URL: upstream.url, BODY_LIMIT_BYTES: String(4 * 1024 * 1024) })
      try {
        const carol = await guarded.make.user({ name: 'Carol Guarded' })
        const agent = (await guarded.http('POST', '/api/v1/agents', { token: carol.token, body: { name: 'Guarded' } })).body.data
        for (const url of ['http://127.0.0.1:8080/x', 'http://localhost/x', 'http://169.254.169.254/latest/meta-data', 'http://[::1]/x', 'http://10.1.2.3/x']) {
          const res = await guarded.http('POST', `/api/v1/agents/${agent.uuid}/train`, { token: carol.token, body: { sources: [{ type: 'url', url }] } })
          expectInvalid(res, 'sources.0.url')
        }
        const big = await guarded.http('POST', `/api/v1/agents/${agent.uuid}/train`, {
          token: carol.token,
          body: { sources: [{ type: 'text', name: 'Big', text: 'é'.repeat(512 * 1024 + 1) }] },
        })
        expectInvalid(big, 'sources.0.text')
      } finally {
        await guarded.close()
      }
    })
  })

  describe('access', () => {
    it('401 without a token; 404 for another tenant on every operation, saying nothing of the agent or document', async () => {
      const agent = await makeAgent(t, alice, { name: 'Secret Reactor Agent' })
      const [doc] = await trained(alice, agent.uuid, [{ type: 'text', name: 'Secret doc', text: FACT }])
      expectErrorBody(await t.http('POST', `/api/v1/agents/${agent.uuid}/train`, { body: { sources: [{ type: 'text', name: 'x', text: 'x' }] } }), 401, 'UNAUTHORIZED')
      for (const [method, path, body] of [
        ['GET', `/api/v1/knowledge/${doc.uuid}`],
        ['DELETE', `/api/v1/knowledge/${doc.uuid}`],
        ['POST', `/api/v1/knowledge/${doc.uuid}/retry`],
        ['GET', `/api/v1/agents/${agent.uuid}/knowledge`],
        ['POST', `/api/v1/agents/${agent.uuid}/knowledge/search`, { query: 'reactor' }],
      ] as const) {
        expectErrorBody(await t.http(method, path, { body }), 401, 'UNAUTHORIZED')
      }
      expectHidden(await train(bob, agent.uuid, [{ type: 'text', name: 'x', text: 'x' }]), agent)
      expectHidden(await t.http('GET', `/api/v1/agents/${agent.uuid}/knowledge`, { token: bob.token }), agent)
      expectHidden(await t.http('POST', `/api/v1/agents/${agent.uuid}/knowledge/search`, { token: bob.token, body: { query: 'reactor' } }), agent)
      const hiddenDoc = hiddenCheck('Knowledge document')
      for (const [method, path] of [
        ['GET', `/api/v1/knowledge/${doc.uuid}`],
        ['DELETE', `/api/v1/knowledge/${doc.uuid}`],
        ['POST', `/api/v1/knowledge/${doc.uuid}/retry`],
      ] as const) {
        const res = await t.http(method, path, { token: bob.token })
        hiddenDoc(res, { uuid: doc.uuid, name: 'Secret doc' })
        expect(JSON.stringify(res.body)).not.toContain(agent.name)
      }
      expect((await settled(alice, doc.uuid)).status).toBe('ready')
    })

    it('a read share lists, retrieves and searches but may not train, delete or retry (403); a read-only token may search', async () => {
      const agent = await makeAgent(t, alice)
      const [doc] = await trained(alice, agent.uuid, [{ type: 'text', name: 'Shared doc', text: FACT }])
      const shared = await t.http('POST', `/api/v1/agents/${agent.uuid}/share`, { token: alice.token, body: { entity_type: 'user', entity_id: bob.id, permission: 'read' } })
      expect(shared.status, JSON.stringify(shared.body)).toBe(200)
      const list = await t.http('GET', `/api/v1/agents/${agent.uuid}/knowledge`, { token: bob.token })
      expect(list.status).toBe(200)
      expect(list.body.data.map((d: { uuid: string }) => d.uuid)).toEqual([doc.uuid])
      expect((await t.http('GET', `/api/v1/knowledge/${doc.uuid}`, { token: bob.token })).status).toBe(200)
      expect((await t.http('POST', `/api/v1/agents/${agent.uuid}/knowledge/search`, { token: bob.token, body: { query: 'argon' } })).status).toBe(200)
      expectErrorBody(await train(bob, agent.uuid, [{ type: 'text', name: 'x', text: 'x' }]), 403, 'FORBIDDEN')
      expectErrorBody(await t.http('DELETE', `/api/v1/knowledge/${doc.uuid}`, { token: bob.token }), 403, 'FORBIDDEN')
      expectErrorBody(await t.http('POST', `/api/v1/knowledge/${doc.uuid}/retry`, { token: bob.token }), 403, 'FORBIDDEN')
      const readOnly = await readOnlyToken(t, alice)
      expectErrorBody(await train(readOnly, agent.uuid, [{ type: 'text', name: 'x', text: 'x' }]), 403, 'FORBIDDEN')
      expectErrorBody(await t.http('DELETE', `/api/v1/knowledge/${doc.uuid}`, { token: readOnly.token }), 403, 'FORBIDDEN')
      expect((await t.http('POST', `/api/v1/agents/${agent.uuid}/knowledge/search`, { token: readOnly.token, body: { query: 'argon' } })).status).toBe(200)
      expect((await settled(alice, doc.uuid)).status).toBe('ready')
    })
  })

  describe('documents', () => {
    it('search refuses a blank or too long query and a limit out of 1..50 with 400s naming the field', async () => {
      const agent = await makeAgent(t, alice)
      const search = (body: unknown) => t.http('POST', `/api/v1/agents/${agent.uuid}/knowledge/search`, { token: alice.token, body })
      expectInvalid(await search({}), 'query')
      expectInvalid(await search({ query: '   ' }), 'query')
      expectInvalid(await search({ query: 'x'.repeat(2001) }), 'query')
      expectInvalid(await search({ query: 'reactor', limit: 0 }), 'limit')
      expectInvalid(await search({ query: 'reactor', limit: 51 }), 'limit')
      expectInvalid(await search({ query: 'reactor', limit: '5' }), 'limit')
      expectInvalid(await t.http('POST', `/api/v1/agents/0123-abcd/knowledge/search`, { token: alice.token, body: { query: 'x' } }), 'agent_uuid')
      expect((await search({ query: 'reactor' })).body).toEqual({ data: [] })
    })

    it('lists with status and name filters, paginated; 400 for a bad status', async () => {
      const agent = await makeAgent(t, alice)
      await trained(alice, agent.uuid, [
        { type: 'text', name: 'Alpha guide', text: 'Alpha text.' },
        { type: 'text', name: 'Beta guide', text: 'Beta text.' },
        { type: 'url', url: `${siteUrl}/missing.html` },
      ])
      const all = await t.http('GET', `/api/v1/agents/${agent.uuid}/knowledge?per_page=2`, { token: alice.token })
      expect(all.status).toBe(200)
      expect(all.body.meta).toMatchObject({ total: 3, per_page: 2, last_page: 2 })
      const failed = await t.http('GET', `/api/v1/agents/${agent.uuid}/knowledge?status=failed`, { token: alice.token })
      expect(failed.body.data.map((d: { source_type: string }) => d.source_type)).toEqual(['url'])
      const beta = await t.http('GET', `/api/v1/agents/${agent.uuid}/knowledge?search=beta`, { token: alice.token })
      expect(beta.body.data.map((d: { name: string }) => d.name)).toEqual(['Beta guide'])
      expectInvalid(await t.http('GET', `/api/v1/agents/${agent.uuid}/knowledge?status=done`, { token: alice.token }), 'status')
      expectInvalid(await t.http('GET', `/api/v1/knowledge/0123-abcd`, { token: alice.token }), 'document_uuid')
    })

    it('deletes a document with its chunks (204, then 404); deleting the agent deletes its knowledge', async () => {
      const agent = await makeAgent(t, alice)
      const [one, two] = await trained(alice, agent.uuid, [
        { type: 'text', name: 'One', text: 'First document text.' },
        { type: 'text', name: 'Two', text: 'Second document text.' },
      ])
      expect((await t.http('DELETE', `/api/v1/knowledge/${one.uuid}`, { token: alice.token })).status).toBe(204)
      expectErrorBody(await t.http('GET', `/api/v1/knowledge/${one.uuid}`, { token: alice.token }), 404, 'NOT_FOUND')
      const chunks = async (uuid: string) =>
        (await t.sql('select count(*)::int as count from knowledge_chunks c join knowledge_documents d on d.id = c.document_id where d.uuid = ?', [uuid]))[0].count
      expect(await chunks(one.uuid)).toBe(0)
      expect(await chunks(two.uuid)).toBeGreaterThan(0)
      expect((await t.http('DELETE', `/api/v1/agents/${agent.uuid}`, { token: alice.token })).status).toBe(204)
      const [{ count }] = await t.sql('select count(*)::int as count from knowledge_chunks c join agents a on a.id = c.agent_id where a.uuid = ?', [agent.uuid])
      expect(count).toBe(0)
    })

    it('deleting a document, or its agent, while it is processing leaves no chunks behind', async () => {
      const chunksOf = async (agentUuid: string) =>
        (await t.sql('select count(*)::int as count from knowledge_chunks c join agents a on a.id = c.agent_id where a.uuid = ?', [agentUuid]))[0].count
      for (const target of ['document', 'agent'] as const) {
        const agent = await makeAgent(t, alice)
        const res = await train(alice, agent.uuid, [{ type: 'url', url: `${siteUrl}/held/${target}` }])
        const doc = res.body.data[0]
        await until(async () => held.length, (count) => count > 0, 10_000)
        expect((await t.http('GET', `/api/v1/knowledge/${doc.uuid}`, { token: alice.token })).body.data.status).toBe('processing')
        const path = target === 'document' ? `/api/v1/knowledge/${doc.uuid}` : `/api/v1/agents/${agent.uuid}`
        expect((await t.http('DELETE', path, { token: alice.token })).status).toBe(204)
        held.shift()?.()
        // The job ends (its id is the document's uuid) without writing anything.
        await until(
          () => t.sql(`select state from pgboss.job where name = 'knowledge.ingest' and id = ?`, [doc.uuid]),
          (rows) => rows[0]?.state === 'completed',
          15_000,
        )
        expect(await chunksOf(agent.uuid)).toBe(0)
        const [{ count }] = await t.sql('select count(*)::int as count from knowledge_documents where uuid = ?', [doc.uuid])
        expect(count).toBe(0)
      }
    })

    it("the agent update's file.keys trains the files it names and untrains those it drops", async () => {
      const file = (name: string, text: string) => upload(t, { token: alice.token, files: [{ bytes: text, filename: name, type: 'text/plain' }] }).then((res) => res.body.data.key as string)
      const first = await file('first.txt', 'The first file talks about nebulae.')
      const second = await file('second.txt', 'The second file talks about quasars.')
      const agent = await makeAgent(t, alice, { file: { keys: [first, second] } })
      const docs = async () => (await t.http('GET', `/api/v1/agents/${agent.uuid}/knowledge`, { token: alice.token })).body.data as { media_key: string; uuid: string }[]
      const initial = await docs()
      expect(initial.map((d) => d.media_key).sort()).toEqual([first, second].sort())
      await Promise.all(initial.map((d) => settled(alice, d.uuid)))
      const updated = await t.http('PUT', `/api/v1/agents/${agent.uuid}`, { token: alice.token, body: { file: { keys: [second] } } })
      expect(updated.status, JSON.stringify(updated.body)).toBe(200)
      expect((await docs()).map((d) => d.media_key)).toEqual([second])
    })
  })

  describe('retrieval (docs/api/knowledge.md, "Retrieval")', () => {
    const agentIdOf = async (uuid: string) => Number((await t.sql('select id from agents where uuid = ?', [uuid]))[0].id)
    const fullText = async (agentUuid: string, query: string, limit = 5) =>
      (await retrieve(t.runtime.orm.em.fork(), { agentId: await agentIdOf(agentUuid), query, limit, mode: 'full-text', embedding: null })).chunks

    it('ranks the chunks holding every word first, then a chunk holding the rare word before chunks repeating a word most chunks hold', async () => {
      const agent = await makeAgent(t, alice)
      await trained(alice, agent.uuid, [
        { type: 'text', name: 'Both', text: 'The Zorblax reactor is on deck seven.' },
        { type: 'text', name: 'Rare', text: 'Zorblax manuals are kept in the library.' },
        ...Array.from({ length: 6 }, (_, i) => ({
          type: 'text',
          name: `Reactor log ${i}`,
          text: `Shift ${i}: the reactor hall, the reactor pumps, the reactor valves and the reactor vents were checked.`,
        })),
      ])
      const names = (await fullText(agent.uuid, 'Where is the Zorblax reactor?')).map((chunk) => chunk.documentName)
      // Before, every chunk holding either word was ranked by ts_rank_cd alone: four reactors outscored one Zorblax.
      expect(names.slice(0, 2)).toEqual(['Both', 'Rare'])
      expect(names.slice(2)).toHaveLength(3)
      for (const name of names.slice(2)) expect(name).toMatch(/^Reactor log /)
      // A word no chunk holds is left out instead of emptying the chunks that hold every word.
      expect((await fullText(agent.uuid, 'Zorblax reactor quuxinator', 1)).map((chunk) => chunk.documentName)).toEqual(['Both'])
      expect(await fullText(agent.uuid, 'quuxinator')).toEqual([])
    })

    it("keeps each agent's lexeme counts equal to its chunks' through training, deleting a document and deleting the agent", async () => {
      const agent = await makeAgent(t, alice)
      const agentId = await agentIdOf(agent.uuid)
      const [one] = await trained(alice, agent.uuid, [
        { type: 'text', name: 'One', text: "The lighthouse keeper's log: fog horns, fog lamps and the keeper's cat." },
        { type: 'text', name: 'Two', text: 'Fog over the harbour; the harbour master closed the harbour at dawn.' },
      ])
      const stored = () => t.sql('select lexeme, chunks from knowledge_lexemes where agent_id = ? order by lexeme', [agentId])
      const counted = () =>
        t.sql(
          `select lexeme, count(*)::int as chunks from knowledge_chunks c
             cross join lateral (select unnest(tsvector_to_array(c.tsv)) union all select '') l(lexeme)
           where c.agent_id = ? group by lexeme order by lexeme`,
          [agentId],
        )
      expect(await stored()).toEqual(await counted())
      expect(await stored()).toEqual(expect.arrayContaining([{ lexeme: '', chunks: 2 }, { lexeme: 'fog', chunks: 2 }, { lexeme: 'keeper', chunks: 1 }]))
      expect((await t.http('DELETE', `/api/v1/knowledge/${one.uuid}`, { token: alice.token })).status).toBe(204)
      expect(await stored()).toEqual(await counted())
      expect((await stored()).find((row) => row.lexeme === 'keeper')).toBeUndefined()
      expect((await t.http('DELETE', `/api/v1/agents/${agent.uuid}`, { token: alice.token })).status).toBe(204)
      expect(await stored()).toEqual([])
    })
  })

  describe('in runs', () => {
    it('an agent with metadata.knowledge puts the best chunks in a numbered block, emits knowledge.retrieved and stores citations', async () => {
      const agent = await makeAgent(t, alice, { metadata: { knowledge: true } })
      const [doc] = await trained(alice, agent.uuid, [
        { type: 'text', name: 'Reactor manual', text: FACT },
        { type: 'text', name: 'Cafeteria', text: 'Lunch is served at noon in the cafeteria.' },
      ])
      upstream.reset()
      const res = await t.http('POST', `/api/v1/agents/${agent.uuid}/run`, { token: alice.token, body: { input: 'How is the Zorblax reactor cooled?' } })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      const chat = upstream.requests.find((r) => r.path === '/v1/chat/completions')
      const system = chat?.body.messages.find((m: { role: string }) => m.role === 'system')?.content as string
      expect(system).toContain('<knowledge>')
      // Hybrid where the database has pgvector (PGlite always): the input was embedded too.
      expect(upstream.requests.some((r) => r.path === '/v1/embeddings')).toBe(t.runtime.knowledge.mode === 'hybrid')
      expect(system).toContain(`[1] Reactor manual\n${FACT}`)
      const answer = res.body.data.messages.find((m: { role: string }) => m.role === 'assistant')
      expect(answer.citations[0]).toMatchObject({ document_uuid: doc.uuid, document_name: 'Reactor manual' })
      expect(answer.citations[0].chunk_uuid).toMatch(UUID)
      const { events } = await readSse(`${t.url}/api/v1/runs/${res.body.data.run.uuid}/events`, { authorization: `Bearer ${alice.token}` })
      expect(events.map((e) => e.event).slice(0, 2)).toEqual(['run.started', 'knowledge.retrieved'])
      const retrieved = JSON.parse(events[1].data).data as { chunks: { document_uuid: string }[] }
      expect(retrieved.chunks[0].document_uuid).toBe(doc.uuid)
      const stored = await t.http('GET', `/api/v1/messages/${answer.uuid}`, { token: alice.token })
      expect(stored.body.data.citations).toEqual(answer.citations)
    })

    it('a shared agent uses its knowledge for whoever runs it; knowledge: false sends none', async () => {
      const agent = await makeAgent(t, alice, { metadata: { knowledge: true } })
      await trained(alice, agent.uuid, [{ type: 'text', name: 'Reactor manual', text: FACT }])
      await t.http('POST', `/api/v1/agents/${agent.uuid}/share`, { token: alice.token, body: { entity_type: 'user', entity_id: bob.id, permission: 'read' } })
      upstream.reset()
      const byBob = await t.http('POST', `/api/v1/agents/${agent.uuid}/run`, { token: bob.token, body: { input: 'What cools the Zorblax reactor?' } })
      expect(byBob.status, JSON.stringify(byBob.body)).toBe(200)
      expect(JSON.stringify(upstream.requests.at(-1)?.body.messages)).toContain('liquid argon')
      await t.http('PUT', `/api/v1/agents/${agent.uuid}`, { token: alice.token, body: { metadata: { knowledge: false } } })
      upstream.reset()
      const off = await t.http('POST', `/api/v1/agents/${agent.uuid}/run`, { token: alice.token, body: { input: 'What cools the Zorblax reactor?' } })
      expect(off.status).toBe(200)
      expect(JSON.stringify(upstream.requests.at(-1)?.body.messages)).not.toContain('liquid argon')
      expect(upstream.requests.some((r) => r.path === '/v1/embeddings')).toBe(false)
      expect(off.body.data.messages.find((m: { role: string }) => m.role === 'assistant').citations).toEqual([])
    })
  })
})

describe('lexemeGroups (the full-text ranking\'s groups)', () => {
  const lexeme = (name: string, chunks: number, total = 1000) => ({ lexeme: name, chunks, weight: Math.log(1 + total / chunks) })

  it('puts every lexeme first, then sets by summed weight: one rare lexeme before two common ones, a common lexeme alone last', () => {
    const groups = lexemeGroups([lexeme('zorblax', 2), lexeme('reactor', 600), lexeme('deck', 700)]).map((group) => group.map((l) => l.lexeme).join(' '))
    expect(groups).toEqual(['zorblax reactor deck', 'zorblax reactor', 'zorblax deck', 'zorblax', 'reactor deck', 'reactor', 'deck'])
  })

  it('answers no group for no lexeme, and breaks ties by the larger set, then the rarer lexemes', () => {
    expect(lexemeGroups([])).toEqual([])
    const total = 100
    const groups = lexemeGroups([lexeme('a', 10, total), lexeme('b', 10, total)]).map((group) => group.map((l) => l.lexeme).join(' '))
    expect(groups).toEqual(['a b', 'a', 'b'])
  })
})
