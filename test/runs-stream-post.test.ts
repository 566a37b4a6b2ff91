/**
 * One-request streaming (docs/api/runs.md, "One-request streaming"): `POST agents/{x}/run`,
 * `threads/{x}/run` and `prompts/{x}/run` asked with `Accept: text/event-stream` or `stream: true`
 * answer the run's events as Server-Sent Events on the same request, the same events as
 * `GET runs/{x}/events`; the run is stored and resumable like a background run, refusals before it
 * starts are JSON, a disconnect leaves the run going, and a draining process tells the stream to
 * reconnect. Over real HTTP, with the real OpenAI provider client talking to test/helpers/upstream.ts.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { buildHttpApp } from '../src/http/app.ts'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { makeAgent, readOnlyToken } from './helpers/agents.ts'
import { expectErrorBody, expectInvalid, hiddenCheck, UUID } from './helpers/expect.ts'
import { makePrompt } from './helpers/prompts.ts'
import { openSse, readSse, type SseEvent } from './helpers/sse.ts'
import { startUpstream, type Upstream } from './helpers/upstream.ts'

const FINAL = ['run.succeeded', 'run.failed', 'run.canceled']
/** Events with their data parsed: a live event's JSON keys come in the order written, a stored one's as jsonb keeps them. */
const parsed = (events: SseEvent[]) => events.map((e) => ({ ...e, data: JSON.parse(e.data) as unknown }))
const SSE = { accept: 'text/event-stream' }

