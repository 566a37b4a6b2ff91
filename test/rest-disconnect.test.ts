/**
 * A REST client that disconnects (src/http/rest-handler.ts): the call's signal aborts when the
 * client goes away before the answer is written, and never after a normal answer. Generating an
 * agent or a workflow (docs/api/generate-and-leaderboard.md, docs/api/workflows.md) stops its
 * model call then, and stores nothing; the model is test/helpers/upstream.ts over loopback.
 */
import { request as httpRequest, type ClientRequest } from 'node:http'
import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { disconnectSignal } from '../src/http/rest-handler.ts'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { startUpstream, type Upstream } from './helpers/upstream.ts'

/** Polls `check` every 20 ms until it is true or `ms` pass; answers whether it became true. */
async function eventually(check: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const until = Date.now() + ms
  for (;;) {
    if (await check()) return true
    if (Date.now() > until) return false
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** Starts a POST of `body` as JSON to `url` and leaves it open; errors of the aborted request are expected. */
function openPost(url: string, token: string, body: unknown): ClientRequest {
  const text = JSON.stringify(body)
  const req = httpRequest(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) },
  })
  req.on('error', () => {})
  req.end(text)
  return req
}

describe('disconnectSignal (the call signal of a REST request)', () => {
  let app: FastifyInstance
  let url: string
  const signals: AbortSignal[] = []
  let release: () => void = () => {}

  beforeAll(async () => {
    app = Fastify()
    app.get('/quick', async (_request, reply) => {
      signals.push(disconnectSignal(reply))
      return { ok: true }
    })
    app.get('/slow', async (_request, reply) => {
      signals.push(disconnectSignal(reply))
      await new Promise<void>((resolve) => (release = resolve))
      return { ok: true }
    })
    url = await app.listen({ port: 0, host: '127.0.0.1' })
  })
  afterAll(async () => {
    release()
    await app.close()
  })
  beforeEach(() => void signals.splice(0))

  it('stays unaborted after a normal answer, also once the connection closes', async () => {
    const res = await fetch(`${url}/quick`, { headers: { connection: 'close' } })
    expect(await res.json()).toEqual({ ok: true })
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(signals).toHaveLength(1)
    expect(signals[0].aborted).toBe(false)
  })

  it('aborts when the client disconnects before the answer', async () => {
    const req = httpRequest(`${url}/slow`)
    req.on('error', () => {})
    req.end()
    expect(await eventually(() => signals.length === 1, 2_000)).toBe(true)
    expect(signals[0].aborted).toBe(false)
    req.destroy()
    expect(await eventually(() => signals[0].aborted, 2_000)).toBe(true)
  })
})

describe('generation stops when its REST client disconnects', () => {
  let t: TestApp
  let upstream: Upstream
  let alice: TestUser
  const count = async (table: 'agents' | 'workflows') => Number((await t.sql(`select count(*)::int as n from ${table}`))[0].n)

  beforeAll(async () => {
    upstream = await startUpstream()
    // A generous model deadline: what ends the model call below is the client leaving.
    t = await createTestApp({ OPENAI_API_KEY: 'sk-upstream-test', OPENAI_BASE_URL: upstream.url, LLM_TIMEOUT_MS: '30000' })
    alice = await t.make.user({ name: 'Alice Builder' })
  })
  afterAll(async () => {
    await t?.close()
    await upstream?.close()
  })
  beforeEach(() => upstream.reset())

  it.each([
    ['agents', '/api/v1/agents/generate'],
    ['workflows', '/api/v1/workflows/generate'],
  ] as const)('POST %s/generate: the model call is aborted at once and nothing is stored', async (table, path) => {
    const before = await count(table)
    upstream.enqueue({ kind: 'slow', delayMs: 20_000 })
    const req = openPost(`${t.url}${path}`, alice.token, { description: 'Plans trips on a budget.' })
    expect(await eventually(() => upstream.pending() === 1, 5_000)).toBe(true)
    const left = Date.now()
    req.destroy()
    // The upstream sees its request go away: the service aborted the model call.
    expect(await eventually(() => upstream.pending() === 0, 5_000)).toBe(true)
    expect(Date.now() - left).toBeLessThan(5_000)
    expect(upstream.requests).toHaveLength(1)
    expect(await count(table)).toBe(before)
  })

  it('a run goes on without its client: its answer is stored (docs/api/runs.md)', async () => {
    const agent = await t.http('POST', '/api/v1/agents', { token: alice.token, body: { name: 'Echo', instruction: 'Repeat.' } })
    expect(agent.status, JSON.stringify(agent.body)).toBe(201)
    upstream.enqueue({ kind: 'slow', delayMs: 300 })
    const req = openPost(`${t.url}/api/v1/agents/${agent.body.data.uuid}/run`, alice.token, { input: 'hello' })
    expect(await eventually(() => upstream.pending() === 1, 5_000)).toBe(true)
    req.destroy()
    const succeeded = async () =>
      (await t.sql(`select status from runs where agent_id = (select id from agents where uuid = ?)`, [agent.body.data.uuid]))[0]?.status ===
      'succeeded'
    expect(await eventually(succeeded, 5_000)).toBe(true)
  })
})
