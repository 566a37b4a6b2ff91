/**
 * Messages (routers/messages.router.ts, src/threads/messages.service.ts; docs/api/resources.md,
 * "messages"): the messages of a thread, seen exactly by whoever sees the thread (its creator in
 * its workspace). `POST` adds a message without running the model; `threads.messages_count`
 * follows every insert and delete. Also the run engine's entry points: appendMessage and
 * threadHistory.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestApp, TestUser } from './helpers/app.ts'
import { expectErrorBody, expectInvalid, hiddenCheck, ISO, UUID } from './helpers/expect.ts'
import { strangersOfCarols, teamCast } from './helpers/resources.ts'
import { appendMessage, editedParts, threadHistory } from '../src/threads/messages.service.ts'

const MESSAGE_KEYS = [
  'agent_version', 'citations', 'completion_tokens', 'content', 'cost', 'created_at', 'latency_ms', 'model', 'parts', 'prompt_tokens', 'role', 'run_uuid',
  'thread_uuid', 'total_tokens', 'updated_at', 'uuid',
]

/** A 404 that says nothing of the hidden message. */
const expectHidden = hiddenCheck('Message')
const expectHiddenThread = hiddenCheck('Thread')

const TOOL_PARTS = [
  { type: 'text', text: 'Let me look that up.' },
  { type: 'tool-call', tool_call_id: 'call_1', tool_name: 'weather', input: { city: 'Lisbon', days: 3 } },
  { type: 'tool-result', tool_call_id: 'call_1', tool_name: 'weather', output: { forecast: ['sun', 'rain'] }, is_error: false },
  { type: 'tool-result', tool_call_id: 'call_2', tool_name: 'weather', output: 'timeout', is_error: true },
]

