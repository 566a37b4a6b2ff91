/**
 * `Idempotency-Key` on POSTs (docs/api/conventions.md, "Idempotency keys"; src/http/idempotency.ts),
 * over real HTTP: a retry with the same key and body answers the kept answer byte for byte with
 * `Idempotent-Replayed: true` and makes nothing new (no second row, token, run or model call,
 * streamed answers included); another body is a 422 naming the header; a retry while the first is
 * in flight a 409 with `Retry-After: 1`; failures that stored nothing are not kept; keys of other
 * callers never collide; malformed keys are 400s; kept answers are sealed.
 */
import { request as httpRequest } from 'node:http'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { startUpstream, type Upstream } from './helpers/upstream.ts'
import { expectErrorBody } from './helpers/expect.ts'
import { expectNamed } from './helpers/agents.ts'
import { createRuntime } from '../src/app.ts'
import { buildHttpApp } from '../src/http/app.ts'
import { createLogger } from '../src/platform/logger.ts'

/** A raw POST: the exact bytes and headers of the answer. */
async function post(t: TestApp, path: string, options: { token?: string; key?: string; body?: unknown; headers?: Record<string, string> }) {
  const response = await fetch(`${t.url}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...(options.key !== undefined ? { 'idempotency-key': options.key } : {}),
      ...options.headers,
    },
    body: JSON.stringify(options.body ?? {}),
  })
  return { status: response.status, headers: response.headers, text: await response.text() }
}

describe('Idempotency-Key', () => {
  let t: TestApp
  let upstream: Upstream
  let ada: TestUser
  let agentUuid: string
  let n = 0
  const key = () => `key-${Date.now()}-${(n += 1)}`

  beforeAll(async () => {
    upstream = await startUpstream()
    t = await createTestApp({ OPENAI_API_KEY: 'sk-upstream-test', OPENAI_BASE_URL: upstream.url, LLM_TIMEOUT_MS: '5000' })
    ada = await t.make.user()
    const agent = await t.http('POST', '/api/v1/agents', { token: ada.token, body: { name: 'Replayed', instruction: 'Answer.' } })
    agentUuid = agent.body.data.uuid
  })
  afterAll(async () => {
    await t?.close()
    await upstream?.close()
  })
  beforeEach(() => upstream.reset())

  it('replays a created resource byte for byte and creates it once', async () => {
    const k = key()
    const body = { name: 'Once', instruction: 'Be brief.', metadata: { b: 'one', a: 'two' } }
    const first = await post(t, '/api/v1/agents', { token: ada.token, key: k, body })
    expect(first.status, first.text).toBe(201)
    expect(first.headers.get('idempotent-replayed')).toBeNull()
    // The same body with its keys in another order is the same request.
    const again = await post(t, '/api/v1/agents', {
      token: ada.token,
      key: k,
      body: { metadata: { a: 'two', b: 'one' }, instruction: 'Be brief.', name: 'Once' },
    })
    expect(again.status).toBe(201)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.headers.get('content-type')).toBe(first.headers.get('content-type'))
    expect(again.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'))
    expect(again.text).toBe(first.text)
    const list = await t.http('GET', '/api/v1/agents?search=Once', { token: ada.token })
    expect(list.body.data.filter((agent: { name: string }) => agent.name === 'Once')).toHaveLength(1)
  })

  it('replays a new token, once made, sealed at rest', async () => {
    const k = key()
    const first = await post(t, '/api/v1/access-tokens', { token: ada.token, key: k, body: { name: 'replayed token' } })
    expect(first.status).toBe(201)
    const again = await post(t, '/api/v1/access-tokens', { token: ada.token, key: k, body: { name: 'replayed token' } })
    expect(again.text).toBe(first.text)
    const plaintext = JSON.parse(first.text).data.access_token
    expect(typeof plaintext).toBe('string')
    const tokens = await t.sql(`select count(*)::int as n from access_tokens where name = 'replayed token'`)
    expect(tokens).toEqual([{ n: 1 }])
    const rows = await t.sql('select answer_ciphertext from idempotency_keys')
    expect(rows.length).toBeGreaterThan(0)
    for (const row of rows) expect(String(row.answer_ciphertext)).not.toContain(plaintext)
    // The replayed token works: it is the one made.
    expect((await t.http('GET', '/api/v1/user', { token: plaintext })).status).toBe(200)
  })

  it('refuses another body with the same key (422 naming Idempotency-Key), and another query or workspace too', async () => {
    const k = key()
    expect((await post(t, '/api/v1/prompts', { token: ada.token, key: k, body: { name: 'First', content: 'Hi' } })).status).toBe(201)
    const other = await post(t, '/api/v1/prompts', { token: ada.token, key: k, body: { name: 'Second', content: 'Hi' } })
    expect(other.status).toBe(422)
    const parsed = JSON.parse(other.text)
    expect(parsed).toMatchObject({ code: 'UNPROCESSABLE_CONTENT', issues: [{ path: ['Idempotency-Key'] }] })
    const workspace = await t.make.workspace(ada)
    const elsewhere = await post(t, '/api/v1/prompts', {
      token: ada.token,
      key: k,
      body: { name: 'First', content: 'Hi' },
      headers: { 'x-workspace-uuid': workspace.uuid },
    })
    expect(elsewhere.status).toBe(422)
    expect(await t.sql(`select count(*)::int as n from prompts where name in ('First', 'Second')`)).toEqual([{ n: 1 }])
  })

  it('runs a failure that stored nothing again, and keeps a run that failed at the provider', async () => {
    const k = key()
    const bad = await post(t, '/api/v1/prompts', { token: ada.token, key: k, body: { name: '' } })
    expect(bad.status).toBe(400)
    // Not kept: the same key runs the corrected request.
    const fixed = await post(t, '/api/v1/prompts', { token: ada.token, key: k, body: { name: 'Fixed', content: 'Hi' } })
    expect(fixed.status).toBe(201)
    expect(fixed.headers.get('idempotent-replayed')).toBeNull()

    const failing = key()
    upstream.enqueue({ kind: 'status', status: 500 }, { kind: 'status', status: 500 }, { kind: 'status', status: 500 })
    const first = await post(t, `/api/v1/agents/${agentUuid}/run`, { token: ada.token, key: failing, body: { input: 'Fail please' } })
    expect(first.status).toBe(502)
    expect(first.headers.get('x-run-uuid')).toMatch(/^[0-9a-f-]{36}$/)
    const calls = upstream.requests.length
    const again = await post(t, `/api/v1/agents/${agentUuid}/run`, { token: ada.token, key: failing, body: { input: 'Fail please' } })
    expect(again.status).toBe(502)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.text).toBe(first.text)
    expect(upstream.requests.length).toBe(calls)
  })

  it('keeps the answer a client that gave up never read, not an empty one: its retry replays the run', async () => {
    const k = key()
    upstream.enqueue({ kind: 'slow', delayMs: 800 })
    const text = JSON.stringify({ input: 'Gave up' })
    const req = httpRequest(`${t.url}/api/v1/agents/${agentUuid}/run`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${ada.token}`,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(text),
        'idempotency-key': k,
      },
    })
    req.on('error', () => {})
    req.end(text)
    await new Promise((resolve) => setTimeout(resolve, 300))
    req.destroy()
    // The run goes on without its client (docs/api/runs.md); its answer is kept when it ends.
    let again = await post(t, `/api/v1/agents/${agentUuid}/run`, { token: ada.token, key: k, body: { input: 'Gave up' } })
    for (let i = 0; again.status === 409 && i < 50; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      again = await post(t, `/api/v1/agents/${agentUuid}/run`, { token: ada.token, key: k, body: { input: 'Gave up' } })
    }
    expect(again.status, again.text).toBe(200)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(JSON.parse(again.text).data.run.output).toContain('Gave up')
    expect(upstream.requests).toHaveLength(1)
  })

  it('runs a 502 that stored nothing (a generation the provider failed) again', async () => {
    const k = key()
    upstream.enqueue({ kind: 'status', status: 500 }, { kind: 'status', status: 500 }, { kind: 'status', status: 500 })
    const first = await post(t, '/api/v1/agents/generate', { token: ada.token, key: k, body: { description: 'An agent that helps' } })
    expect(first.status).toBe(502)
    expect(first.headers.get('x-run-uuid')).toBeNull()
    const calls = upstream.requests.length
    const again = await post(t, '/api/v1/agents/generate', { token: ada.token, key: k, body: { description: 'An agent that helps' } })
    expect(again.headers.get('idempotent-replayed')).toBeNull()
    expect(upstream.requests.length).toBeGreaterThan(calls)
  })

  it('answers 409 with Retry-After: 1 while the first request runs, then replays it with no second run or model call', async () => {
    const k = key()
    upstream.enqueue({ kind: 'slow', delayMs: 1500 })
    const first = post(t, `/api/v1/agents/${agentUuid}/run`, { token: ada.token, key: k, body: { input: 'Slowly' } })
    await new Promise((resolve) => setTimeout(resolve, 400))
    const during = await post(t, `/api/v1/agents/${agentUuid}/run`, { token: ada.token, key: k, body: { input: 'Slowly' } })
    expect(during.status).toBe(409)
    expect(during.headers.get('retry-after')).toBe('1')
    expect(JSON.parse(during.text).code).toBe('CONFLICT')
    const answered = await first
    expect(answered.status).toBe(200)
    const after = await post(t, `/api/v1/agents/${agentUuid}/run`, { token: ada.token, key: k, body: { input: 'Slowly' } })
    expect(after.text).toBe(answered.text)
    expect(upstream.requests).toHaveLength(1)
    const runUuid = JSON.parse(answered.text).data.run.uuid
    expect(await t.sql(`select count(*)::int as n from runs where input::text like '%Slowly%'`)).toEqual([{ n: 1 }])
    expect(runUuid).toMatch(/^[0-9a-f-]{36}$/)
  })

  it('replays a streamed run answer byte for byte without a second run', async () => {
    const k = key()
    const first = await post(t, `/api/v1/agents/${agentUuid}/run`, { token: ada.token, key: k, body: { input: 'Stream it', stream: true } })
    expect(first.status).toBe(200)
    expect(first.headers.get('content-type')).toContain('text/event-stream')
    expect(first.text).toContain('Echo: Stream it')
    const again = await post(t, `/api/v1/agents/${agentUuid}/run`, { token: ada.token, key: k, body: { input: 'Stream it', stream: true } })
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.headers.get('content-type')).toBe(first.headers.get('content-type'))
    expect(again.text).toBe(first.text)
    expect(upstream.requests).toHaveLength(1)
  })

  it('keeps keys of other callers apart: another token of the same user, another user', async () => {
    const k = key()
    const first = await post(t, '/api/v1/prompts', { token: ada.token, key: k, body: { name: 'Mine', content: 'Hi' } })
    expect(first.status).toBe(201)
    const application = await t.http('POST', '/api/v1/access-tokens', { token: ada.token, body: { name: 'second token' } })
    const adaToken = application.body.data.access_token
    const sameUser = await post(t, '/api/v1/prompts', { token: adaToken, key: k, body: { name: 'Mine', content: 'Hi' } })
    expect(sameUser.status).toBe(201)
    expect(sameUser.headers.get('idempotent-replayed')).toBeNull()
    const bob = await t.make.user()
    const otherUser = await post(t, '/api/v1/prompts', { token: bob.token, key: k, body: { name: 'Mine', content: 'Hi' } })
    expect(otherUser.status).toBe(201)
    expect(otherUser.headers.get('idempotent-replayed')).toBeNull()
    expect(JSON.parse(otherUser.text).data.uuid).not.toBe(JSON.parse(first.text).data.uuid)
  })

  it('refuses a malformed key (400 naming Idempotency-Key) and ignores the header on other methods', async () => {
    for (const bad of ['', 'x'.repeat(256), 'tab\there', 'ünïcode']) {
      const res = await t.http('POST', '/api/v1/prompts', {
        token: ada.token,
        headers: { 'idempotency-key': bad },
        body: { name: 'Never', content: 'x' },
      })
      expectNamed(res, 'Idempotency-Key')
    }
    expect(await t.sql(`select count(*)::int as n from prompts where name = 'Never'`)).toEqual([{ n: 0 }])
    const max = await t.http('POST', '/api/v1/prompts', {
      token: ada.token,
      headers: { 'idempotency-key': 'k'.repeat(255) },
      body: { name: 'Longest key', content: 'x' },
    })
    expect(max.status).toBe(201)
    const read = await t.http('GET', `/api/v1/agents/${agentUuid}`, { token: ada.token, headers: { 'idempotency-key': '' } })
    expect(read.status).toBe(200)
    expectErrorBody(
      await t.http('POST', '/api/v1/prompts', { headers: { 'idempotency-key': key() }, body: { name: 'x', content: 'x' } }),
      401,
      'UNAUTHORIZED',
    )
  })

  it.runIf(Boolean(process.env.DATABASE_URL))(
    'replays through a second server on the same database, and refuses another body there',
    async () => {
      const k = key()
      const first = await post(t, '/api/v1/prompts', { token: ada.token, key: k, body: { name: 'Shared', content: 'Hi' } })
      expect(first.status).toBe(201)
      // Another runtime and HTTP host on the same PostgreSQL database: what is kept lives there, not in a process.
      const runtime = await createRuntime(t.config, {
        migrate: false,
        worker: false,
        log: createLogger(t.config),
        authCacheTtlMs: 0,
        readCacheTtlMs: 0,
      })
      const { app } = await buildHttpApp(runtime)
      await app.listen({ port: 0, host: '127.0.0.1' })
      try {
        const address = app.server.address()
        const other = { url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}` } as TestApp
        const again = await post(other, '/api/v1/prompts', { token: ada.token, key: k, body: { name: 'Shared', content: 'Hi' } })
        expect(again.headers.get('idempotent-replayed')).toBe('true')
        expect(again.text).toBe(first.text)
        expect((await post(other, '/api/v1/prompts', { token: ada.token, key: k, body: { name: 'Shared 2', content: 'Hi' } })).status).toBe(
          422,
        )
      } finally {
        await app.close()
        await runtime.close()
      }
    },
  )
})
