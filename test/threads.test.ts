/**
 * Threads (routers/threads.router.ts, src/threads/threads.service.ts; docs/api/resources.md,
 * "threads"): a thread is a private conversation of its creator, in the workspace it was created
 * in, with an agent the creator may read. Nobody else (another tenant, a workspace owner or
 * admin, the creator in another workspace context) sees it: 404 that says nothing of it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestApp, TestUser } from './helpers/app.ts'
import { expectErrorBody, expectInvalid, hiddenCheck, ISO, UUID } from './helpers/expect.ts'
import { strangersOfCarols, teamCast } from './helpers/resources.ts'

const THREAD_KEYS = [
  'active_run', 'agent', 'created_at', 'last_message_at', 'messages_count', 'metadata', 'name', 'queued_runs_count', 'updated_at', 'user_id', 'uuid',
  'workspace_uuid',
]
const AGENT_SUMMARY_KEYS = ['name', 'profile_photo_config', 'profile_photo_url', 'uuid']

/** A 404 that says nothing of the hidden thread. */
const expectHidden = hiddenCheck('Thread')

describe('threads', () => {
  let t: TestApp
  let alice: TestUser
  let bob: TestUser
  let carol: TestUser
  let dave: TestUser
  let reader: string
  let strangers: ReturnType<typeof strangersOfCarols>
  let team: { uuid: string }
  let inTeam: () => Record<string, string>
  /** alice's private agent in her primary workspace. */
  let helper: { uuid: string; name: string }
  /** alice's workspace-visible agent in the team. */
  let teamAgent: { uuid: string; name: string }
  /** bob's private agent. */
  let bobsAgent: { uuid: string; name: string }

  beforeAll(async () => {
    ;({ t, alice, bob, carol, dave, reader, team, inTeam } = await teamCast('Thread Team'))
    strangers = strangersOfCarols({ alice, bob, carol, dave, inTeam })
    helper = (await t.as(alice).agents.create({ name: 'Helper', profile_photo_config: { emoji: '🤖' } })).data
    teamAgent = (await t.as(alice, inTeam()).agents.create({ name: 'Team helper', visibility: 'workspace' })).data
    bobsAgent = (await t.as(bob).agents.create({ name: 'Bob secret agent' })).data
  })
  afterAll(async () => t?.close())

  const newThread = async (user: TestUser, agentUuid: string, body: Record<string, unknown> = {}, headers: Record<string, string> = {}) => {
    const res = await t.http('POST', '/api/v1/threads', { token: user.token, headers, body: { agent_uuid: agentUuid, ...body } })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    return res.body.data
  }
  const addMessage = async (user: TestUser, threadUuid: string, content: string, headers: Record<string, string> = {}) => {
    const res = await t.http('POST', '/api/v1/messages', { token: user.token, headers, body: { thread_uuid: threadUuid, role: 'user', content } })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    return res.body.data
  }
  const row = async (uuid: string) =>
    (await t.sql('select name, metadata, messages_count, deleted_at, updated_at from threads where uuid = ?', [uuid]))[0]
  const uuidsOf = (res: { body: { data: { uuid: string }[] } }) => res.body.data.map((x) => x.uuid)

  describe('threads.create (POST /api/v1/threads)', () => {
    it('answers 201 with the exact Thread shape, its agent summarized', async () => {
      const res = await t.http('POST', '/api/v1/threads', {
        token: alice.token,
        body: { agent_uuid: helper.uuid, name: 'Trip planning', metadata: { pinned: true, tags: ['travel'], color: 'blue' } },
      })
      expect(res.status, JSON.stringify(res.body)).toBe(201)
      expect(Object.keys(res.body)).toEqual(['data'])
      const thread = res.body.data
      expect(Object.keys(thread).sort()).toEqual(THREAD_KEYS)
      expect(Object.keys(thread.agent).sort()).toEqual(AGENT_SUMMARY_KEYS)
      expect(thread).toEqual({
        uuid: thread.uuid,
        name: 'Trip planning',
        agent: { uuid: helper.uuid, name: 'Helper', profile_photo_url: null, profile_photo_config: { emoji: '🤖' } },
        user_id: alice.id,
        workspace_uuid: alice.workspaceUuid,
        messages_count: 0,
        metadata: { pinned: true, tags: ['travel'], color: 'blue' },
        last_message_at: null,
        active_run: null,
        queued_runs_count: 0,
        created_at: thread.created_at,
        updated_at: thread.updated_at,
      })
      expect(thread.uuid).toMatch(UUID)
      expect(thread.created_at).toMatch(ISO)
      const again = await t.http('GET', `/api/v1/threads/${thread.uuid}`, { token: alice.token })
      expect(again.status).toBe(200)
      expect(again.body.data).toEqual(thread)
    })

    it('defaults: no name, empty metadata; null metadata values are not stored', async () => {
      const thread = (await t.as(alice).threads.create({ agent_uuid: helper.uuid, metadata: { drop: null, keep: 'x' } })).data
      expect(thread).toMatchObject({ name: null, metadata: { keep: 'x' }, messages_count: 0, last_message_at: null })
      expect((await t.as(alice).threads.create({ agent_uuid: helper.uuid, name: null })).data.name).toBeNull()
    })

    it("lands in the request's workspace context (header or body workspace_uuid), on an agent the caller may read", async () => {
      const byHeader = await newThread(carol, teamAgent.uuid, { name: 'Carol in the team' }, inTeam())
      expect(byHeader.workspace_uuid).toBe(team.uuid)
      expect(byHeader.user_id).toBe(carol.id)
      const byBody = await newThread(carol, teamAgent.uuid, { workspace_uuid: team.uuid })
      expect(byBody.workspace_uuid).toBe(team.uuid)
      // A public agent of another tenant can be talked to, from the caller's own workspace.
      const open = (await t.as(bob).agents.create({ name: 'Bob public agent', visibility: 'public' })).data
      const withPublic = await newThread(alice, open.uuid)
      expect(withPublic).toMatchObject({ workspace_uuid: alice.workspaceUuid, agent: { uuid: open.uuid, name: 'Bob public agent' } })
    })

    it.each([
      ['a missing agent_uuid', { agent_uuid: undefined }, 'agent_uuid'],
      ['a malformed agent_uuid', { agent_uuid: 'helper' }, 'agent_uuid'],
      ['an agent_uuid that is a number', { agent_uuid: 42 }, 'agent_uuid'],
      ['a blank name', { name: '   ' }, 'name'],
      ['an empty name', { name: '' }, 'name'],
      ['a name over 255 characters', { name: 'n'.repeat(256) }, 'name'],
      ['a name holding a NUL character', { name: 'a\u0000b' }, 'name'],
      ['a name holding a lone surrogate', { name: 'a\uD800' }, 'name'],
      ['a name that is a number', { name: 12 }, 'name'],
      ['metadata that is an array', { metadata: ['a'] }, 'metadata'],
      ['metadata that is a string', { metadata: 'x' }, 'metadata'],
      ['metadata over 64 KiB', { metadata: { blob: 'x'.repeat(66_000) } }, 'metadata'],
      ['metadata holding a NUL character', { metadata: { list: ['ok', 'x\u0000'] } }, 'metadata.list.1'],
      ['a malformed workspace_uuid', { workspace_uuid: 'team' }, 'workspace_uuid'],
    ])('answers 400 naming the field for %s, creating nothing', async (_label, overrides, path) => {
      const before = await t.sql('select count(*)::int as n from threads')
      const res = await t.http('POST', '/api/v1/threads', { token: alice.token, body: { agent_uuid: helper.uuid, ...overrides } })
      expectInvalid(res, path)
      expect(await t.sql('select count(*)::int as n from threads')).toEqual(before)
    })

    it('answers 400 naming a path inside metadata for metadata nested deeper than 16 levels', async () => {
      const deep = JSON.parse(`${'{"a":'.repeat(20)}1${'}'.repeat(20)}`)
      const res = await t.http('POST', '/api/v1/threads', { token: alice.token, body: { agent_uuid: helper.uuid, metadata: deep } })
      expect(res.status).toBe(400)
      expect(res.body.issues[0].path[0]).toBe('metadata')
      expect(res.body.issues[0].message).toMatch(/nested deeper than 16 levels/)
    })

    it("answers 400 naming agent_uuid for another tenant's private agent, a deleted agent and an unknown one, revealing nothing", async () => {
      const gone = (await t.as(alice).agents.create({ name: 'Gone agent' })).data
      await t.as(alice).agents.delete({ agent_uuid: gone.uuid })
      const before = await t.sql('select count(*)::int as n from threads')
      for (const uuid of [bobsAgent.uuid, gone.uuid, '0190a8f0-0000-7000-8000-000000000000']) {
        const res = await t.http('POST', '/api/v1/threads', { token: alice.token, body: { agent_uuid: uuid } })
        expectInvalid(res, 'agent_uuid')
        expect(JSON.stringify(res.body)).not.toContain(bobsAgent.name)
      }
      // Another member's private agent of the same workspace is not readable to a member either.
      const davesPrivate = (await t.as(dave, inTeam()).agents.create({ name: 'Dave private agent' })).data
      expectInvalid(await t.http('POST', '/api/v1/threads', { token: carol.token, headers: inTeam(), body: { agent_uuid: davesPrivate.uuid } }), 'agent_uuid')
      expect(await t.sql('select count(*)::int as n from threads')).toEqual(before)
    })

    it("lets a workspace admin start a thread on a member's private agent (admins hold every permission in their workspace)", async () => {
      const carolsPrivate = (await t.as(carol, inTeam()).agents.create({ name: 'Carol private agent' })).data
      const thread = await newThread(dave, carolsPrivate.uuid, {}, inTeam())
      expect(thread).toMatchObject({ user_id: dave.id, workspace_uuid: team.uuid, agent: { uuid: carolsPrivate.uuid } })
      await t.as(dave, inTeam()).threads.delete({ thread_uuid: thread.uuid })
    })

    it('answers 400 for an unknown field, 401 without a token, 403 for a read-only token, 404 outside a member workspace; nothing is created', async () => {
      const before = await t.sql('select count(*)::int as n from threads')
      const unknown = await t.http('POST', '/api/v1/threads', { token: alice.token, body: { agent_uuid: helper.uuid, user_id: bob.id } })
      expect(unknown.status).toBe(400)
      expect(unknown.body.issues[0]).toMatchObject({ code: 'unrecognized_keys', keys: ['user_id'] })
      expectErrorBody(await t.http('POST', '/api/v1/threads', { body: { agent_uuid: helper.uuid } }), 401, 'UNAUTHORIZED')
      expectErrorBody(await t.http('POST', '/api/v1/threads', { token: reader, body: { agent_uuid: helper.uuid } }), 403, 'FORBIDDEN')
      const outside = await t.http('POST', '/api/v1/threads', { token: bob.token, headers: inTeam(), body: { agent_uuid: bobsAgent.uuid } })
      expectErrorBody(outside, 404, 'NOT_FOUND')
      expect(await t.sql('select count(*)::int as n from threads')).toEqual(before)
    })
  })

  describe('threads.list (GET /api/v1/threads)', () => {
    it("lists only the caller's own threads of the workspace context, filtered by agent_uuid and search, paginated and sorted", async () => {
      const other = (await t.as(alice).agents.create({ name: 'Other helper' })).data
      const a1 = await newThread(alice, helper.uuid, { name: 'Alpha LIST one' })
      const a2 = await newThread(alice, other.uuid, { name: 'Beta list two' })
      const a3 = await newThread(alice, helper.uuid, { name: 'Gamma list three' })
      await addMessage(alice, a3.uuid, 'We talked about the Zanzibar ferry')
      const inTeamThread = await newThread(alice, teamAgent.uuid, { name: 'Alice team list' }, inTeam())
      const carols = await newThread(carol, teamAgent.uuid, { name: 'Carol team list' }, inTeam())
      const bobs = await newThread(bob, bobsAgent.uuid, { name: 'Bob list' })

      const res = await t.http('GET', '/api/v1/threads?per_page=100', { token: alice.token })
      expect(res.status).toBe(200)
      expect(Object.keys(res.body).sort()).toEqual(['data', 'links', 'meta'])
      const uuids = uuidsOf(res)
      expect(uuids).toEqual(expect.arrayContaining([a1.uuid, a2.uuid, a3.uuid]))
      for (const hidden of [inTeamThread, carols, bobs]) expect(uuids).not.toContain(hidden.uuid)
      for (const thread of res.body.data) {
        expect(Object.keys(thread).sort()).toEqual(THREAD_KEYS)
        expect(thread.user_id).toBe(alice.id)
      }
      // Newest first by default.
      expect(uuids.indexOf(a3.uuid)).toBeLessThan(uuids.indexOf(a1.uuid))

      // In the team: only alice's own thread there, not carol's (alice owns the workspace).
      const teamList = await t.http('GET', '/api/v1/threads?per_page=100', { token: alice.token, headers: inTeam() })
      expect(uuidsOf(teamList)).toEqual([inTeamThread.uuid])
      const byQuery = await t.http('GET', `/api/v1/threads?per_page=100&workspace_uuid=${team.uuid}`, { token: dave.token })
      expect(uuidsOf(byQuery)).toEqual([])

      const byAgent = await t.http('GET', `/api/v1/threads?agent_uuid=${other.uuid}`, { token: alice.token })
      expect(uuidsOf(byAgent)).toEqual([a2.uuid])
      const byName = await t.http('GET', '/api/v1/threads?search=list%20one', { token: alice.token })
      expect(uuidsOf(byName)).toEqual([a1.uuid])
      const byContent = await t.http('GET', '/api/v1/threads?search=zanzibar', { token: alice.token })
      expect(uuidsOf(byContent)).toEqual([a3.uuid])
      const literal = await t.http('GET', '/api/v1/threads?search=%25', { token: alice.token })
      expect(uuidsOf(literal)).toEqual([])

      const sorted = await t.http('GET', '/api/v1/threads?search=list&sort=name', { token: alice.token })
      expect(sorted.body.data.map((x: { name: string }) => x.name)).toEqual(['Alpha LIST one', 'Beta list two', 'Gamma list three'])
      const paged = await t.http('GET', '/api/v1/threads?search=list&sort=-name&per_page=1&page=2', { token: alice.token })
      expect(paged.body.data.map((x: { name: string }) => x.name)).toEqual(['Beta list two'])
      expect(paged.body.meta).toMatchObject({ total: 3, current_page: 2, per_page: 1, last_page: 3, from: 2, to: 2 })
      expect(paged.body.links.next).toContain('search=list')
      const byCount = await t.http('GET', '/api/v1/threads?search=list&sort=-messages_count', { token: alice.token })
      expect(byCount.body.data[0].uuid).toBe(a3.uuid)

      // A read-only token lists too.
      expect((await t.http('GET', '/api/v1/threads', { token: reader })).status).toBe(200)
    })

    it('leaves out deleted threads and the threads of a deleted agent', async () => {
      const doomed = (await t.as(alice).agents.create({ name: 'Doomed agent' })).data
      const ofDoomed = await newThread(alice, doomed.uuid, { name: 'Of a doomed agent' })
      const deleted = await newThread(alice, helper.uuid, { name: 'Deleted thread' })
      await t.as(alice).threads.delete({ thread_uuid: deleted.uuid })
      await t.as(alice).agents.delete({ agent_uuid: doomed.uuid })
      const uuids = uuidsOf(await t.http('GET', '/api/v1/threads?per_page=100', { token: alice.token }))
      expect(uuids).not.toContain(ofDoomed.uuid)
      expect(uuids).not.toContain(deleted.uuid)
      expectHidden(await t.http('GET', `/api/v1/threads/${ofDoomed.uuid}`, { token: alice.token }), ofDoomed)
    })

    it.each([
      ['a malformed agent_uuid', 'agent_uuid=x', 'agent_uuid'],
      ['an unknown sort', 'sort=agent', 'sort'],
      ['page 0', 'page=0', 'page'],
      ['per_page over 100', 'per_page=101', 'per_page'],
      ['a search over 255 characters', `search=${'s'.repeat(256)}`, 'search'],
      ['a search holding a NUL character', 'search=a%00b', 'search'],
      ['an unknown parameter', 'user_id=1', ''],
    ])('answers 400 for %s', async (_label, query, path) => {
      expectInvalid(await t.http('GET', `/api/v1/threads?${query}`, { token: alice.token }), path)
    })

    it('answers 401 without a token', async () => {
      expectErrorBody(await t.http('GET', '/api/v1/threads'), 401, 'UNAUTHORIZED')
    })
  })

  describe('threads.retrieve (GET /api/v1/threads/{thread_uuid})', () => {
    it('shows messages_count and last_message_at; a read-only token reads', async () => {
      const thread = await newThread(alice, helper.uuid, { name: 'Counted' })
      await addMessage(alice, thread.uuid, 'one')
      const second = await addMessage(alice, thread.uuid, 'two')
      const res = await t.http('GET', `/api/v1/threads/${thread.uuid}`, { token: reader })
      expect(res.status).toBe(200)
      expect(res.body.data).toMatchObject({ messages_count: 2, last_message_at: second.created_at })
    })

    it("answers 404 revealing nothing to another tenant, another member, the workspace's owner and admin, and to its creator in another workspace", async () => {
      const carols = await newThread(carol, teamAgent.uuid, { name: 'Carol secret thread' }, inTeam())
      const hidden = { uuid: carols.uuid, name: carols.name }
      for (const caller of strangers) expectHidden(await t.http('GET', `/api/v1/threads/${carols.uuid}`, caller), hidden)
      expect((await t.http('GET', `/api/v1/threads/${carols.uuid}`, { token: carol.token, headers: inTeam() })).status).toBe(200)
      expectHidden(await t.http('GET', '/api/v1/threads/0190a8f0-0000-7000-8000-000000000000', { token: alice.token }), hidden)
    })

    it('answers 400 for a malformed uuid, 401 without a token', async () => {
      const thread = await newThread(alice, helper.uuid)
      expectInvalid(await t.http('GET', '/api/v1/threads/123', { token: alice.token }), 'thread_uuid')
      expectErrorBody(await t.http('GET', `/api/v1/threads/${thread.uuid}`), 401, 'UNAUTHORIZED')
    })
  })

  describe('threads.update (PUT /api/v1/threads/{thread_uuid})', () => {
    it('keeps omitted fields, renames, clears the name with null, merges metadata key by key', async () => {
      const thread = await newThread(alice, helper.uuid, { name: 'Before', metadata: { keep: 1, drop: true, nested: { a: 1 } } })
      const res = await t.http('PUT', `/api/v1/threads/${thread.uuid}`, {
        token: alice.token,
        body: { name: 'After', metadata: { drop: null, nested: { b: 2 }, added: 'yes' } },
      })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body.data).toEqual({
        ...thread,
        name: 'After',
        metadata: { keep: 1, nested: { b: 2 }, added: 'yes' },
        updated_at: res.body.data.updated_at,
      })
      expect(Date.parse(res.body.data.updated_at)).toBeGreaterThanOrEqual(Date.parse(thread.updated_at))
      const kept = await t.http('PUT', `/api/v1/threads/${thread.uuid}`, { token: alice.token, body: { metadata: { more: 1 } } })
      expect(kept.body.data).toMatchObject({ name: 'After', metadata: { keep: 1, nested: { b: 2 }, added: 'yes', more: 1 } })
      const cleared = await t.http('PUT', `/api/v1/threads/${thread.uuid}`, { token: alice.token, body: { name: null } })
      expect(cleared.body.data).toMatchObject({ name: null, metadata: { more: 1 } })
      const empty = await t.http('PUT', `/api/v1/threads/${thread.uuid}`, { token: alice.token, body: {} })
      expect(empty.status).toBe(200)
      expect(empty.body.data).toEqual(cleared.body.data)
    })

    it('merges concurrent metadata updates without losing any key', async () => {
      const thread = await newThread(alice, helper.uuid)
      const keys = Array.from({ length: 8 }, (_, i) => `k${i}`)
      const answers = await Promise.all(
        keys.map((key) => t.http('PUT', `/api/v1/threads/${thread.uuid}`, { token: alice.token, body: { metadata: { [key]: key } } })),
      )
      for (const res of answers) expect(res.status).toBe(200)
      expect((await row(thread.uuid)).metadata).toEqual(Object.fromEntries(keys.map((key) => [key, key])))
    })

    it.each([
      ['a blank name', { name: ' ' }, 'name'],
      ['a name over 255 characters', { name: 'n'.repeat(256) }, 'name'],
      ['a name holding a NUL character', { name: '\u0000' }, 'name'],
      ['metadata that is an array', { metadata: [] }, 'metadata'],
      ['metadata holding a lone surrogate', { metadata: { a: '\uDC00' } }, 'metadata.a'],
      ['an agent_uuid (a thread keeps its agent)', { agent_uuid: '0190a8f0-0000-7000-8000-000000000000' }, ''],
    ])('answers 400 naming the field for %s, changing nothing', async (_label, body, path) => {
      const thread = await newThread(alice, helper.uuid, { name: 'Unchanged', metadata: { a: 1 } })
      expectInvalid(await t.http('PUT', `/api/v1/threads/${thread.uuid}`, { token: alice.token, body }), path)
      expect(await row(thread.uuid)).toMatchObject({ name: 'Unchanged', metadata: { a: 1 } })
    })

    it('answers 400 naming metadata when the merged metadata would pass 64 KiB', async () => {
      const thread = await newThread(alice, helper.uuid, { metadata: { a: 'x'.repeat(40_000) } })
      const res = await t.http('PUT', `/api/v1/threads/${thread.uuid}`, { token: alice.token, body: { metadata: { b: 'y'.repeat(40_000) } } })
      expectInvalid(res, 'metadata')
      expect(Object.keys((await row(thread.uuid)).metadata as object)).toEqual(['a'])
    })

    it("answers 404 for someone else's thread and leaves it unchanged, 403 for a read-only token, 401 without a token", async () => {
      const carols = await newThread(carol, teamAgent.uuid, { name: 'Carol keeps this' }, inTeam())
      for (const caller of strangers) {
        expectHidden(await t.http('PUT', `/api/v1/threads/${carols.uuid}`, { ...caller, body: { name: 'Taken over' } }), carols)
      }
      const mine = await newThread(alice, helper.uuid, { name: 'Mine' })
      expectErrorBody(await t.http('PUT', `/api/v1/threads/${mine.uuid}`, { token: reader, body: { name: 'Read only' } }), 403, 'FORBIDDEN')
      expectErrorBody(await t.http('PUT', `/api/v1/threads/${mine.uuid}`, { body: { name: 'No token' } }), 401, 'UNAUTHORIZED')
      expect((await row(carols.uuid)).name).toBe('Carol keeps this')
      expect((await row(mine.uuid)).name).toBe('Mine')
    })
  })

  describe('threads.delete (DELETE /api/v1/threads/{thread_uuid})', () => {
    it('soft-deletes the thread and its messages: 204 without a body, then 404 for both, and the agent counts one thread less', async () => {
      const thread = await newThread(alice, helper.uuid, { name: 'To delete' })
      const message = await addMessage(alice, thread.uuid, 'bye')
      const count = async () => (await t.http('GET', `/api/v1/agents/${helper.uuid}`, { token: alice.token })).body.data.threads_count
      const before = await count()
      const res = await t.http('DELETE', `/api/v1/threads/${thread.uuid}`, { token: alice.token })
      expect(res.status).toBe(204)
      expect(res.body).toBeNull()
      expect(await count()).toBe(before - 1)
      expect((await row(thread.uuid)).deleted_at).not.toBeNull()
      const [stored] = await t.sql('select deleted_at from messages where uuid = ?', [message.uuid])
      expect(stored.deleted_at).not.toBeNull()
      expectHidden(await t.http('GET', `/api/v1/threads/${thread.uuid}`, { token: alice.token }), thread)
      expectErrorBody(await t.http('GET', `/api/v1/messages/${message.uuid}`, { token: alice.token }), 404, 'NOT_FOUND')
      expectErrorBody(await t.http('GET', `/api/v1/messages?thread_uuid=${thread.uuid}`, { token: alice.token }), 404, 'NOT_FOUND')
      expectHidden(await t.http('DELETE', `/api/v1/threads/${thread.uuid}`, { token: alice.token }), thread)
    })

    it("answers 404 for someone else's thread and keeps it, 403 for a read-only token, 401 without a token, 400 for a malformed uuid", async () => {
      const carols = await newThread(carol, teamAgent.uuid, { name: 'Carol keeps this one' }, inTeam())
      for (const caller of strangers) {
        expectHidden(await t.http('DELETE', `/api/v1/threads/${carols.uuid}`, caller), carols)
      }
      const mine = await newThread(alice, helper.uuid)
      expectErrorBody(await t.http('DELETE', `/api/v1/threads/${mine.uuid}`, { token: reader }), 403, 'FORBIDDEN')
      expectErrorBody(await t.http('DELETE', `/api/v1/threads/${mine.uuid}`), 401, 'UNAUTHORIZED')
      expectInvalid(await t.http('DELETE', '/api/v1/threads/0123-abcd', { token: alice.token }), 'thread_uuid')
      expect((await row(carols.uuid)).deleted_at).toBeNull()
      expect((await row(mine.uuid)).deleted_at).toBeNull()
    })
  })

  describe('threads over tRPC', () => {
    it('answers the same Thread through the caller, and NOT_FOUND for a hidden one', async () => {
      const created = (await t.as(alice).threads.create({ agent_uuid: helper.uuid, name: 'Typed' })).data
      expect((await t.as(alice).threads.retrieve({ thread_uuid: created.uuid })).data).toEqual(created)
      await expect(t.as(bob).threads.retrieve({ thread_uuid: created.uuid })).rejects.toMatchObject({ code: 'NOT_FOUND' })
    })
  })
})