describe('messages', () => {
  let t: TestApp
  let alice: TestUser
  let bob: TestUser
  let carol: TestUser
  let dave: TestUser
  let reader: string
  let strangers: ReturnType<typeof strangersOfCarols>
  let inTeam: () => Record<string, string>
  let helper: { uuid: string }
  let teamAgent: { uuid: string }

  beforeAll(async () => {
    ;({ t, alice, bob, carol, dave, reader, inTeam } = await teamCast('Message Team'))
    strangers = strangersOfCarols({ alice, bob, carol, dave, inTeam })
    helper = (await t.as(alice).agents.create({ name: 'Helper' })).data
    teamAgent = (await t.as(alice, inTeam()).agents.create({ name: 'Team helper', visibility: 'workspace' })).data
  })
  afterAll(async () => t?.close())

  const newThread = async (user: TestUser = alice, headers: Record<string, string> = {}, agentUuid = helper.uuid) =>
    (await t.as(user, headers).threads.create({ agent_uuid: agentUuid, name: 'Chat' })).data
  const post = (user: TestUser | string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    t.http('POST', '/api/v1/messages', { token: typeof user === 'string' ? user : user.token, headers, body })
  const add = async (threadUuid: string, content: string, extra: Record<string, unknown> = {}, user: TestUser = alice, headers: Record<string, string> = {}) => {
    const res = await post(user, { thread_uuid: threadUuid, role: 'user', content, ...extra }, headers)
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    return res.body.data
  }
  const threadRow = async (uuid: string) => {
    const [row] = await t.sql('select id::float8 as id, messages_count, workspace_id::float8 as workspace_id from threads where uuid = ?', [uuid])
    return { id: Number(row.id), messages_count: Number(row.messages_count), workspace_id: Number(row.workspace_id) }
  }
  const messageCount = async () => Number((await t.sql('select count(*)::int as n from messages'))[0].n)

  describe('messages.create (POST /api/v1/messages)', () => {
    it('answers 201 with the exact Message shape; without parts the content becomes one text part; the thread counts it', async () => {
      const thread = await newThread()
      const res = await post(alice, { thread_uuid: thread.uuid, role: 'user', content: 'Hello there' })
      expect(res.status, JSON.stringify(res.body)).toBe(201)
      expect(Object.keys(res.body)).toEqual(['data'])
      const message = res.body.data
      expect(Object.keys(message).sort()).toEqual(MESSAGE_KEYS)
      expect(message).toEqual({
        uuid: message.uuid,
        thread_uuid: thread.uuid,
        run_uuid: null,
        role: 'user',
        content: 'Hello there',
        parts: [{ type: 'text', text: 'Hello there' }],
        model: null,
        agent_version: null,
        prompt_tokens: null,
        completion_tokens: null,
        total_tokens: null,
        latency_ms: null,
        cost: null,
        citations: [],
        created_at: message.created_at,
        updated_at: message.updated_at,
      })
      expect(message.uuid).toMatch(UUID)
      expect(message.created_at).toMatch(ISO)
      expect((await t.http('GET', `/api/v1/messages/${message.uuid}`, { token: alice.token })).body.data).toEqual(message)
      const after = (await t.http('GET', `/api/v1/threads/${thread.uuid}`, { token: alice.token })).body.data
      expect(after).toMatchObject({ messages_count: 1, last_message_at: message.created_at })
      expect(Date.parse(after.updated_at)).toBeGreaterThanOrEqual(Date.parse(thread.updated_at))
      const [stored] = await t.sql('select user_id, workspace_id::float8 as workspace_id from messages where uuid = ?', [message.uuid])
      expect(stored).toEqual({ user_id: alice.id, workspace_id: (await threadRow(thread.uuid)).workspace_id })
    })

    it('keeps the given parts (text, tool calls, tool results) and takes the assistant and system roles', async () => {
      const thread = await newThread()
      const assistant = await add(thread.uuid, 'Let me look that up.', { role: 'assistant', parts: TOOL_PARTS })
      expect(assistant).toMatchObject({ role: 'assistant', parts: TOOL_PARTS })
      const system = await add(thread.uuid, 'Be brief.', { role: 'system', parts: [{ type: 'tool-result', tool_call_id: 'c', tool_name: 'n', output: null }] })
      expect(system.parts).toEqual([{ type: 'tool-result', tool_call_id: 'c', tool_name: 'n', output: null, is_error: false }])
      const empty = await add(thread.uuid, 'No parts at all', { parts: [] })
      expect(empty.parts).toEqual([])
      expect((await threadRow(thread.uuid)).messages_count).toBe(3)
    })

    it('takes the longest content and odd but storable unicode', async () => {
      const thread = await newThread()
      expect((await add(thread.uuid, 'x'.repeat(100_000))).content).toHaveLength(100_000)
      expect((await add(thread.uuid, '😀 \u200b naïve ﷽')).content).toBe('😀 \u200b naïve ﷽')
    })

    const tooMany = Array.from({ length: 101 }, () => ({ type: 'text', text: 'x' }))
    it.each([
      ['a missing thread_uuid', { thread_uuid: undefined }, 'thread_uuid'],
      ['a malformed thread_uuid', { thread_uuid: 'thread' }, 'thread_uuid'],
      ['a missing role', { role: undefined }, 'role'],
      ['the tool role (runs only)', { role: 'tool' }, 'role'],
      ['an unknown role', { role: 'robot' }, 'role'],
      ['a missing content', { content: undefined }, 'content'],
      ['an empty content', { content: '' }, 'content'],
      ['a blank content', { content: ' \n ' }, 'content'],
      ['a content over 100,000 characters', { content: 'x'.repeat(100_001) }, 'content'],
      ['a content holding a NUL character', { content: 'a\u0000b' }, 'content'],
      ['a content holding a lone surrogate', { content: 'a\uD800b' }, 'content'],
      ['a content that is a number', { content: 5 }, 'content'],
      ['parts that is an object', { parts: { type: 'text', text: 'x' } }, 'parts'],
      ['more than 100 parts', { parts: tooMany }, 'parts'],
      ['a part of an unknown type', { parts: [{ type: 'image', text: 'x' }] }, 'parts.0.type'],
      ['a part without a type', { parts: [{ text: 'x' }] }, 'parts.0.type'],
      ['a part without a type and with a bad text', { parts: [{ text: 5 }] }, 'parts.0.text'],
      ['a text part with a member of tool parts', { parts: [{ type: 'text', text: 'x', is_error: true }] }, 'parts.0.is_error'],
      ['a tool-call with an output', { parts: [{ type: 'tool-call', tool_call_id: 'c', tool_name: 'n', input: {}, output: 1 }] }, 'parts.0.output'],
      ['a text part without text', { parts: [{ type: 'text' }] }, 'parts.0.text'],
      ['a text part holding a NUL character', { parts: [{ type: 'text', text: '\u0000' }] }, 'parts.0.text'],
      ['a text part with an unknown member', { parts: [{ type: 'text', text: 'x', extra: 1 }] }, 'parts.0'],
      ['a tool-call without input', { parts: [{ type: 'tool-call', tool_call_id: 'c', tool_name: 'n' }] }, 'parts.0.input'],
      ['a tool-call with an empty tool_call_id', { parts: [{ type: 'tool-call', tool_call_id: '', tool_name: 'n', input: {} }] }, 'parts.0.tool_call_id'],
      ['a tool-call without tool_name', { parts: [{ type: 'tool-call', tool_call_id: 'c', input: {} }] }, 'parts.0.tool_name'],
      ['a tool-call input holding a NUL character', { parts: [{ type: 'tool-call', tool_call_id: 'c', tool_name: 'n', input: { q: 'a\u0000' } }] }, 'parts.0.input.q'],
      ['a tool-result without output', { parts: [{ type: 'tool-result', tool_call_id: 'c', tool_name: 'n' }] }, 'parts.0.output'],
      ['a tool-result with is_error as a string', { parts: [{ type: 'tool-result', tool_call_id: 'c', tool_name: 'n', output: 1, is_error: 'true' }] }, 'parts.0.is_error'],
      ['parts over 512 KiB', { parts: Array.from({ length: 6 }, () => ({ type: 'text', text: 'y'.repeat(99_000) })) }, 'parts'],
      ['an unknown field', { model: 'gpt' }, ''],
    ])('answers 400 naming the field for %s, storing nothing', async (_label, overrides, path) => {
      const thread = await newThread()
      const before = await messageCount()
      expectInvalid(await post(alice, { thread_uuid: thread.uuid, role: 'user', content: 'Hi', ...overrides }), path)
      expect(await messageCount()).toBe(before)
      expect((await threadRow(thread.uuid)).messages_count).toBe(0)
    })

    it("answers 404 for a thread the caller does not see (another tenant's, another member's, the admin's view, a deleted one), storing nothing", async () => {
      const carols = await newThread(carol, inTeam(), teamAgent.uuid)
      const deleted = await newThread()
      await t.as(alice).threads.delete({ thread_uuid: deleted.uuid })
      const before = await messageCount()
      const body = (uuid: string) => ({ thread_uuid: uuid, role: 'user', content: 'Sneaking in' })
      for (const caller of strangers) {
        expectHiddenThread(await t.http('POST', '/api/v1/messages', { ...caller, body: body(carols.uuid) }), { uuid: carols.uuid, name: 'Chat' })
      }
      expectHiddenThread(await post(alice, body(deleted.uuid)), { uuid: deleted.uuid, name: 'Chat' })
      expect(await messageCount()).toBe(before)
      expect((await threadRow(carols.uuid)).messages_count).toBe(0)
    })

    it('answers 401 without a token and 403 for a read-only token, storing nothing', async () => {
      const thread = await newThread()
      const before = await messageCount()
      expectErrorBody(await t.http('POST', '/api/v1/messages', { body: { thread_uuid: thread.uuid, role: 'user', content: 'x' } }), 401, 'UNAUTHORIZED')
      expectErrorBody(await post(reader, { thread_uuid: thread.uuid, role: 'user', content: 'x' }), 403, 'FORBIDDEN')
      expect(await messageCount()).toBe(before)
    })
  })

  describe('messages.list (GET /api/v1/messages)', () => {
    it("lists a thread's live messages oldest first, newest first with sort=-created_at, filtered by search, paginated", async () => {
      const thread = await newThread()
      const other = await newThread()
      const sent = []
      for (const content of ['first', 'second about Lisbon', 'third', 'fourth about lisbon']) sent.push(await add(thread.uuid, content))
      await add(other.uuid, 'elsewhere about Lisbon')
      await t.as(alice).messages.delete({ message_uuid: sent[2].uuid })

      const res = await t.http('GET', `/api/v1/messages?thread_uuid=${thread.uuid}`, { token: alice.token })
      expect(res.status).toBe(200)
      expect(Object.keys(res.body).sort()).toEqual(['data', 'links', 'meta'])
      expect(res.body.data.map((m: { content: string }) => m.content)).toEqual(['first', 'second about Lisbon', 'fourth about lisbon'])
      for (const message of res.body.data) expect(Object.keys(message).sort()).toEqual(MESSAGE_KEYS)
      expect(res.body.data[0]).toEqual(sent[0])
      expect(res.body.meta.total).toBe(3)
      expect(res.body.links.first).toContain(`thread_uuid=${thread.uuid}`)

      const newest = await t.http('GET', `/api/v1/messages?thread_uuid=${thread.uuid}&sort=-created_at`, { token: alice.token })
      expect(newest.body.data.map((m: { content: string }) => m.content)).toEqual(['fourth about lisbon', 'second about Lisbon', 'first'])
      const search = await t.http('GET', `/api/v1/messages?thread_uuid=${thread.uuid}&search=LISBON`, { token: alice.token })
      expect(search.body.data.map((m: { uuid: string }) => m.uuid)).toEqual([sent[1].uuid, sent[3].uuid])
      const paged = await t.http('GET', `/api/v1/messages?thread_uuid=${thread.uuid}&per_page=2&page=2`, { token: reader })
      expect(paged.status).toBe(200)
      expect(paged.body.data.map((m: { content: string }) => m.content)).toEqual(['fourth about lisbon'])
      expect(paged.body.meta).toMatchObject({ current_page: 2, last_page: 2, per_page: 2, total: 3, from: 3, to: 3 })
    })

    it('keeps the order of messages written within one transaction', async () => {
      const thread = await newThread()
      const { id } = await threadRow(thread.uuid)
      const workspaceId = (await threadRow(thread.uuid)).workspace_id
      await t.runtime.orm.em.fork().transactional(async (em) => {
        for (const content of ['q', 'a', 'q2', 'a2']) {
          await appendMessage(em, { threadId: id, workspaceId, userId: null, runId: null, role: content.startsWith('q') ? 'user' : 'assistant', content, parts: [] })
        }
      })
      const res = await t.http('GET', `/api/v1/messages?thread_uuid=${thread.uuid}`, { token: alice.token })
      expect(res.body.data.map((m: { content: string }) => m.content)).toEqual(['q', 'a', 'q2', 'a2'])
    })

    it('answers 404 revealing nothing for a thread the caller does not see', async () => {
      const carols = await newThread(carol, inTeam(), teamAgent.uuid)
      await add(carols.uuid, 'Carol private words', {}, carol, inTeam())
      for (const caller of strangers) {
        const res = await t.http('GET', `/api/v1/messages?thread_uuid=${carols.uuid}`, caller)
        expectHiddenThread(res, { uuid: carols.uuid, name: 'Carol private words' })
      }
    })

    it.each([
      ['a missing thread_uuid', '', 'thread_uuid'],
      ['a malformed thread_uuid', 'thread_uuid=abc', 'thread_uuid'],
      ['an unknown sort', 'sort=role', 'sort'],
      ['page 0', 'page=0', 'page'],
      ['per_page 0', 'per_page=0', 'per_page'],
      ['a search holding a NUL character', 'search=%00', 'search'],
      ['an unknown parameter', 'role=user', ''],
    ])('answers 400 for %s', async (_label, query, path) => {
      const thread = await newThread()
      const full = path === 'thread_uuid' ? query : `thread_uuid=${thread.uuid}&${query}`
      expectInvalid(await t.http('GET', `/api/v1/messages?${full}`, { token: alice.token }), path)
    })

    it('answers 401 without a token', async () => {
      const thread = await newThread()
      expectErrorBody(await t.http('GET', `/api/v1/messages?thread_uuid=${thread.uuid}`), 401, 'UNAUTHORIZED')
    })
  })

  describe('messages.retrieve (GET /api/v1/messages/{message_uuid})', () => {
    it('answers the message to its thread\'s creator (also with a read-only token), with run_uuid when a run wrote it', async () => {
      const thread = await newThread()
      const { id, workspace_id } = await threadRow(thread.uuid)
      const [run] = await t.sql(
        `insert into runs (uuid, kind, status, thread_id, user_id, workspace_id, created_at, updated_at)
         values (gen_random_uuid(), 'thread', 'succeeded', ?, ?, ?, now(), now()) returning id::float8 as id, uuid`,
        [id, alice.id, workspace_id],
      )
      const written = await appendMessage(t.runtime.orm.em.fork(), {
        threadId: id,
        workspaceId: workspace_id,
        userId: null,
        runId: Number(run.id),
        role: 'assistant',
        content: 'The answer',
        parts: [{ type: 'text', text: 'The answer' }],
        model: 'local-test',
        promptTokens: 10,
        completionTokens: 5,
        totalTokens: 15,
        latencyMs: 120,
        cost: 0.000123,
      })
      const res = await t.http('GET', `/api/v1/messages/${written.uuid}`, { token: reader })
      expect(res.status).toBe(200)
      expect(res.body.data).toMatchObject({
        uuid: written.uuid,
        thread_uuid: thread.uuid,
        run_uuid: run.uuid,
        role: 'assistant',
        model: 'local-test',
        prompt_tokens: 10,
        completion_tokens: 5,
        total_tokens: 15,
        latency_ms: 120,
        cost: 0.000123,
      })
    })

    it("answers 404 revealing nothing to anyone but its thread's creator in its workspace, and for a deleted message", async () => {
      const carols = await newThread(carol, inTeam(), teamAgent.uuid)
      const message = await add(carols.uuid, 'Carol diary entry', {}, carol, inTeam())
      const hidden = { uuid: message.uuid, name: 'Carol diary entry' }
      for (const caller of strangers) {
        expectHidden(await t.http('GET', `/api/v1/messages/${message.uuid}`, caller), hidden)
      }
      await t.as(carol, inTeam()).messages.delete({ message_uuid: message.uuid })
      expectHidden(await t.http('GET', `/api/v1/messages/${message.uuid}`, { token: carol.token, headers: inTeam() }), hidden)
    })

    it('answers 400 for a malformed uuid and 401 without a token', async () => {
      const thread = await newThread()
      const message = await add(thread.uuid, 'x')
      expectInvalid(await t.http('GET', '/api/v1/messages/1', { token: alice.token }), 'message_uuid')
      expectErrorBody(await t.http('GET', `/api/v1/messages/${message.uuid}`), 401, 'UNAUTHORIZED')
    })
  })

  describe('messages.update (PUT /api/v1/messages/{message_uuid})', () => {
    it('replaces the content and the text parts, keeping tool parts where they were', async () => {
      const thread = await newThread()
      const message = await add(thread.uuid, 'Let me look that up.', { role: 'assistant', parts: TOOL_PARTS })
      const res = await t.http('PUT', `/api/v1/messages/${message.uuid}`, { token: alice.token, body: { content: 'Edited answer' } })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body.data).toEqual({
        ...message,
        content: 'Edited answer',
        parts: [{ type: 'text', text: 'Edited answer' }, ...TOOL_PARTS.slice(1)],
        updated_at: res.body.data.updated_at,
      })
      const plain = await add(thread.uuid, 'typo')
      const fixed = await t.http('PUT', `/api/v1/messages/${plain.uuid}`, { token: alice.token, body: { content: 'fixed' } })
      expect(fixed.body.data).toMatchObject({ content: 'fixed', parts: [{ type: 'text', text: 'fixed' }] })
      expect((await threadRow(thread.uuid)).messages_count).toBe(2)
    })

    it('editedParts: text parts give way to one, where the first was, or at the end', () => {
      const call = { type: 'tool-call', tool_call_id: 'c', tool_name: 'n', input: {} }
      expect(editedParts([call, { type: 'text', text: 'a' }, { type: 'text', text: 'b' }], 'new')).toEqual([
        { ...call },
        { type: 'text', text: 'new' },
      ])
      expect(editedParts([call], 'new')).toEqual([call, { type: 'text', text: 'new' }])
      expect(editedParts([], 'new')).toEqual([{ type: 'text', text: 'new' }])
      expect(editedParts('not a list', 'new')).toEqual([{ type: 'text', text: 'new' }])
    })

    it.each([
      ['a missing content', {}, 'content'],
      ['a blank content', { content: '  ' }, 'content'],
      ['a content over 100,000 characters', { content: 'x'.repeat(100_001) }, 'content'],
      ['a content holding a NUL character', { content: '\u0000' }, 'content'],
      ['a content that is an array', { content: ['x'] }, 'content'],
      ['parts (content only)', { content: 'x', parts: [] }, ''],
      ['role (content only)', { content: 'x', role: 'system' }, ''],
    ])('answers 400 naming the field for %s, changing nothing', async (_label, body, path) => {
      const thread = await newThread()
      const message = await add(thread.uuid, 'Unchanged')
      expectInvalid(await t.http('PUT', `/api/v1/messages/${message.uuid}`, { token: alice.token, body }), path)
      expect((await t.sql('select content from messages where uuid = ?', [message.uuid]))[0].content).toBe('Unchanged')
    })

    it("answers 404 for someone else's message and leaves it, 403 for a read-only token, 401 without a token", async () => {
      const carols = await newThread(carol, inTeam(), teamAgent.uuid)
      const message = await add(carols.uuid, 'Carol original words', {}, carol, inTeam())
      for (const caller of strangers) {
        expectHidden(await t.http('PUT', `/api/v1/messages/${message.uuid}`, { ...caller, body: { content: 'Rewritten' } }), {
          uuid: message.uuid,
          name: 'Carol original words',
        })
      }
      const mine = await add((await newThread()).uuid, 'Mine')
      expectErrorBody(await t.http('PUT', `/api/v1/messages/${mine.uuid}`, { token: reader, body: { content: 'RO' } }), 403, 'FORBIDDEN')
      expectErrorBody(await t.http('PUT', `/api/v1/messages/${mine.uuid}`, { body: { content: 'None' } }), 401, 'UNAUTHORIZED')
      const contents = await t.sql('select content from messages where uuid in (?, ?) order by id', [message.uuid, mine.uuid])
      expect(contents.map((r) => r.content)).toEqual(['Carol original words', 'Mine'])
    })
  })

  describe('messages.delete (DELETE /api/v1/messages/{message_uuid})', () => {
    it('soft-deletes: 204 without a body, then 404; the thread counts one message less, once even for concurrent deletes', async () => {
      const thread = await newThread()
      const keep = await add(thread.uuid, 'keep')
      const drop = await add(thread.uuid, 'drop')
      const res = await t.http('DELETE', `/api/v1/messages/${drop.uuid}`, { token: alice.token })
      expect(res.status).toBe(204)
      expect(res.body).toBeNull()
      expect((await threadRow(thread.uuid)).messages_count).toBe(1)
      expect((await t.sql('select deleted_at from messages where uuid = ?', [drop.uuid]))[0].deleted_at).not.toBeNull()
      expectHidden(await t.http('GET', `/api/v1/messages/${drop.uuid}`, { token: alice.token }), { uuid: drop.uuid, name: 'drop' })
      expectHidden(await t.http('DELETE', `/api/v1/messages/${drop.uuid}`, { token: alice.token }), { uuid: drop.uuid, name: 'drop' })
      const thread2 = (await t.http('GET', `/api/v1/threads/${thread.uuid}`, { token: alice.token })).body.data
      expect(thread2).toMatchObject({ messages_count: 1, last_message_at: keep.created_at })

      const twice = await add(thread.uuid, 'twice')
      const answers = await Promise.all([1, 2, 3].map(() => t.http('DELETE', `/api/v1/messages/${twice.uuid}`, { token: alice.token })))
      expect(answers.filter((a) => a.status === 204).length).toBeGreaterThanOrEqual(1)
      for (const a of answers) expect([204, 404]).toContain(a.status)
      expect((await threadRow(thread.uuid)).messages_count).toBe(1)
    })

    it("answers 404 for someone else's message and keeps it, 403 for a read-only token, 401 without a token, 400 for a malformed uuid", async () => {
      const carols = await newThread(carol, inTeam(), teamAgent.uuid)
      const message = await add(carols.uuid, 'Carol kept words', {}, carol, inTeam())
      for (const caller of strangers) {
        expectHidden(await t.http('DELETE', `/api/v1/messages/${message.uuid}`, caller), { uuid: message.uuid, name: 'Carol kept words' })
      }
      const mine = await add((await newThread()).uuid, 'Mine')
      expectErrorBody(await t.http('DELETE', `/api/v1/messages/${mine.uuid}`, { token: reader }), 403, 'FORBIDDEN')
      expectErrorBody(await t.http('DELETE', `/api/v1/messages/${mine.uuid}`), 401, 'UNAUTHORIZED')
      expectInvalid(await t.http('DELETE', '/api/v1/messages/0123-abcd', { token: alice.token }), 'message_uuid')
      const live = await t.sql('select count(*)::int as n from messages where uuid in (?, ?) and deleted_at is null', [message.uuid, mine.uuid])
      expect(live[0].n).toBe(2)
      expect((await threadRow(carols.uuid)).messages_count).toBe(1)
    })
  })

  describe('run engine entry points', () => {
    it('appendMessage cleans text PostgreSQL cannot store instead of failing, and counts the message', async () => {
      const thread = await newThread()
      const { id, workspace_id } = await threadRow(thread.uuid)
      const written = await appendMessage(t.runtime.orm.em.fork(), {
        threadId: id,
        workspaceId: workspace_id,
        userId: null,
        runId: null,
        role: 'tool',
        content: 'a\u0000b\uD800c',
        parts: [{ type: 'tool-result', tool_call_id: 'c\u0000', tool_name: 'n', output: { 'k\u0000': ['v\uDC00'] }, is_error: false }],
      })
      expect(written.uuid).toMatch(UUID)
      const res = await t.http('GET', `/api/v1/messages/${written.uuid}`, { token: alice.token })
      expect(res.body.data).toMatchObject({
        role: 'tool',
        content: 'ab\uFFFDc',
        parts: [{ type: 'tool-result', tool_call_id: 'c', tool_name: 'n', output: { k: ['v\uFFFD'] }, is_error: false }],
      })
      expect((await threadRow(thread.uuid)).messages_count).toBe(1)
    })

    it('threadHistory answers the last live messages, oldest first', async () => {
      const thread = await newThread()
      const sent = []
      for (const content of ['m1', 'm2', 'm3', 'm4', 'm5']) sent.push(await add(thread.uuid, content))
      await t.as(alice).messages.delete({ message_uuid: sent[3].uuid })
      const { id } = await threadRow(thread.uuid)
      const em = t.runtime.orm.em.fork()
      expect((await threadHistory(em, id, 3)).map((m) => m.content)).toEqual(['m2', 'm3', 'm5'])
      expect(await threadHistory(em, id, 100)).toEqual(
        ['m1', 'm2', 'm3', 'm5'].map((content) => ({ role: 'user', content, parts: [{ type: 'text', text: content }] })),
      )
      expect(await threadHistory(em, id, 0)).toEqual([])
    })
  })
})
