/**
 * The bearer-token cache (src/platform/auth-cache.ts): what a request changes is seen by the next
 * request at once, in this process and (with REDIS_URL) in every other; expiry and the TTL bound
 * every entry; failed look-ups are never cached; service scopes stay apart.
 *
 * createTestApp runs with the cache off (it passes authCacheTtlMs: 0 to createRuntime), so these tests start
 * their own API "processes" (a runtime and HTTP host each, cache on) over the test app's
 * database, as several API processes share one database and one Redis in distributed mode.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { startNode, type Node } from './helpers/nodes.ts'
import { ACME_KEY, expectErrorBody, GLOBEX_KEY, ISO, sha256 } from './helpers/expect.ts'

const REVOKED = 'Invalid, expired or revoked token'
const withRedis = Boolean(process.env.REDIS_URL)

/**
 * Another process hears of a change when the Redis message arrives, a moment after the change's
 * own response (Redis answers PUBLISH before it writes to the subscribers). Retrying for up to
 * 1 s, far inside the 5 s TTL, tells a delivered invalidation from an entry that merely expired.
 */
const eventually = (check: () => Promise<void>) => vi.waitFor(check, { timeout: 1000, interval: 10 })

describe('bearer token cache (src/platform/auth-cache.ts)', () => {
  let t: TestApp
  /** Two API processes with the cache on; they hear each other's invalidations through Redis when REDIS_URL is set. */
  let a: Node
  let b: Node

  beforeAll(async () => {
    t = await createTestApp()
    a = await startNode(t)
    b = await startNode(t)
  })
  afterAll(async () => {
    await a?.close()
    await b?.close()
    await t?.close()
  })

  /** GET /api/v1/user on `node`, asserting 200; answers the user. */
  async function me(node: Node, user: { token: string }, headers?: Record<string, string>) {
    const res = await node.http('GET', '/api/v1/user', { token: user.token, headers })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    return res.body.data
  }

  /** An application token of `user`, made on node `a`. */
  async function appToken(user: TestUser, body: Record<string, unknown> = {}) {
    const res = await a.http('POST', '/api/v1/access-tokens', { token: user.token, body: { name: 'integration', ...body } })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    return { uuid: String(res.body.data.uuid), token: String(res.body.data.access_token) }
  }

  describe('within one process', () => {
    it('works in the primary workspace from the cached caller, and a rename of it shows at once', async () => {
      const user = await t.make.user()
      const created = await a.http('POST', '/api/v1/agents', { token: user.token, body: { name: 'Cached context' } })
      expect(created.status, JSON.stringify(created.body)).toBe(201)
      expect(created.body.data.workspace.uuid).toBe(user.workspaceUuid)
      const renamed = await a.http('PUT', `/api/v1/workspaces/${user.workspaceUuid}`, { token: user.token, body: { name: 'Renamed home' } })
      expect(renamed.status).toBe(200)
      const read = await a.http('GET', `/api/v1/agents/${created.body.data.uuid}`, { token: user.token })
      expect(read.status).toBe(200)
      expect(read.body.data.workspace.name).toBe('Renamed home')
      expect(read.body.data.is_owner).toBe(true)
    })

    it("keeps another workspace's context a membership question: a member removed there is refused at once", async () => {
      const owner = await t.make.user()
      const member = await t.make.user()
      const team = await t.make.workspace(owner)
      await t.make.member(team, owner, member, 'admin')
      const headers = { 'x-workspace-uuid': team.uuid }
      expect((await a.http('GET', '/api/v1/agents', { token: member.token, headers })).status).toBe(200)
      await t.as(owner).workspaces.members.remove({ workspace_uuid: team.uuid, user_id: member.id })
      expect((await a.http('GET', '/api/v1/agents', { token: member.token, headers })).status).toBe(404)
      expect((await a.http('GET', '/api/v1/agents', { token: member.token })).status).toBe(200)
    })

    it('serves a known token from the cache: a revocation behind the services (raw SQL) shows only once the TTL has passed', async () => {
      const short = await startNode(t, 1000)
      try {
        const user = await t.make.user()
        await me(short, user)
        expect(short.runtime.authCache.size).toBe(1)
        const revokedAt = Date.now()
        await t.sql('update access_tokens set revoked_at = now() where token_hash = ?', [sha256(user.token)])
        await me(short, user)
        await vi.waitFor(async () => expect((await short.http('GET', '/api/v1/user', { token: user.token })).status).toBe(401), {
          timeout: 3000,
          interval: 50,
        })
        expect(Date.now() - revokedAt).toBeLessThan(1000 + 1000)
      } finally {
        await short.close()
      }
    })

    it('answers 401 for the same token right after logout', async () => {
      const user = await t.make.user()
      await me(a, user)
      await me(a, user)
      expect((await a.http('POST', '/api/v1/auth/logout', { token: user.token })).status).toBe(204)
      expectErrorBody(await a.http('GET', '/api/v1/user', { token: user.token }), 401, 'UNAUTHORIZED', REVOKED)
    })

    it('answers 401 for an application token right after it is deleted, and the session token keeps working', async () => {
      const user = await t.make.user()
      const created = await appToken(user)
      await me(a, created)
      await me(a, user)
      expect((await a.http('DELETE', `/api/v1/access-tokens/${created.uuid}`, { token: user.token })).status).toBe(204)
      expectErrorBody(await a.http('GET', '/api/v1/user', { token: created.token }), 401, 'UNAUTHORIZED', REVOKED)
      expect((await me(a, user)).id).toBe(user.id)
    })

    it('answers 401 once a cached token expires, although the TTL has not passed', async () => {
      const user = await t.make.user()
      const expiresAt = Date.now() + 1500
      const created = await appToken(user, { expires_at: new Date(expiresAt).toISOString() })
      await me(a, created)
      await me(a, created)
      await new Promise((resolve) => setTimeout(resolve, expiresAt - Date.now() + 50))
      expectErrorBody(await a.http('GET', '/api/v1/user', { token: created.token }), 401, 'UNAUTHORIZED', REVOKED)
    })

    it('never caches a refusal: a token that becomes valid again works on the next request', async () => {
      const user = await t.make.user()
      await t.sql("update access_tokens set expires_at = now() - interval '1 second' where token_hash = ?", [sha256(user.token)])
      expect((await a.http('GET', '/api/v1/user', { token: user.token })).status).toBe(401)
      await t.sql("update access_tokens set expires_at = now() + interval '1 hour' where token_hash = ?", [sha256(user.token)])
      expect((await me(a, user)).id).toBe(user.id)
    })

    it('keeps service scopes apart: a cached token is still unknown without its key or with another', async () => {
      const scoped = await t.make.user({ serviceKey: ACME_KEY })
      expect((await me(a, scoped, { 'x-service-authorization': ACME_KEY })).service_id).toBe('acme')
      expect((await a.http('GET', '/api/v1/user', { token: scoped.token })).status).toBe(401)
      expect(
        (await a.http('GET', '/api/v1/user', { token: scoped.token, headers: { 'x-service-authorization': GLOBEX_KEY } })).status,
      ).toBe(401)
    })

    it('still refuses mutations to a cached read-only token (403)', async () => {
      const user = await t.make.user()
      const reader = await appToken(user, { abilities: ['read'] })
      await me(a, reader)
      const res = await a.http('POST', '/api/v1/workspaces', { token: reader.token, body: { name: 'Not Allowed' } })
      expect(res.status).toBe(403)
      expect(res.body.code).toBe('FORBIDDEN')
    })

    it('answers the renamed primary workspace right after the rename', async () => {
      const user = await t.make.user()
      expect((await me(a, user)).primary_workspace.name).not.toBe('Renamed Primary')
      const res = await a.http('PUT', `/api/v1/workspaces/${user.workspaceUuid}`, { token: user.token, body: { name: 'Renamed Primary' } })
      expect(res.status).toBe(200)
      expect((await me(a, user)).primary_workspace.name).toBe('Renamed Primary')
    })

    it('records last_used_at at most once a minute while serving from the cache', async () => {
      const user = await t.make.user()
      const created = await appToken(user)
      const first = await a.http('GET', '/api/v1/user/token', { token: created.token })
      expect(first.body.data.last_used_at).toBeNull()
      let written: unknown
      await vi.waitFor(
        async () => {
          const [row] = await t.sql('select last_used_at from access_tokens where uuid = ?', [created.uuid])
          expect(row.last_used_at).not.toBeNull()
          written = row.last_used_at
        },
        { timeout: 5000 },
      )
      const later = await a.http('GET', '/api/v1/user/token', { token: created.token })
      expect(later.body.data.last_used_at).toMatch(ISO)
      await me(a, created)
      await new Promise((resolve) => setTimeout(resolve, 100))
      const [row] = await t.sql('select last_used_at from access_tokens where uuid = ?', [created.uuid])
      expect(String(row.last_used_at)).toBe(String(written))
    })
  })

  describe('primary workspace lost through another user', () => {
    let alice: TestUser
    beforeAll(async () => {
      alice = await t.make.user({ name: 'Alice Cache' })
    })

    /**
     * A member of a workspace of alice's that is their primary one (set with SQL, as no endpoint
     * does yet; a fresh user, so no process has them cached from before), cached in both processes.
     */
    async function memberWithPrimary(): Promise<{ member: TestUser; uuid: string }> {
      const member = await t.make.user({ name: 'Carol Cache' })
      const ws = await t.make.workspace(alice)
      await t.make.member(ws, alice, member)
      await t.sql('update users set primary_workspace_id = (select id from workspaces where uuid = ?) where id = ?', [ws.uuid, member.id])
      expect((await me(a, member)).primary_workspace.uuid).toBe(ws.uuid)
      expect((await me(b, member)).primary_workspace.uuid).toBe(ws.uuid)
      return { member, uuid: ws.uuid }
    }

    it('answers primary_workspace null right after the workspace is deleted', async () => {
      const { member, uuid } = await memberWithPrimary()
      expect((await a.http('DELETE', `/api/v1/workspaces/${uuid}`, { token: alice.token })).status).toBe(204)
      expect((await me(a, member)).primary_workspace).toBeNull()
      if (withRedis) await eventually(async () => expect((await me(b, member)).primary_workspace).toBeNull())
    })

    it('answers primary_workspace null right after the member is removed from it', async () => {
      const { member, uuid } = await memberWithPrimary()
      expect((await a.http('DELETE', `/api/v1/workspaces/${uuid}/members/${member.id}`, { token: alice.token })).status).toBe(204)
      expect((await me(a, member)).primary_workspace).toBeNull()
      if (withRedis) await eventually(async () => expect((await me(b, member)).primary_workspace).toBeNull())
    })
  })

  describe.skipIf(!withRedis)('across processes (Redis): within the message delivery, not the TTL', () => {
    it('answers 401 in the other process right after logout in this one', async () => {
      const user = await t.make.user()
      await me(a, user)
      await me(b, user)
      expect(b.runtime.authCache.size).toBeGreaterThan(0)
      expect((await a.http('POST', '/api/v1/auth/logout', { token: user.token })).status).toBe(204)
      await eventually(async () =>
        expectErrorBody(await b.http('GET', '/api/v1/user', { token: user.token }), 401, 'UNAUTHORIZED', REVOKED),
      )
    })

    it('answers 401 in the other process right after an application token is deleted in this one', async () => {
      const user = await t.make.user()
      const created = await appToken(user)
      await me(b, created)
      expect((await a.http('DELETE', `/api/v1/access-tokens/${created.uuid}`, { token: user.token })).status).toBe(204)
      await eventually(async () =>
        expectErrorBody(await b.http('GET', '/api/v1/user', { token: created.token }), 401, 'UNAUTHORIZED', REVOKED),
      )
    })

    it('answers the renamed primary workspace in the other process right after the rename', async () => {
      const user = await t.make.user()
      await me(b, user)
      const res = await a.http('PUT', `/api/v1/workspaces/${user.workspaceUuid}`, {
        token: user.token,
        body: { name: 'Renamed Elsewhere' },
      })
      expect(res.status).toBe(200)
      await eventually(async () => expect((await me(b, user)).primary_workspace.name).toBe('Renamed Elsewhere'))
    })
  })
})
