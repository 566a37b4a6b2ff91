/**
 * The read cache (src/platform/read-cache.ts): a repeated `GET /api/v1/agents/{uuid}` is served
 * from memory, every write through the API is seen by the next read at once (in this process
 * and, with REDIS_URL, in every other), and an answer is never served to another caller.
 * createTestApp runs with the cache off; these tests start API "processes" with it on.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { startNode, type Node } from './helpers/nodes.ts'

const withRedis = Boolean(process.env.REDIS_URL)

describe('read cache of GET /api/v1/agents/{agent_uuid}', () => {
  let t: TestApp
  let a: Node
  let b: Node
  let ada: TestUser
  let bea: TestUser

  beforeAll(async () => {
    t = await createTestApp()
    a = await startNode(t)
    b = await startNode(t)
    ada = await t.make.user({ name: 'Ada Cache' })
    bea = await t.make.user({ name: 'Bea Cache' })
  })
  afterAll(async () => {
    await a?.close()
    await b?.close()
    await t?.close()
  })

  async function agent(node: Node, user: TestUser, body: Record<string, unknown> = {}) {
    const res = await node.http('POST', '/api/v1/agents', { token: user.token, body: { name: 'Cached', ...body } })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    return String(res.body.data.uuid)
  }
  async function read(node: Node, user: TestUser, uuid: string) {
    const res = await node.http('GET', `/api/v1/agents/${uuid}`, { token: user.token })
    return { status: res.status, data: res.body?.data }
  }

  it('serves a repeated read from memory: a change behind the services (raw SQL) is not seen', async () => {
    const uuid = await agent(a, ada)
    expect((await read(a, ada, uuid)).data.name).toBe('Cached')
    await t.sql("update agents set name = 'Changed in SQL' where uuid = ?", [uuid])
    expect((await read(a, ada, uuid)).data.name).toBe('Cached')
    expect(a.runtime.readCache.size).toBeGreaterThan(0)
  })

  it('shows an update of the agent at once', async () => {
    const uuid = await agent(a, ada)
    await read(a, ada, uuid)
    const put = await a.http('PUT', `/api/v1/agents/${uuid}`, { token: ada.token, body: { name: 'Renamed' } })
    expect(put.status).toBe(200)
    expect((await read(a, ada, uuid)).data.name).toBe('Renamed')
  })

  it('shows a change of a bound tool at once (any write drops every cached read)', async () => {
    const tool = await a.http('POST', '/api/v1/tools', { token: ada.token, body: { name: 'Search', url: 'https://s.example/q' } })
    expect(tool.status).toBe(201)
    const uuid = await agent(a, ada, { tools: [{ tool_uuid: tool.body.data.uuid }] })
    expect((await read(a, ada, uuid)).data.tools[0].name).toBe('Search')
    const put = await a.http('PUT', `/api/v1/tools/${tool.body.data.uuid}`, { token: ada.token, body: { name: 'Find' } })
    expect(put.status).toBe(200)
    expect((await read(a, ada, uuid)).data.tools[0].name).toBe('Find')
  })

  it('never serves one caller the answer computed for another, and a removed share hides the agent at once', async () => {
    const uuid = await agent(a, ada, { visibility: 'private' })
    expect((await read(a, ada, uuid)).data.is_owner).toBe(true)
    expect((await read(a, bea, uuid)).status).toBe(404)
    const share = (permission: string | null) =>
      a.http('POST', `/api/v1/agents/${uuid}/share`, { token: ada.token, body: { entity_type: 'user', entity_id: bea.id, permission } })
    expect((await share('read')).status).toBe(200)
    const seen = await read(a, bea, uuid)
    expect(seen.status).toBe(200)
    expect(seen.data.is_owner).toBe(false)
    expect(seen.data.shares).toEqual([])
    expect((await read(a, ada, uuid)).data.shares).toHaveLength(1)
    expect((await share(null)).status).toBe(200)
    expect((await read(a, bea, uuid)).status).toBe(404)
  })

  it('keeps the cached reads through a metrics POST, which stores nothing', async () => {
    const uuid = await agent(a, ada)
    expect((await read(a, ada, uuid)).data.name).toBe('Cached')
    await t.sql("update agents set name = 'Changed in SQL' where uuid = ?", [uuid])
    const metrics = await a.http('POST', '/v1/agents/metrics', {
      token: ada.token,
      body: { calculation: 'accumulated_count' },
      headers: { 'Cache-Control': 'no-cache' },
    })
    expect(metrics.status, JSON.stringify(metrics.body)).toBe(200)
    expect((await read(a, ada, uuid)).data.name).toBe('Cached')
    // A mutation that stores something still drops them.
    expect((await a.http('POST', '/api/v1/agents', { token: ada.token, body: { name: 'Other' } })).status).toBe(201)
    expect((await read(a, ada, uuid)).data.name).toBe('Changed in SQL')
  })

  it('answers 401 for a revoked token even when its read is cached', async () => {
    const uuid = await agent(a, ada)
    await read(a, ada, uuid)
    const session = await t.caller().auth.signIn({ email: ada.email, password: ada.password })
    const token = session.data.access_token
    expect((await a.http('GET', `/api/v1/agents/${uuid}`, { token })).status).toBe(200)
    expect((await a.http('POST', '/api/v1/auth/logout', { token })).status).toBe(204)
    expect((await a.http('GET', `/api/v1/agents/${uuid}`, { token })).status).toBe(401)
  })

  it.runIf(withRedis)('shows a write made in another process (announced through Redis)', async () => {
    const uuid = await agent(a, ada)
    expect((await read(a, ada, uuid)).data.name).toBe('Cached')
    const put = await b.http('PUT', `/api/v1/agents/${uuid}`, { token: ada.token, body: { description: 'From process b' } })
    expect(put.status).toBe(200)
    // The message arrives a moment after b's answer; far inside the 5 s lifetime of an entry.
    await vi.waitFor(async () => expect((await read(a, ada, uuid)).data.description).toBe('From process b'), { timeout: 1000, interval: 10 })
  })
})
