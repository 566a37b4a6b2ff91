/**
 * Runs (docs/api/runs.md): `POST agents/{x}/run`, `POST threads/{x}/run`,
 * `POST prompts/{x}/run`, `GET runs/{x}`, `POST runs/{x}/cancel`, the event log over SSE and the
 * tRPC subscription, and what an upstream's faults do. The model is the real OpenAI provider
 * client talking to test/helpers/upstream.ts over loopback.
 */
import { isTrackedEnvelope } from '@trpc/server'
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { readOnlyToken } from './helpers/agents.ts'
import { expectErrorBody, expectInvalid, hiddenCheck, UUID } from './helpers/expect.ts'
import { readSse } from './helpers/sse.ts'
import { startUpstream, type Upstream } from './helpers/upstream.ts'

describe('runs', () => {
  let t: TestApp
  let upstream: Upstream
  let alice: TestUser
  let bob: TestUser

  beforeAll(async () => {
    upstream = await startUpstream()
    t = await createTestApp({ OPENAI_API_KEY: 'sk-upstream-test', OPENAI_BASE_URL: upstream.url, LLM_TIMEOUT_MS: '1500' })
    alice = await t.make.user({ name: 'Alice Runner' })
    bob = await t.make.user({ name: 'Bob Other' })
  })
  afterAll(async () => {
    await t?.close()
    await upstream?.close()
  })
  beforeEach(() => upstream.reset())

  const makeAgent = async (user: TestUser, body: Record<string, unknown> = {}) =>
    (await t.as(user).agents.create({ name: 'Helper', instruction: 'Answer briefly.', ...body } as never)).data
  const run = (user: { token: string }, agentUuid: string, body: Record<string, unknown>) =>
    t.http('POST', `/api/v1/agents/${agentUuid}/run`, { token: user.token, body })
  const lastUserText = (index = -1) => {
    const messages = upstream.requests.at(index)?.body.messages as { role: string; content: unknown }[]
    return messages.filter((m) => m.role === 'user').at(-1)?.content
  }

  describe('agents.run (POST /api/v1/agents/{agent_uuid}/run)', () => {
    it('answers 200 when done with the run, the stored messages and usage; the upstream got the system prompt and the input', async () => {
      const agent = await makeAgent(alice, { metadata: { role: 'a release-notes writer' } })
      const res = await run(alice, agent.uuid, { input: 'Hello there' })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      const { run: stored, messages, usage } = res.body.data
      expect(stored).toMatchObject({ kind: 'agent', status: 'succeeded', agent_uuid: agent.uuid, model: 'gpt-4o-mini', output: 'Echo: Hello there', error: null })
      expect(stored.uuid).toMatch(UUID)
      expect(stored.thread_uuid).toMatch(UUID)
      expect(stored.latency_ms).toBeGreaterThanOrEqual(0)
      expect(stored.first_event_ms).toBeGreaterThanOrEqual(0)
      expect(stored.events_count).toBeGreaterThanOrEqual(4)
      expect(messages.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
        ['user', 'Hello there'],
        ['assistant', 'Echo: Hello there'],
      ])
      expect(messages[1]).toMatchObject({ model: 'gpt-4o-mini', run_uuid: stored.uuid, thread_uuid: stored.thread_uuid })
      expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens)
      expect(usage.total_tokens).toBeGreaterThan(0)
      // gpt-4o-mini: $0.15 / $0.60 per million tokens.
      expect(usage.cost).toBeCloseTo((usage.prompt_tokens * 0.15 + usage.completion_tokens * 0.6) / 1e6, 6)
      const request = upstream.requests.at(-1)
      expect(request?.headers.authorization).toBe('Bearer sk-upstream-test')
      expect(request?.body.model).toBe('gpt-4o-mini')
      const system = request?.body.messages[0]
      expect(system.role).toBe('system')
      expect(system.content).toContain('Answer briefly.')
      expect(system.content).toContain('a release-notes writer')
    })

    it('follows the runs in the agent: usage_count, last_used_at and usage_frequency; the thread counts its messages', async () => {
      const agent = await makeAgent(alice)
      expect(agent.usage_frequency).toBe('never')
      const first = await run(alice, agent.uuid, { input: 'One' })
      await run(alice, agent.uuid, { input: 'Two', thread_uuid: first.body.data.run.thread_uuid })
      const read = (await t.as(alice).agents.retrieve({ agent_uuid: agent.uuid })).data
      expect(read.usage_count).toBe(2)
      expect(read.last_used_at).not.toBeNull()
      expect(read.usage_frequency).toBe('monthly')
      expect(read.threads_count).toBe(1)
      const thread = await t.http('GET', `/api/v1/threads/${first.body.data.run.thread_uuid}`, { token: alice.token })
      expect(thread.body.data.messages_count).toBe(4)
    })

    it("sends the thread's earlier messages with the new input", async () => {
      const agent = await makeAgent(alice)
      const first = await run(alice, agent.uuid, { input: 'My name is Ada' })
      await run(alice, agent.uuid, { input: 'What is my name?', thread_uuid: first.body.data.run.thread_uuid })
      const sent = (upstream.requests.at(-1)?.body.messages as { role: string; content: string }[]).map((m) => [m.role, m.content])
      expect(sent.slice(1)).toEqual([
        ['user', 'My name is Ada'],
        ['assistant', 'Echo: My name is Ada'],
        ['user', 'What is my name?'],
      ])
    })

    it('answers 202 at once with background: true; the run finishes and is stored', async () => {
      const agent = await makeAgent(alice)
      upstream.enqueue({ kind: 'slow', delayMs: 200 })
      const res = await run(alice, agent.uuid, { input: 'Later', background: true })
      expect(res.status).toBe(202)
      expect(res.body.data.run.status).toBe('running')
      expect(res.body.data.run.background).toBe(true)
      await vi.waitFor(
        async () => {
          const read = await t.http('GET', `/api/v1/runs/${res.body.data.run.uuid}`, { token: alice.token })
          expect(read.body.data.run.status).toBe('succeeded')
          expect(read.body.data.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant'])
        },
        { timeout: 3000, interval: 50 },
      )
    })

    it('uses the agent metadata large_language_model; an unknown one is a 400 naming it, before anything is stored', async () => {
      const agent = await makeAgent(alice, { metadata: { large_language_model: 'gpt-4.1-mini' } })
      const res = await run(alice, agent.uuid, { input: 'Hi' })
      expect(res.status).toBe(200)
      expect(upstream.requests.at(-1)?.body.model).toBe('gpt-4.1-mini')
      const unknown = await makeAgent(alice, { metadata: { large_language_model: 'no-such-model' } })
      const before = upstream.requests.length
      expectInvalid(await run(alice, unknown.uuid, { input: 'Hi' }), 'metadata.large_language_model')
      expect(upstream.requests.length).toBe(before)
      const [{ count }] = await t.sql('select count(*)::int as count from runs r join agents a on a.id = r.agent_id where a.uuid = ?', [unknown.uuid])
      expect(count).toBe(0)
    })

    it('validates the body: 400 naming each field', async () => {
      const agent = await makeAgent(alice)
      expectInvalid(await run(alice, agent.uuid, {}), 'input')
      expectInvalid(await run(alice, agent.uuid, { input: '' }), 'input')
      expectInvalid(await run(alice, agent.uuid, { input: 'x', background: 'yes' }), 'background')
      expectInvalid(await run(alice, agent.uuid, { input: 'x', thread_uuid: 'nope' }), 'thread_uuid')
      expectInvalid(await run(alice, agent.uuid, { input: 'x', extra: 1 }), '')
      expectInvalid(await run(alice, agent.uuid, { input: 'bad \u0000 char' }), 'input')
      expectInvalid(await t.http('POST', '/api/v1/agents/0123-abcd/run', { token: alice.token, body: { input: 'x' } }), 'agent_uuid')
      const other = await makeAgent(alice)
      const thread = (await run(alice, other.uuid, { input: 'x' })).body.data.run.thread_uuid
      expectInvalid(await run(alice, agent.uuid, { input: 'x', thread_uuid: thread }), 'thread_uuid')
    })

    it("answers 401 without a token, 404 for another tenant's agent or thread, 403 for a read-only token", async () => {
      const agent = await makeAgent(alice, { visibility: 'private' })
      expectErrorBody(await run({ token: 'nope' }, agent.uuid, { input: 'x' }), 401, 'UNAUTHORIZED')
      hiddenCheck('Agent')(await run(bob, agent.uuid, { input: 'x' }), agent)
      const bobs = await makeAgent(bob)
      const thread = (await run(alice, agent.uuid, { input: 'x' })).body.data.run.thread_uuid
      expectErrorBody(await run(bob, bobs.uuid, { input: 'x', thread_uuid: thread }), 404, 'NOT_FOUND', 'Thread not found')
      const reader = await readOnlyToken(t, alice)
      expectErrorBody(await run(reader, agent.uuid, { input: 'x' }), 403, 'FORBIDDEN')
    })
  })

  describe('threads.run (POST /api/v1/threads/{thread_uuid}/run)', () => {
    it('runs the thread with its agent and history', async () => {
      const agent = await makeAgent(alice)
      const thread = (await run(alice, agent.uuid, { input: 'First' })).body.data.run.thread_uuid
      const res = await t.http('POST', `/api/v1/threads/${thread}/run`, { token: alice.token, body: { content: 'Second' } })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body.data.run).toMatchObject({ kind: 'thread', thread_uuid: thread, agent_uuid: agent.uuid, output: 'Echo: Second' })
      expect(lastUserText()).toBe('Second')
      expect(upstream.requests.at(-1)?.body.messages).toHaveLength(4)
    })

    it("validates content (400), refuses another tenant's thread (404) and read-only tokens (403)", async () => {
      const agent = await makeAgent(alice)
      const thread = (await run(alice, agent.uuid, { input: 'First' })).body.data.run.thread_uuid
      const post = (user: { token: string }, body: unknown) => t.http('POST', `/api/v1/threads/${thread}/run`, { token: user.token, body })
      expectInvalid(await post(alice, {}), 'content')
      expectInvalid(await post(alice, { content: 'x', input: 'y' }), '')
      expectErrorBody(await post(bob, { content: 'x' }), 404, 'NOT_FOUND', 'Thread not found')
      expectErrorBody(await post(await readOnlyToken(t, alice), { content: 'x' }), 403, 'FORBIDDEN')
      expectErrorBody(await post({ token: 'nope' }, { content: 'x' }), 401, 'UNAUTHORIZED')
      expectInvalid(await post(alice, { content: 'x', background: 'yes' }), 'background')
      expectInvalid(await t.http('POST', '/api/v1/threads/0123-abcd/run', { token: alice.token, body: { content: 'x' } }), 'thread_uuid')
    })

    it('refuses a thread whose agent is deleted (404), storing nothing and calling no model', async () => {
      const agent = await makeAgent(alice)
      const thread = (await run(alice, agent.uuid, { input: 'First' })).body.data.run.thread_uuid
      expect((await t.http('DELETE', `/api/v1/agents/${agent.uuid}`, { token: alice.token })).status).toBe(204)
      upstream.reset()
      const res = await t.http('POST', `/api/v1/threads/${thread}/run`, { token: alice.token, body: { content: 'After the agent' } })
      expect(res.status).toBe(404)
      expect(upstream.requests).toHaveLength(0)
      expect(await t.sql(`select count(*)::int as n from messages where content = 'After the agent'`)).toEqual([{ n: 0 }])
    })

    it("refuses a thread of the caller's whose agent the caller can no longer see (404 naming the agent)", async () => {
      const agent = await makeAgent(alice)
      const thread = (await run(alice, agent.uuid, { input: 'First' })).body.data.run.thread_uuid
      // The agent becomes a private agent of bob's, in bob's workspace; the thread stays alice's.
      await t.sql(`update agents set user_id = ?, visibility = 'private', workspace_id = (select id from workspaces where uuid = ?) where uuid = ?`, [
        bob.id,
        bob.workspaceUuid,
        agent.uuid,
      ])
      upstream.reset()
      const res = await t.http('POST', `/api/v1/threads/${thread}/run`, { token: alice.token, body: { content: 'Hidden agent' } })
      expectErrorBody(res, 404, 'NOT_FOUND', 'Agent not found')
      expect(upstream.requests).toHaveLength(0)
    })
  })

  describe('upstream faults', () => {
    const failedRun = async (reply: Parameters<Upstream['enqueue']>[0], status: number) => {
      const agent = await makeAgent(alice)
      upstream.enqueue(reply)
      const res = await run(alice, agent.uuid, { input: 'Will it fail?' })
      expectErrorBody(res, status, status === 504 ? 'GATEWAY_TIMEOUT' : 'BAD_GATEWAY')
      const runUuid = /Run ([0-9a-f-]{36}) failed/.exec(res.body.message)?.[1]
      expect(runUuid).toMatch(UUID)
      const read = await t.http('GET', `/api/v1/runs/${runUuid}`, { token: alice.token })
      expect(read.body.data.run.status).toBe('failed')
      // The user's message is kept; no half-written answer.
      expect(read.body.data.messages.map((m: { role: string }) => m.role)).toEqual(['user'])
      expect(JSON.stringify(res.body)).not.toContain('sk-upstream-test')
      return read.body.data.run
    }

    it('stores an answer holding NUL characters and lone surrogates cleaned, never failing on them', async () => {
      const agent = await makeAgent(alice)
      upstream.enqueue({ kind: 'text', text: 'a\u0000b\uD800c' })
      const res = await run(alice, agent.uuid, { input: 'Odd text please' })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body.data.run.output).toBe('ab\uFFFDc')
      expect(res.body.data.messages[1].content).toBe('ab\uFFFDc')
      const events = await readSse(`${t.url}/api/v1/runs/${res.body.data.run.uuid}/events`, { authorization: `Bearer ${alice.token}` })
      expect(events.events.at(-1)?.event).toBe('run.succeeded')
    })

    it('ends the run failed with a 502 when the upstream answers 500', async () => {
      const stored = await failedRun({ kind: 'status', status: 500 }, 502)
      expect(stored.error).toEqual({ code: 'upstream_error', message: 'The model provider answered 500' })
    })

    it('ends the run failed with a 502 when the upstream answers 429', async () => {
      const stored = await failedRun({ kind: 'status', status: 429 }, 502)
      expect(stored.error.message).toContain('429')
    })

    it('ends the run failed with a 502 on malformed JSON and on a stream dropped mid-answer', async () => {
      await failedRun({ kind: 'malformed' }, 502)
      await failedRun({ kind: 'drop', afterChunks: 2 }, 502)
    })

    it('ends the run failed with a 504 when the upstream is slower than LLM_TIMEOUT_MS', async () => {
      const stored = await failedRun({ kind: 'slow', delayMs: 5000 }, 504)
      expect(stored.error.code).toBe('upstream_timeout')
      await vi.waitFor(() => expect(upstream.pending()).toBe(0), { timeout: 2000 })
    })

    it('stores nothing and drops the model call, already started, when the run cannot be stored (500, both modes)', async () => {
      // The model call starts while the launch statement runs; a launch that fails must take it down.
      await t.sql(`create or replace function refuse_launch() returns trigger language plpgsql as $$
        begin if new.input = '"cannot store"'::jsonb then raise exception 'launch refused'; end if; return new; end $$`)
      await t.sql('create trigger refuse_launch before insert on runs for each row execute function refuse_launch()')
      try {
        const agent = await makeAgent(alice)
        const count = async () => {
          const [row] = await t.sql(
            `select (select count(*) from runs where agent_id = a.id)::int as runs, (select count(*) from threads where agent_id = a.id)::int as threads,
               (select count(*) from messages where content = 'cannot store')::int as messages, a.usage_count::int as usage
             from agents a where a.uuid = ?`,
            [agent.uuid],
          )
          return row
        }
        for (const background of [false, true]) {
          upstream.enqueue({ kind: 'slow', delayMs: 5000 })
          const res = await run(alice, agent.uuid, { input: 'cannot store', background })
          expectErrorBody(res, 500, 'INTERNAL_SERVER_ERROR')
          expect(JSON.stringify(res.body)).not.toContain('launch refused')
          await vi.waitFor(() => expect(upstream.pending()).toBe(0), { timeout: 1000 })
        }
        // Whether the call reached the upstream before the launch failed is a matter of timing (PGlite fails first).
        expect(upstream.requests.length).toBeLessThanOrEqual(2)
        expect(await count()).toEqual({ runs: 0, threads: 0, messages: 0, usage: 0 })
        // Nothing half-written either: no event of a run that does not exist.
        expect(await t.sql('select count(*)::int as n from run_events e where not exists (select 1 from runs r where r.id = e.run_id)')).toEqual([{ n: 0 }])
        expect(t.runtime.runs.activeCount).toBe(0)
        upstream.reset()
        const ok = await run(alice, agent.uuid, { input: 'Stored this time' })
        expect(ok.status, JSON.stringify(ok.body)).toBe(200)
        expect(ok.body.data.run.output).toBe('Echo: Stored this time')
      } finally {
        await t.sql('drop trigger refuse_launch on runs')
        await t.sql('drop function refuse_launch()')
      }
    })
  })

  describe('events (GET /api/v1/runs/{run_uuid}/events and runs.events)', () => {
    it('streams a background run as SSE with increasing ids, ending after run.succeeded; Last-Event-ID resumes', async () => {
      const agent = await makeAgent(alice)
      upstream.enqueue({ kind: 'slow', delayMs: 100 })
      const started = await run(alice, agent.uuid, { input: 'Stream me', background: true })
      const uuid = started.body.data.run.uuid
      const events = await readSse(`${t.url}/api/v1/runs/${uuid}/events`, { authorization: `Bearer ${alice.token}` })
      expect(events.status).toBe(200)
      expect(events.contentType).toContain('text/event-stream')
      const types = events.events.map((e) => e.event)
      expect(types[0]).toBe('run.started')
      expect(types).toContain('text.delta')
      expect(types).toContain('message')
      expect(types.at(-1)).toBe('run.succeeded')
      expect(events.events.map((e) => Number(e.id))).toEqual(events.events.map((_, i) => i + 1))
      const text = events.events.filter((e) => e.event === 'text.delta').map((e) => JSON.parse(e.data).data.text).join('')
      expect(text).toBe('Echo: Stream me')
      const resumed = await readSse(`${t.url}/api/v1/runs/${uuid}/events`, { authorization: `Bearer ${alice.token}`, 'last-event-id': '2' })
      expect(resumed.events.map((e) => Number(e.id))).toEqual(events.events.slice(2).map((e) => Number(e.id)))
    })

    it('serves the same events through the tRPC subscription, resumable with lastEventId', async () => {
      const agent = await makeAgent(alice)
      const done = await run(alice, agent.uuid, { input: 'Subscribe' })
      const uuid = done.body.data.run.uuid
      const collect = async (lastEventId?: string) => {
        const seen: { id: string; type: string }[] = []
        const iterable = await t.as(alice).runs.events({ run_uuid: uuid, lastEventId })
        // A tracked event reaches an in-process caller as tRPC's envelope [id, data, symbol], which
        // its types describe as {id, data}: the guard reads what arrives.
        for await (const item of iterable) {
          if (!isTrackedEnvelope(item)) throw new Error('expected a tracked event')
          const [id, data] = item
          seen.push({ id, type: (data as { type: string }).type })
        }
        return seen
      }
      const all = await collect()
      expect(all.at(-1)?.type).toBe('run.succeeded')
      expect(all.map((e) => e.id)).toEqual(all.map((_, i) => String(i + 1)))
      expect(await collect('3')).toEqual(all.slice(3))
    })

    /** A run of alice's as a dead process would leave it: `running`, its log stopped after run.started. */
    const strandedRun = async (agentUuid: string) => {
      const [row] = await t.sql(
        `insert into runs (uuid, kind, status, agent_id, user_id, workspace_id, events_count, started_at, created_at, updated_at)
         select gen_random_uuid(), 'agent', 'running', a.id, a.user_id, a.workspace_id, 1, now(), now(), now() - interval '1 hour'
         from agents a where a.uuid = ? returning id::float8 as id, uuid`,
        [agentUuid],
      )
      await t.sql(`insert into run_events (run_id, seq, type, data, created_at) values (?, 1, 'run.started', '{}', now())`, [row.id])
      return { id: Number(row.id), uuid: String(row.uuid) }
    }

    it('keeps a follower waiting for the final event of a run that has just ended, then ends it', async () => {
      const agent = await makeAgent(alice)
      const stranded = await strandedRun(agent.uuid)
      await t.sql(`update runs set status = 'succeeded', finished_at = now() where id = ?`, [stranded.id])
      const follow = readSse(`${t.url}/api/v1/runs/${stranded.uuid}/events`, { authorization: `Bearer ${alice.token}` })
      // The writer stores its final event a moment after it settled the run.
      await new Promise((resolve) => setTimeout(resolve, 300))
      await t.sql(`insert into run_events (run_id, seq, type, data, created_at) values (?, 2, 'run.succeeded', '{}', now())`, [stranded.id])
      expect((await follow).events.map((e) => e.event)).toEqual(['run.started', 'run.succeeded'])
    })

    it('takes over a run whose process died: the same run goes on, its log continues after run.resumed and ends succeeded', async () => {
      const agent = await makeAgent(alice)
      // A run as a process that died mid-answer left it: its thread and user message, half a text streamed.
      const thread = await t.as(alice).threads.create({ agent_uuid: agent.uuid } as never)
      const [row] = await t.sql(
        `insert into runs (uuid, kind, status, agent_id, thread_id, user_id, workspace_id, input, events_count, started_at, heartbeat_at, created_at, updated_at)
         select gen_random_uuid(), 'thread', 'running', a.id, th.id, a.user_id, a.workspace_id, '"Carry on"', 2, now(), now() - interval '1 hour', now(), now()
         from agents a join threads th on th.uuid = ? where a.uuid = ? returning id::float8 as id, uuid, thread_id::float8 as thread_id`,
        [thread.data.uuid, agent.uuid],
      )
      await t.sql(
        `insert into messages (uuid, thread_id, run_id, user_id, workspace_id, role, content, parts, created_at, updated_at)
         select gen_random_uuid(), r.thread_id, r.id, r.user_id, r.workspace_id, 'user', 'Carry on', '[{"type":"text","text":"Carry on"}]', now(), now() from runs r where r.id = ?`,
        [row.id],
      )
      await t.sql(
        `insert into run_events (run_id, seq, type, data, created_at) values (?, 1, 'run.started', '{}', now()), (?, 2, 'text.delta', '{"text":"Echo: Car"}', now())`,
        [row.id, row.id],
      )
      const follow = readSse(`${t.url}/api/v1/runs/${row.uuid}/events`, { authorization: `Bearer ${alice.token}` })
      await t.runtime.runs.sweep()
      const events = (await follow).events
      expect([...new Set(events.map((e) => e.event))]).toEqual(['run.started', 'text.delta', 'run.resumed', 'message', 'run.succeeded'])
      expect(events.slice(0, 3).map((e) => e.event)).toEqual(['run.started', 'text.delta', 'run.resumed'])
      expect(events.map((e) => Number(e.id))).toEqual(events.map((_, index) => index + 1))
      const resumedText = events.filter((e) => e.event === 'text.delta' && Number(e.id) > 3).map((e) => JSON.parse(e.data).data.text)
      expect(resumedText.join('')).toBe('Echo: Carry on')
      // The step that was streaming is asked again: its text logged before run.resumed is not the answer's.
      expect(JSON.parse(events[2].data).data).toEqual({ run_uuid: row.uuid, reason: 'interrupted', discarded_after: 1 })
      expect(lastUserText()).toBe('Carry on')
      const read = await t.http('GET', `/api/v1/runs/${row.uuid}`, { token: alice.token })
      expect(read.body.data.run).toMatchObject({ status: 'succeeded', output: 'Echo: Carry on', events_count: events.length })
      expect(read.body.data.messages.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
        ['user', 'Carry on'],
        ['assistant', 'Echo: Carry on'],
      ])
      const [claims] = await t.sql('select attempts, checkpoint from runs where id = ?', [row.id])
      expect(claims).toEqual({ attempts: 2, checkpoint: null })
    })

    it('marks a run whose process died as often as it is taken over failed (interrupted) with a final event, so its followers end', async () => {
      const agent = await makeAgent(alice)
      const stranded = await strandedRun(agent.uuid)
      await t.sql('update runs set attempts = 3 where id = ?', [stranded.id])
      expect(await t.runtime.runs.sweep()).toBeGreaterThanOrEqual(1)
      const read = await t.http('GET', `/api/v1/runs/${stranded.uuid}`, { token: alice.token })
      expect(read.body.data.run).toMatchObject({ status: 'failed', error: { code: 'interrupted' }, events_count: 2 })
      const events = await readSse(`${t.url}/api/v1/runs/${stranded.uuid}/events`, { authorization: `Bearer ${alice.token}` })
      expect(events.events.map((e) => [e.id, e.event])).toEqual([
        ['1', 'run.started'],
        ['2', 'run.failed'],
      ])
    })

    it("answers 401, 404 for another user's run and 400 for a malformed id or Last-Event-ID", async () => {
      const agent = await makeAgent(alice)
      const uuid = (await run(alice, agent.uuid, { input: 'x' })).body.data.run.uuid
      expectErrorBody(await t.http('GET', `/api/v1/runs/${uuid}/events`), 401, 'UNAUTHORIZED')
      expectErrorBody(await t.http('GET', `/api/v1/runs/${uuid}/events`, { token: bob.token }), 404, 'NOT_FOUND', 'Run not found')
      expectInvalid(await t.http('GET', '/api/v1/runs/0123-abcd/events', { token: alice.token }), 'run_uuid')
      expectInvalid(await t.http('GET', `/api/v1/runs/${uuid}/events`, { token: alice.token, headers: { 'last-event-id': 'x' } }), 'Last-Event-ID')
    })
  })

  describe('runs.retrieve and runs.cancel', () => {
    it("answers 404 for another user's run, 400 for a malformed uuid, 401 without a token", async () => {
      const agent = await makeAgent(alice)
      const uuid = (await run(alice, agent.uuid, { input: 'x' })).body.data.run.uuid
      expect((await t.http('GET', `/api/v1/runs/${uuid}`, { token: alice.token })).status).toBe(200)
      // Reading a run and its events is a read: a read-only token may.
      const reader = await readOnlyToken(t, alice)
      expect((await t.http('GET', `/api/v1/runs/${uuid}`, reader)).body.data.run.uuid).toBe(uuid)
      expect((await readSse(`${t.url}/api/v1/runs/${uuid}/events`, { authorization: `Bearer ${reader.token}` })).events.at(-1)?.event).toBe('run.succeeded')
      expectErrorBody(await t.http('GET', `/api/v1/runs/${uuid}`, { token: bob.token }), 404, 'NOT_FOUND', 'Run not found')
      expectInvalid(await t.http('GET', '/api/v1/runs/0123-abcd', { token: alice.token }), 'run_uuid')
      expectErrorBody(await t.http('GET', `/api/v1/runs/${uuid}`), 401, 'UNAUTHORIZED')
      expectInvalid(await t.http('POST', '/api/v1/runs/0123-abcd/cancel', { token: alice.token }), 'run_uuid')
      expectErrorBody(await t.http('POST', `/api/v1/runs/${uuid}/cancel`), 401, 'UNAUTHORIZED')
      expect((await t.http('GET', `/api/v1/runs/${uuid}`, { token: alice.token })).body.data.run.status).toBe('succeeded')
    })

    it('cancels a running run (it ends canceled, its stream ends with run.canceled); a second cancel is a 409', async () => {
      const agent = await makeAgent(alice)
      upstream.enqueue({ kind: 'slow', delayMs: 1200 })
      const started = await run(alice, agent.uuid, { input: 'Stop me', background: true })
      const uuid = started.body.data.run.uuid
      const stream = readSse(`${t.url}/api/v1/runs/${uuid}/events`, { authorization: `Bearer ${alice.token}` })
      const canceled = await t.http('POST', `/api/v1/runs/${uuid}/cancel`, { token: alice.token })
      expect(canceled.status).toBe(200)
      expect(canceled.body.data.run.status).toBe('canceled')
      expect((await stream).events.at(-1)?.event).toBe('run.canceled')
      expectErrorBody(await t.http('POST', `/api/v1/runs/${uuid}/cancel`, { token: alice.token }), 409, 'CONFLICT')
      expectErrorBody(await t.http('POST', `/api/v1/runs/${uuid}/cancel`, { token: bob.token }), 404, 'NOT_FOUND')
      expectErrorBody(await t.http('POST', `/api/v1/runs/${uuid}/cancel`, await readOnlyToken(t, alice)), 403, 'FORBIDDEN')
      await vi.waitFor(() => expect(upstream.pending()).toBe(0), { timeout: 2000 })
    })
  })

  describe('prompts.run (POST /api/v1/prompts/{prompt_uuid}/run)', () => {
    const makePrompt = async () =>
      (
        await t.as(alice).prompts.create({
          name: 'Summary',
          content: 'Summarise {{topic}} for {{audience}}.',
          metadata: {
            input: [
              { key: 'topic', label: 'Topic', type: 'text', required: true },
              { key: 'audience', label: 'Audience', type: 'select', required: false, options: ['kids', 'experts'] },
            ],
          },
        } as never)
      ).data

    it('takes over a prompt run whose process died: rendered again from its stored input, it succeeds as the same run', async () => {
      const prompt = await makePrompt()
      const [row] = await t.sql(
        `insert into runs (uuid, kind, status, prompt_id, model, user_id, workspace_id, input, events_count, started_at, heartbeat_at, created_at, updated_at)
         select gen_random_uuid(), 'prompt', 'running', p.id, 'gpt-4o-mini', p.user_id, p.workspace_id, '{"topic":"tides","audience":"kids"}', 1, now(), now() - interval '1 hour', now(), now()
         from prompts p where p.uuid = ? returning id::float8 as id, uuid`,
        [prompt.uuid],
      )
      await t.sql(`insert into run_events (run_id, seq, type, data, created_at) values (?, 1, 'run.started', '{}', now())`, [row.id])
      const follow = readSse(`${t.url}/api/v1/runs/${row.uuid}/events`, { authorization: `Bearer ${alice.token}` })
      await t.runtime.runs.sweep()
      const events = (await follow).events
      expect(events.slice(0, 2).map((e) => e.event)).toEqual(['run.started', 'run.resumed'])
      expect(events.at(-1)?.event).toBe('run.succeeded')
      const read = await t.http('GET', `/api/v1/runs/${row.uuid}`, { token: alice.token })
      expect(read.body.data.run).toMatchObject({ kind: 'prompt', prompt_uuid: prompt.uuid, status: 'succeeded', output: 'Echo: Summarise tides for kids.' })
    })

    it('renders the content with the inputs and runs it on the default or the named model', async () => {
      const prompt = await makePrompt()
      const res = await t.http('POST', `/api/v1/prompts/${prompt.uuid}/run`, { token: alice.token, body: { input: { topic: 'tides', audience: 'kids' } } })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body.data.run).toMatchObject({ kind: 'prompt', prompt_uuid: prompt.uuid, thread_uuid: null, status: 'succeeded' })
      expect(res.body.data.run.output).toBe('Echo: Summarise tides for kids.')
      expect(res.body.data.messages).toEqual([])
      const named = await t.http('POST', `/api/v1/prompts/${prompt.uuid}/run`, {
        token: alice.token,
        body: { input: { topic: 'tides' }, large_language_model: 'gpt-4o' },
      })
      expect(named.status).toBe(200)
      expect(upstream.requests.at(-1)?.body.model).toBe('gpt-4o')
    })

    it('answers 400 naming the input before any model call: missing required, outside options, undeclared; unknown model', async () => {
      const prompt = await makePrompt()
      const post = (body: unknown) => t.http('POST', `/api/v1/prompts/${prompt.uuid}/run`, { token: alice.token, body })
      const before = upstream.requests.length
      expectInvalid(await post({ input: {} }), 'input.topic')
      expectInvalid(await post({ input: { topic: 'x', audience: 'adults' } }), 'input.audience')
      expectInvalid(await post({ input: { topic: 'x', colour: 'red' } }), 'input.colour')
      expectInvalid(await post({ input: { topic: 'x' }, large_language_model: 'nope' }), 'large_language_model')
      expectInvalid(await post({ input: { topic: 'x' }, background: 1 }), 'background')
      expectInvalid(await post({ input: { topic: 'x' }, large_language_model: '' }), 'large_language_model')
      expectInvalid(await post({ input: 'x' }), 'input')
      expectInvalid(await t.http('POST', '/api/v1/prompts/0123-abcd/run', { token: alice.token, body: { input: { topic: 'x' } } }), 'prompt_uuid')
      expect(upstream.requests.length).toBe(before)
      expectErrorBody(await t.http('POST', `/api/v1/prompts/${prompt.uuid}/run`, { token: bob.token, body: { input: { topic: 'x' } } }), 404, 'NOT_FOUND')
      expectErrorBody(await t.http('POST', `/api/v1/prompts/${prompt.uuid}/run`, { token: 'nope', body: { input: { topic: 'x' } } }), 401, 'UNAUTHORIZED')
      expectErrorBody(await t.http('POST', `/api/v1/prompts/${prompt.uuid}/run`, { token: (await readOnlyToken(t, alice)).token, body: { input: { topic: 'x' } } }), 403, 'FORBIDDEN')
    })
  })
})

describe('runs without any provider key', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await createTestApp()
  })
  afterAll(async () => t?.close())

  it('answers with the built-in local test model', async () => {
    const user = await t.make.user()
    const agent = (await t.as(user).agents.create({ name: 'Offline' } as never)).data
    const res = await t.http('POST', `/api/v1/agents/${agent.uuid}/run`, { token: user.token, body: { input: 'ping' } })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.data.run.model).toBe('local-test-model')
    expect(res.body.data.run.output).toBe('I am the local test model; I do not think. You said: ping')
  })
})
