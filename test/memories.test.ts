/**
 * Memories (routers/memories.router.ts, src/threads/memories.service.ts; docs/api/resources.md,
 * "memories"): facts agent runs learned about a user. Only that user, working in the workspace
 * the memory was learned in, lists, reads, edits and deletes it; anyone else gets a 404 that
 * says nothing of it. Runs write memories, so these tests insert them with SQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestApp, TestUser } from './helpers/app.ts'
import { expectErrorBody, expectInvalid, hiddenCheck, ISO } from './helpers/expect.ts'
import { strangersOfCarols, teamCast } from './helpers/resources.ts'
import { workspaceId } from './helpers/rows.ts'

const MEMORY_KEYS = ['agent', 'content', 'created_at', 'run_uuid', 'updated_at', 'user_id', 'uuid', 'workspace_uuid']

/** A 404 that says nothing of the hidden memory. */
const expectHidden = hiddenCheck('Memory')

describe('memories', () => {
  let t: TestApp
  let alice: TestUser
  let bob: TestUser
  let carol: TestUser
  let dave: TestUser
  let reader: string
  let strangers: ReturnType<typeof strangersOfCarols>
  let team: { uuid: string }
  let inTeam: () => Record<string, string>
  let helper: { uuid: string; name: string }
  let teamAgent: { uuid: string; name: string }
  let counter = 0

  beforeAll(async () => {
    ;({ t, alice, bob, carol, dave, reader, team, inTeam } = await teamCast('Memory Team'))
    strangers = strangersOfCarols({ alice, bob, carol, dave, inTeam })
    helper = (await t.as(alice).agents.create({ name: 'Helper', profile_photo_config: { emoji: '🧠' } })).data
    teamAgent = (await t.as(alice, inTeam()).agents.create({ name: 'Team helper', visibility: 'workspace' })).data
  })
  afterAll(async () => t?.close())

  /** A memory of `user` in workspace `workspaceUuid`, learned by `agentUuid` (or none), `seconds` after a fixed instant. */
  const remember = async (user: TestUser, content: string, o: { workspaceUuid?: string; agentUuid?: string | null; runId?: number } = {}) => {
    counter += 1
    const [row] = await t.sql(
      `insert into memories (uuid, content, agent_id, run_id, user_id, workspace_id, created_at, updated_at)
       values (gen_random_uuid(), ?, (select id from agents where uuid = ?), ?, ?, ?, now() + make_interval(secs => ?), now() + make_interval(secs => ?))
       returning uuid`,
      [content, o.agentUuid ?? null, o.runId ?? null, user.id, await workspaceId(t, o.workspaceUuid ?? user.workspaceUuid), counter, counter],
    )
    return { uuid: String(row.uuid), name: content }
  }
  const stored = async (uuid: string) => (await t.sql('select content from memories where uuid = ?', [uuid]))[0]
  const uuidsOf = (res: { body: { data: { uuid: string }[] } }) => res.body.data.map((x) => x.uuid)

  describe('memories.list (GET /api/v1/memories)', () => {
    it("lists only the caller's memories of the workspace context, newest first, filtered by agent_uuid and search, paginated", async () => {
      const m1 = await remember(alice, 'Prefers window seats', { agentUuid: helper.uuid })
      const m2 = await remember(alice, 'Vegetarian, likes spicy food', { agentUuid: helper.uuid })
      const m3 = await remember(alice, 'Lives in Porto')
      const inTeamMemory = await remember(alice, 'Team: owns the roadmap', { workspaceUuid: team.uuid, agentUuid: teamAgent.uuid })
      const carols = await remember(carol, 'Carol is allergic to nuts', { workspaceUuid: team.uuid, agentUuid: teamAgent.uuid })
      const bobs = await remember(bob, 'Bob secret fact')

      const res = await t.http('GET', '/api/v1/memories', { token: alice.token })
      expect(res.status).toBe(200)
      expect(Object.keys(res.body).sort()).toEqual(['data', 'links', 'meta'])
      expect(uuidsOf(res)).toEqual([m3.uuid, m2.uuid, m1.uuid])
      for (const memory of res.body.data) expect(Object.keys(memory).sort()).toEqual(MEMORY_KEYS)
      expect(res.body.data[1]).toEqual({
        uuid: m2.uuid,
        content: 'Vegetarian, likes spicy food',
        agent: { uuid: helper.uuid, name: 'Helper', profile_photo_url: null, profile_photo_config: { emoji: '🧠' } },
        run_uuid: null,
        user_id: alice.id,
        workspace_uuid: alice.workspaceUuid,
        created_at: res.body.data[1].created_at,
        updated_at: res.body.data[1].updated_at,
      })
      expect(res.body.data[1].created_at).toMatch(ISO)
      expect(res.body.data[0].agent).toBeNull()

      const teamList = await t.http('GET', '/api/v1/memories', { token: alice.token, headers: inTeam() })
      expect(uuidsOf(teamList)).toEqual([inTeamMemory.uuid])
      expect(uuidsOf(await t.http('GET', '/api/v1/memories', { token: dave.token, headers: inTeam() }))).toEqual([])
      expect(uuidsOf(await t.http('GET', '/api/v1/memories', { token: carol.token, headers: inTeam() }))).toEqual([carols.uuid])
      expect(uuidsOf(await t.http('GET', '/api/v1/memories', { token: bob.token }))).toEqual([bobs.uuid])

      const byAgent = await t.http('GET', `/api/v1/memories?agent_uuid=${helper.uuid}`, { token: alice.token })
      expect(uuidsOf(byAgent)).toEqual([m2.uuid, m1.uuid])
      const search = await t.http('GET', '/api/v1/memories?search=SPICY', { token: alice.token })
      expect(uuidsOf(search)).toEqual([m2.uuid])
      const oldest = await t.http('GET', '/api/v1/memories?sort=created_at&per_page=2&page=2', { token: reader })
      expect(oldest.status).toBe(200)
      expect(uuidsOf(oldest)).toEqual([m3.uuid])
      expect(oldest.body.meta).toMatchObject({ total: 3, current_page: 2, last_page: 2, per_page: 2 })
    })

    it("shows a deleted agent's memories with agent null, and run_uuid when a run wrote them", async () => {
      const doomed = (await t.as(alice).agents.create({ name: 'Doomed' })).data
      const [run] = await t.sql(
        `insert into runs (uuid, kind, status, user_id, workspace_id, created_at, updated_at)
         values (gen_random_uuid(), 'agent', 'succeeded', ?, ?, now(), now()) returning id::float8 as id, uuid`,
        [alice.id, await workspaceId(t, alice.workspaceUuid)],
      )
      const memory = await remember(alice, 'Learned by a doomed agent', { agentUuid: doomed.uuid, runId: Number(run.id) })
      await t.as(alice).agents.delete({ agent_uuid: doomed.uuid })
      const res = await t.http('GET', `/api/v1/memories/${memory.uuid}`, { token: alice.token })
      expect(res.body.data).toMatchObject({ agent: null, run_uuid: run.uuid })
    })

    it.each([
      ['a malformed agent_uuid', 'agent_uuid=helper', 'agent_uuid'],
      ['an unknown sort', 'sort=content', 'sort'],
      ['page 0', 'page=0', 'page'],
      ['per_page over 100', 'per_page=101', 'per_page'],
      ['a search holding a NUL character', 'search=%00', 'search'],
      ['an unknown parameter', 'user_id=1', ''],
    ])('answers 400 for %s', async (_label, query, path) => {
      expectInvalid(await t.http('GET', `/api/v1/memories?${query}`, { token: alice.token }), path)
    })

    it('answers 401 without a token', async () => {
      expectErrorBody(await t.http('GET', '/api/v1/memories'), 401, 'UNAUTHORIZED')
    })
  })

  describe('memories.retrieve (GET /api/v1/memories/{memory_uuid})', () => {
    it('answers the memory to its owner (also with a read-only token)', async () => {
      const memory = await remember(alice, 'Has two cats', { agentUuid: helper.uuid })
      const res = await t.http('GET', `/api/v1/memories/${memory.uuid}`, { token: reader })
      expect(res.status).toBe(200)
      expect(res.body.data).toMatchObject({ uuid: memory.uuid, content: 'Has two cats', agent: { uuid: helper.uuid } })
    })

    it('answers 404 revealing nothing to another tenant, another member, the workspace owner and admin, and to its owner in another workspace', async () => {
      const carols = await remember(carol, 'Carol private memory', { workspaceUuid: team.uuid })
      for (const caller of strangers) {
        expectHidden(await t.http('GET', `/api/v1/memories/${carols.uuid}`, caller), carols)
      }
      expect((await t.http('GET', `/api/v1/memories/${carols.uuid}`, { token: carol.token, headers: inTeam() })).status).toBe(200)
      expectInvalid(await t.http('GET', '/api/v1/memories/42', { token: alice.token }), 'memory_uuid')
      expectErrorBody(await t.http('GET', `/api/v1/memories/${carols.uuid}`), 401, 'UNAUTHORIZED')
    })
  })

  describe('memories.update (PUT /api/v1/memories/{memory_uuid})', () => {
    it('replaces the content', async () => {
      const memory = await remember(alice, 'Likes tea', { agentUuid: helper.uuid })
      const before = (await t.http('GET', `/api/v1/memories/${memory.uuid}`, { token: alice.token })).body.data
      const res = await t.http('PUT', `/api/v1/memories/${memory.uuid}`, { token: alice.token, body: { content: 'Likes green tea, no sugar' } })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body.data).toEqual({ ...before, content: 'Likes green tea, no sugar', updated_at: res.body.data.updated_at })
      expect((await stored(memory.uuid)).content).toBe('Likes green tea, no sugar')
      const longest = await t.http('PUT', `/api/v1/memories/${memory.uuid}`, { token: alice.token, body: { content: 'm'.repeat(2000) } })
      expect(longest.status).toBe(200)
    })

    it.each([
      ['a missing content', {}, 'content'],
      ['an empty content', { content: '' }, 'content'],
      ['a blank content', { content: '\t ' }, 'content'],
      ['a content over 2,000 characters', { content: 'm'.repeat(2001) }, 'content'],
      ['a content holding a NUL character', { content: 'a\u0000' }, 'content'],
      ['a content holding a lone surrogate', { content: '\uD83D' }, 'content'],
      ['a content that is a number', { content: 7 }, 'content'],
      ['an unknown field', { content: 'x', agent_uuid: '0190a8f0-0000-7000-8000-000000000000' }, ''],
    ])('answers 400 naming the field for %s, changing nothing', async (_label, body, path) => {
      const memory = await remember(alice, 'Unchanged memory')
      expectInvalid(await t.http('PUT', `/api/v1/memories/${memory.uuid}`, { token: alice.token, body }), path)
      expect((await stored(memory.uuid)).content).toBe('Unchanged memory')
    })

    it("answers 404 for someone else's memory and leaves it, 403 for a read-only token, 401 without a token", async () => {
      const carols = await remember(carol, 'Carol memory to keep', { workspaceUuid: team.uuid })
      for (const caller of strangers) {
        expectHidden(await t.http('PUT', `/api/v1/memories/${carols.uuid}`, { ...caller, body: { content: 'Overwritten' } }), carols)
      }
      const mine = await remember(alice, 'Mine to keep')
      expectErrorBody(await t.http('PUT', `/api/v1/memories/${mine.uuid}`, { token: reader, body: { content: 'RO' } }), 403, 'FORBIDDEN')
      expectErrorBody(await t.http('PUT', `/api/v1/memories/${mine.uuid}`, { body: { content: 'None' } }), 401, 'UNAUTHORIZED')
      expect((await stored(carols.uuid)).content).toBe('Carol memory to keep')
      expect((await stored(mine.uuid)).content).toBe('Mine to keep')
    })
  })

  describe('memories.delete (DELETE /api/v1/memories/{memory_uuid})', () => {
    it('deletes the memory for good: 204 without a body, then 404', async () => {
      const memory = await remember(alice, 'Forget me')
      const res = await t.http('DELETE', `/api/v1/memories/${memory.uuid}`, { token: alice.token })
      expect(res.status).toBe(204)
      expect(res.body).toBeNull()
      expect(await stored(memory.uuid)).toBeUndefined()
      expectHidden(await t.http('GET', `/api/v1/memories/${memory.uuid}`, { token: alice.token }), memory)
      expectHidden(await t.http('DELETE', `/api/v1/memories/${memory.uuid}`, { token: alice.token }), memory)
    })

    it("answers 404 for someone else's memory and keeps it, 403 for a read-only token, 401 without a token, 400 for a malformed uuid", async () => {
      const carols = await remember(carol, 'Carol memory stays', { workspaceUuid: team.uuid })
      for (const caller of strangers) {
        expectHidden(await t.http('DELETE', `/api/v1/memories/${carols.uuid}`, caller), carols)
      }
      const mine = await remember(alice, 'Mine stays')
      expectErrorBody(await t.http('DELETE', `/api/v1/memories/${mine.uuid}`, { token: reader }), 403, 'FORBIDDEN')
      expectErrorBody(await t.http('DELETE', `/api/v1/memories/${mine.uuid}`), 401, 'UNAUTHORIZED')
      expectInvalid(await t.http('DELETE', '/api/v1/memories/0123-abcd', { token: alice.token }), 'memory_uuid')
      expect(await stored(carols.uuid)).toBeDefined()
      expect(await stored(mine.uuid)).toBeDefined()
    })
  })

  describe('no create endpoint (runs write memories)', () => {
    it('answers 405 (Allow: GET) to POST /api/v1/memories and stores nothing', async () => {
      const before = await t.sql('select count(*)::int as n from memories')
      const res = await t.http('POST', '/api/v1/memories', { token: alice.token, body: { content: 'Injected' } })
      expect(res.status).toBe(405)
      expect(res.headers.get('allow')).toBe('GET')
      expect(await t.sql('select count(*)::int as n from memories')).toEqual(before)
    })
  })
})