describe('one-request streaming (POST .../run answered as Server-Sent Events)', () => {
  let t: TestApp
  let upstream: Upstream
  let alice: TestUser
  let bob: TestUser

  beforeAll(async () => {
    upstream = await startUpstream()
    t = await createTestApp({ OPENAI_API_KEY: 'sk-upstream-test', OPENAI_BASE_URL: upstream.url, LLM_TIMEOUT_MS: '5000' })
    alice = await t.make.user({ name: 'Alice Streamer' })
    bob = await t.make.user({ name: 'Bob Other' })
  })
  afterAll(async () => {
    await t?.close()
    await upstream?.close()
  })
  beforeEach(() => upstream.reset())

  const auth = (user: { token: string }) => ({ authorization: `Bearer ${user.token}` })
  /** POSTs `body` to `path` and reads the whole answer as a stream; `accept` false sends only `stream: true`. */
  const postStream = (user: { token: string }, path: string, body: Record<string, unknown>, accept = true) =>
    readSse(`${t.url}${path}`, { ...auth(user), ...(accept ? SSE : { accept: 'application/json' }) }, { method: 'POST', body })
  /** The whole stored log, as `GET runs/{x}/events` sends it. */
  const storedEvents = async (runUuid: string, headers: Record<string, string> = {}) =>
    (await readSse(`${t.url}/api/v1/runs/${runUuid}/events`, { ...auth(alice), ...headers })).events

  /** A streamed answer: 200 text/event-stream, ids 1..n without gaps, from run.started to one final event, naming its run. */
  async function expectRunStream(
    res: Awaited<ReturnType<typeof postStream>>,
    finalType = 'run.succeeded',
  ): Promise<{ runUuid: string; events: SseEvent[] }> {
    expect(res.status, res.body).toBe(200)
    expect(res.contentType).toMatch(/^text\/event-stream/)
    const { events } = res
    expect(events.map((e) => Number(e.id))).toEqual(events.map((_, i) => i + 1))
    expect(events[0].event).toBe('run.started')
    expect(events.at(-1)?.event).toBe(finalType)
    expect(events.filter((e) => FINAL.includes(e.event))).toHaveLength(1)
    const runUuid = JSON.parse(events[0].data).data.run_uuid
    expect(runUuid).toMatch(UUID)
    expect(res.headers.get('x-run-uuid')).toBe(runUuid)
    expect(res.headers.get('x-request-id')).toBeTruthy()
    // Each event's data is the wire event with the SSE id and type.
    for (const event of events) expect(JSON.parse(event.data)).toMatchObject({ id: Number(event.id), type: event.event })
    // The run is stored as a background run, with the very events streamed.
    const stored = await t.http('GET', `/api/v1/runs/${runUuid}`, { token: alice.token })
    expect(stored.body.data.run).toMatchObject({ status: finalType.replace('run.', ''), background: true, events_count: events.length })
    expect(parsed(await storedEvents(runUuid))).toEqual(parsed(events))
    return { runUuid, events }
  }

  const streamedText = (events: SseEvent[]) =>
    events
      .filter((e) => e.event === 'text.delta')
      .map((e) => JSON.parse(e.data).data.text)
      .join('')

  describe('each run endpoint, with Accept: text/event-stream and with stream: true', () => {
    it('POST agents/{x}/run streams the run to its final event; X-Thread-UUID names the new thread', async () => {
      const agent = await makeAgent(t, alice, { instruction: 'Answer briefly.' })
      for (const accept of [true, false]) {
        const res = await postStream(
          alice,
          `/api/v1/agents/${agent.uuid}/run`,
          accept ? { input: 'Hello stream' } : { input: 'Hello stream', stream: true },
          accept,
        )
        const { runUuid, events } = await expectRunStream(res)
        expect(streamedText(events)).toBe('Echo: Hello stream')
        const stored = (await t.http('GET', `/api/v1/runs/${runUuid}`, { token: alice.token })).body.data
        expect(res.headers.get('x-thread-uuid')).toBe(stored.run.thread_uuid)
        expect(stored.run.output).toBe('Echo: Hello stream')
        expect(stored.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant'])
        expect(JSON.parse(events.at(-1)!.data).data).toMatchObject({ run_uuid: runUuid, output: 'Echo: Hello stream' })
      }
    })

    it('POST threads/{x}/run streams a run in the thread, with its history', async () => {
      const agent = await makeAgent(t, alice)
      const first = await t.http('POST', `/api/v1/agents/${agent.uuid}/run`, { token: alice.token, body: { input: 'First' } })
      const thread = first.body.data.run.thread_uuid
      for (const accept of [true, false]) {
        const content = accept ? 'Second' : 'Third'
        const res = await postStream(alice, `/api/v1/threads/${thread}/run`, accept ? { content } : { content, stream: true }, accept)
        const { runUuid, events } = await expectRunStream(res)
        expect(streamedText(events)).toBe(`Echo: ${content}`)
        expect(res.headers.get('x-thread-uuid')).toBe(thread)
        const stored = (await t.http('GET', `/api/v1/runs/${runUuid}`, { token: alice.token })).body.data.run
        expect(stored).toMatchObject({ kind: 'thread', thread_uuid: thread })
        const sent = upstream.requests.at(-1)?.body.messages as { role: string; content: unknown }[]
        expect(sent.filter((m) => m.role === 'user').map((m) => m.content)).toContain('First')
      }
    })

    it('POST prompts/{x}/run streams a prompt run (no thread, no X-Thread-UUID)', async () => {
      const prompt = await makePrompt(t, alice, {
        content: 'Say {{topic}}.',
        metadata: { input: [{ key: 'topic', label: 'Topic', type: 'text', required: true }] },
      })
      for (const accept of [true, false]) {
        const body = accept ? { input: { topic: 'tides' } } : { input: { topic: 'tides' }, stream: true }
        const res = await postStream(alice, `/api/v1/prompts/${prompt.uuid}/run`, body, accept)
        const { runUuid, events } = await expectRunStream(res)
        expect(streamedText(events)).toBe('Echo: Say tides.')
        expect(res.headers.get('x-thread-uuid')).toBeNull()
        expect((await t.http('GET', `/api/v1/runs/${runUuid}`, { token: alice.token })).body.data.run).toMatchObject({
          kind: 'prompt',
          thread_uuid: null,
          prompt_uuid: prompt.uuid,
        })
      }
    })

    it('streams a run the upstream fails to its run.failed event (a 200 stream, not a 502)', async () => {
      const agent = await makeAgent(t, alice)
      upstream.enqueue({ kind: 'status', status: 500 })
      const { runUuid, events } = await expectRunStream(
        await postStream(alice, `/api/v1/agents/${agent.uuid}/run`, { input: 'Fail' }),
        'run.failed',
      )
      expect(JSON.parse(events.at(-1)!.data).data).toMatchObject({ run_uuid: runUuid, error: { code: 'upstream_error' } })
    })

    it('answers JSON as before without Accept: text/event-stream or stream, and with stream: false whatever Accept says', async () => {
      const agent = await makeAgent(t, alice)
      const plain = await t.http('POST', `/api/v1/agents/${agent.uuid}/run`, { token: alice.token, body: { input: 'Plain' } })
      expect(plain.status).toBe(200)
      expect(plain.body.data.run).toMatchObject({ status: 'succeeded', background: false })
      expect(plain.headers.get('x-run-uuid')).toBeNull()
      const refused = await t.http('POST', `/api/v1/agents/${agent.uuid}/run`, {
        token: alice.token,
        headers: SSE,
        body: { input: 'No stream', stream: false },
      })
      expect(refused.status).toBe(200)
      expect(refused.headers.get('content-type')).toMatch(/^application\/json/)
      expect(refused.body.data.run).toMatchObject({ status: 'succeeded', output: 'Echo: No stream' })
      const background = await t.http('POST', `/api/v1/agents/${agent.uuid}/run`, {
        token: alice.token,
        body: { input: 'Later', background: true },
      })
      expect(background.status).toBe(202)
    })

    it('through tRPC, stream: true runs as background: true (the started run; follow runs.events)', async () => {
      const agent = await makeAgent(t, alice)
      const started = await t.as(alice).runs.agent({ agent_uuid: agent.uuid, input: 'Via tRPC', stream: true })
      expect(started.data.run).toMatchObject({ status: 'running', background: true })
      const events = await storedEvents(started.data.run.uuid)
      expect(events.at(-1)?.event).toBe('run.succeeded')
      expect(streamedText(events)).toBe('Echo: Via tRPC')
    })
  })

  describe('resuming and disconnecting', () => {
    it('a client that drops the stream resumes with GET runs/{x}/events and Last-Event-ID: no event lost or repeated; the run goes on', async () => {
      const agent = await makeAgent(t, alice)
      upstream.enqueue({ kind: 'slow', delayMs: 600 })
      const stream = await openSse(
        `${t.url}/api/v1/agents/${agent.uuid}/run`,
        { ...auth(alice), ...SSE },
        { method: 'POST', body: { input: 'Slowly' } },
      )
      expect(stream.status).toBe(200)
      const runUuid = stream.headers.get('x-run-uuid')!
      const first = (await stream.next())!
      expect(first).toMatchObject({ id: '1', event: 'run.started' })
      stream.drop()
      // The run is not canceled by the disconnect: it is still running, then ends succeeded.
      expect((await t.http('GET', `/api/v1/runs/${runUuid}`, { token: alice.token })).body.data.run.status).toBe('running')
      const rest = await storedEvents(runUuid, { 'last-event-id': first.id! })
      expect(rest.at(-1)?.event).toBe('run.succeeded')
      const all = [first, ...rest]
      expect(all.map((e) => Number(e.id))).toEqual(all.map((_, i) => i + 1))
      expect(parsed(all)).toEqual(parsed(await storedEvents(runUuid)))
      expect(streamedText(all)).toBe('Echo: Slowly')
      const stored = (await t.http('GET', `/api/v1/runs/${runUuid}`, { token: alice.token })).body.data.run
      expect(stored).toMatchObject({ status: 'succeeded', output: 'Echo: Slowly', events_count: all.length })
    })

    it('a stream open when its process starts draining gets reconnect (last_event_id) and ends; another process carries on', async () => {
      // A second HTTP host over the same runtime stands for a second API process.
      const other = await buildHttpApp(t.runtime)
      await other.app.listen({ port: 0, host: '127.0.0.1' })
      const address = other.app.server.address()
      const otherUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
      try {
        const agent = await makeAgent(t, alice)
        upstream.enqueue({ kind: 'slow', delayMs: 600 })
        const stream = await openSse(
          `${otherUrl}/api/v1/agents/${agent.uuid}/run`,
          { ...auth(alice), ...SSE },
          { method: 'POST', body: { input: 'Drained' } },
        )
        const runUuid = stream.headers.get('x-run-uuid')!
        expect(await stream.next()).toMatchObject({ id: '1', event: 'run.started' })
        other.front.drain()
        const reconnect = await stream.next()
        expect(reconnect?.event).toBe('reconnect')
        expect(JSON.parse(reconnect!.data)).toMatchObject({ last_event_id: 1, retry_ms: 1000 })
        expect(await stream.next()).toBeUndefined()
        const rest = await storedEvents(runUuid, { 'last-event-id': '1' })
        expect(rest[0].id).toBe('2')
        expect(rest.at(-1)?.event).toBe('run.succeeded')
      } finally {
        await other.app.close()
      }
    })
  })

  describe('refusals before any stream: JSON with their statuses', () => {
    const countRuns = async () => (await t.sql('select count(*)::int as n from runs'))[0].n

    it('400 naming the field (bad input, stream not a boolean, a malformed uuid), nothing stored', async () => {
      const agent = await makeAgent(t, alice)
      const before = await countRuns()
      const post = (path: string, body: Record<string, unknown>) => t.http('POST', path, { token: alice.token, headers: SSE, body })
      for (const res of [
        await post(`/api/v1/agents/${agent.uuid}/run`, {}),
        await post(`/api/v1/agents/${agent.uuid}/run`, { input: 'x', stream: 'yes' }),
        await post(`/api/v1/agents/${agent.uuid}/run`, { input: 'x', extra: 1 }),
        await post('/api/v1/agents/0123-abcd/run', { input: 'x' }),
      ]) {
        expect(res.headers.get('content-type')).toMatch(/^application\/json/)
        expect(res.headers.get('x-run-uuid')).toBeNull()
      }
      expectInvalid(await post(`/api/v1/agents/${agent.uuid}/run`, {}), 'input')
      expectInvalid(await post(`/api/v1/agents/${agent.uuid}/run`, { input: 'x', stream: 'yes' }), 'stream')
      expectInvalid(await post(`/api/v1/agents/${agent.uuid}/run`, { input: 'x', stream: 1 }), 'stream')
      expectInvalid(await post('/api/v1/agents/0123-abcd/run', { input: 'x', stream: true }), 'agent_uuid')
      expectInvalid(await post(`/api/v1/threads/${agent.uuid}/run`, { content: '', stream: true }), 'content')
      const prompt = await makePrompt(t, alice, {
        content: 'Say {{topic}}.',
        metadata: { input: [{ key: 'topic', label: 'Topic', type: 'text', required: true }] },
      })
      expectInvalid(await post(`/api/v1/prompts/${prompt.uuid}/run`, { input: {} }), 'input.topic')
      const unknownModel = await makeAgent(t, alice, { metadata: { large_language_model: 'no-such-model' } })
      expectInvalid(await post(`/api/v1/agents/${unknownModel.uuid}/run`, { input: 'x' }), 'metadata.large_language_model')
      expect(await countRuns()).toBe(before)
    })

    it("401 without a token, 404 for another tenant's agent, thread and prompt, 403 for a read-only token", async () => {
      const agent = await makeAgent(t, alice, { visibility: 'private' })
      const prompt = await makePrompt(t, alice, { content: 'Private.', visibility: 'private' })
      const thread = (await t.http('POST', `/api/v1/agents/${agent.uuid}/run`, { token: alice.token, body: { input: 'Mine' } })).body.data
        .run.thread_uuid
      const before = await countRuns()
      const post = (user: { token: string }, path: string, body: Record<string, unknown>) =>
        t.http('POST', path, { token: user.token, headers: SSE, body })
      expectErrorBody(await post({ token: 'nope' }, `/api/v1/agents/${agent.uuid}/run`, { input: 'x' }), 401, 'UNAUTHORIZED')
      expectErrorBody(await post({ token: 'nope' }, `/api/v1/agents/${agent.uuid}/run`, { input: 'x', stream: true }), 401, 'UNAUTHORIZED')
      hiddenCheck('Agent')(await post(bob, `/api/v1/agents/${agent.uuid}/run`, { input: 'x' }), agent)
      hiddenCheck('Agent')(await post(bob, `/api/v1/agents/${agent.uuid}/run`, { input: 'x', stream: true }), agent)
      expectErrorBody(await post(bob, `/api/v1/threads/${thread}/run`, { content: 'x' }), 404, 'NOT_FOUND', 'Thread not found')
      hiddenCheck('Prompt')(await post(bob, `/api/v1/prompts/${prompt.uuid}/run`, { input: {} }), prompt)
      const reader = await readOnlyToken(t, alice)
      expectErrorBody(await post(reader, `/api/v1/agents/${agent.uuid}/run`, { input: 'x' }), 403, 'FORBIDDEN')
      expectErrorBody(await post(reader, `/api/v1/threads/${thread}/run`, { content: 'x', stream: true }), 403, 'FORBIDDEN')
      expectErrorBody(await post(reader, `/api/v1/prompts/${prompt.uuid}/run`, { input: {} }), 403, 'FORBIDDEN')
      expect(await countRuns()).toBe(before)
      await vi.waitFor(() => expect(upstream.pending()).toBe(0), { timeout: 2000 })
    })
  })
})
