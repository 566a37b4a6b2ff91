/**
 * Runs that wait (docs/api/runs.md, "Approvals", "Busy threads"): a tool call a person approves,
 * edits or denies before it runs, the run resumed as the same run by the job queue, expiry and
 * cancel of a waiting run; and a thread that takes a second message while busy (enqueue, reject,
 * interrupt). The model is the real OpenAI provider client against test/helpers/upstream.ts; the
 * tool a real HTTP server (test/helpers/tool-server.ts).
 */
import OpenAI from 'openai'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { readOnlyToken } from './helpers/agents.ts'
import { expectErrorBody, UUID } from './helpers/expect.ts'
import { until } from './helpers/processes.ts'
import { readSse } from './helpers/sse.ts'
import { startWeatherServer, type WeatherServer } from './helpers/tool-server.ts'
import { startUpstream, type Upstream } from './helpers/upstream.ts'

describe('runs that wait', () => {
  let t: TestApp
  let upstream: Upstream
  let weather: WeatherServer
  let alice: TestUser
  let bob: TestUser
  /** An agent whose `weather` tool needs approval and whose `clock` tool does not. */
  let agentUuid: string
  let weatherUuid: string

  beforeAll(async () => {
    upstream = await startUpstream()
    weather = await startWeatherServer()
    t = await createTestApp({
      OPENAI_API_KEY: 'sk-upstream-test',
      OPENAI_BASE_URL: upstream.url,
      TOOL_ALLOW_PRIVATE_NETWORK: 'true',
      // The sweep that expires approvals runs with the heartbeat.
      RUN_HEARTBEAT_MS: '300',
    })
    alice = await t.make.user({ name: 'Alice Approver' })
    bob = await t.make.user({ name: 'Bob Outsider' })
    const tool = (
      await t.as(alice).tools.create({
        name: 'Weather',
        description: 'The forecast of a city',
        method: 'GET',
        url: `${weather.url}/weather?city={{city}}`,
        input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        requires_approval: true,
      } as never)
    ).data
    weatherUuid = tool.uuid
    const clock = (
      await t.as(alice).tools.create({
        name: 'Clock',
        description: 'The forecast again, no approval needed',
        method: 'GET',
        url: `${weather.url}/weather?city=clock`,
        input_schema: { type: 'object', properties: {} },
      } as never)
    ).data
    agentUuid = (await t.as(alice).agents.create({ name: 'Careful', tools: [{ tool_uuid: tool.uuid }, { tool_uuid: clock.uuid }] } as never)).data.uuid
  })
  afterAll(async () => {
    await t?.close()
    await upstream?.close()
    await weather?.close()
  })
  beforeEach(() => {
    upstream.reset()
    weather.requests.length = 0
  })

  const run = (body: Record<string, unknown>, user: { token: string } = alice) => t.http('POST', `/api/v1/agents/${agentUuid}/run`, { token: user.token, body })
  const getRun = async (uuid: string) => (await t.http('GET', `/api/v1/runs/${uuid}`, { token: alice.token })).body.data
  const ended = (uuid: string) => until(() => getRun(uuid), (data) => ['succeeded', 'failed', 'canceled'].includes(data.run.status), 10_000, (d) => d.run)
  const askWeather = (city = 'Oslo', id = 'call_w') => ({ kind: 'tool_calls' as const, calls: [{ name: 'weather', arguments: JSON.stringify({ city }), id }] })
  const waiting = async (reply = askWeather()) => {
    upstream.enqueue(reply)
    const res = await run({ input: 'Weather in Oslo?' })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    return res.body.data
  }
  const decide = (uuid: string, how: 'approve' | 'deny', body: Record<string, unknown> = {}, user: { token: string } = alice) =>
    t.http('POST', `/api/v1/approvals/${uuid}/${how}`, { token: user.token, body })

  describe('approvals', () => {
    it('stops before the call with awaiting_approval and an approval; approved, the same run resumes, calls the tool once and ends', async () => {
      const data = await waiting()
      expect(data.run.status).toBe('awaiting_approval')
      expect(weather.requests).toEqual([])
      expect(data.approvals).toHaveLength(1)
      const approval = data.approvals[0]
      expect(approval).toMatchObject({
        run_uuid: data.run.uuid,
        thread_uuid: data.run.thread_uuid,
        agent_uuid: agentUuid,
        tool_call_id: 'call_w',
        tool_kind: 'api',
        tool_name: 'weather',
        tool_uuid: weatherUuid,
        workflow_uuid: null,
        arguments: { city: 'Oslo' },
        status: 'pending',
        decided_by: null,
        decided_at: null,
        reason: null,
      })
      expect(approval.uuid).toMatch(UUID)
      expect(new Date(approval.expires_at).getTime() - new Date(approval.created_at).getTime()).toBe(86_400_000)
      expect(data.run.approvals).toEqual(data.approvals)
      const firstUsage = data.usage.total_tokens
      expect(firstUsage).toBeGreaterThan(0)

      const listed = await t.http('GET', '/api/v1/approvals?status=pending', { token: alice.token })
      expect(listed.status).toBe(200)
      expect(listed.body.data.map((a: { uuid: string }) => a.uuid)).toContain(approval.uuid)
      expect((await t.http('GET', `/api/v1/approvals/${approval.uuid}`, { token: alice.token })).body.data).toEqual(approval)

      // A follower that opened while the run waits stays open and gets the rest.
      const following = readSse(`${t.url}/api/v1/runs/${data.run.uuid}/events`, { authorization: `Bearer ${alice.token}` })
      await new Promise((resolve) => setTimeout(resolve, 300))
      upstream.enqueue({ kind: 'text', text: 'Sunny in Oslo.' })
      const approved = await decide(approval.uuid, 'approve')
      expect(approved.status, JSON.stringify(approved.body)).toBe(200)
      expect(approved.body.data).toMatchObject({ status: 'approved', decided_by: { id: alice.id, name: 'Alice Approver' }, arguments: { city: 'Oslo' } })
      const done = await ended(data.run.uuid)
      expect(done.run).toMatchObject({ uuid: data.run.uuid, status: 'succeeded', output: 'Sunny in Oslo.', thread_uuid: data.run.thread_uuid })
      expect(done.usage.total_tokens).toBeGreaterThan(firstUsage)
      expect(weather.requests).toEqual(['/weather?city=Oslo'])
      expect(done.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant'])
      expect(done.messages[2].parts[0]).toMatchObject({ tool_call_id: 'call_w', output: { city: 'Oslo', forecast: 'sunny' }, is_error: false })
      expect(done.approvals).toEqual([])
      expect(done.run.approvals[0]).toMatchObject({ status: 'approved' })
      // One log, ids without gaps: it waited, resumed, and ended.
      const log = await following
      const types = log.events.map((e) => e.event)
      expect(log.events.map((e) => Number(e.id))).toEqual(types.map((_, i) => i + 1))
      expect(types.indexOf('run.approval_requested')).toBeLessThan(types.indexOf('run.resumed'))
      expect(types.at(-1)).toBe('run.succeeded')
      expect(types.filter((type) => type === 'run.started')).toHaveLength(1)
    })

    it('runs the step’s other calls at once, and approved with edited arguments runs those; a refused edit is a 400 naming the field', async () => {
      const data = await waiting({
        kind: 'tool_calls',
        calls: [
          { name: 'weather', arguments: '{"city":"Oslo"}', id: 'call_a' },
          { name: 'clock', arguments: '{}', id: 'call_b' },
        ],
      })
      expect(data.run.status).toBe('awaiting_approval')
      expect(weather.requests).toEqual(['/weather?city=clock'])
      const [approval] = data.approvals
      const bad = await decide(approval.uuid, 'approve', { arguments: { city: 42 } })
      expect(bad.status).toBe(400)
      expect(bad.body.code).toBe('BAD_REQUEST')
      expect(bad.body.issues[0].path).toEqual(['arguments', 'city'])
      const missing = await decide(approval.uuid, 'approve', { arguments: {} })
      expect(missing.status).toBe(400)
      expect(missing.body.issues[0].path).toEqual(['arguments', 'city'])
      expect((await t.http('GET', `/api/v1/approvals/${approval.uuid}`, { token: alice.token })).body.data.status).toBe('pending')
      upstream.enqueue({ kind: 'text', text: 'Rain in Bergen.' })
      const approved = await decide(approval.uuid, 'approve', { arguments: { city: 'Bergen' }, reason: 'Bergen is what they meant' })
      expect(approved.body.data).toMatchObject({ status: 'approved', arguments: { city: 'Bergen' }, reason: 'Bergen is what they meant' })
      const done = await ended(data.run.uuid)
      expect(done.run.status).toBe('succeeded')
      expect(weather.requests).toEqual(['/weather?city=clock', '/weather?city=Bergen'])
      // The model's next call carried both results.
      const last = upstream.requests.at(-1)?.body.messages as { role: string; tool_call_id?: string }[]
      expect(last.filter((m) => m.role === 'tool').map((m) => m.tool_call_id)).toEqual(['call_b', 'call_a'])
    })

    it('denied, the model reads {denied: true, reason} and the run goes on without the call; a second decision is a 409', async () => {
      const data = await waiting()
      const [approval] = data.approvals
      upstream.enqueue({ kind: 'text', text: 'I may not look that up.' })
      const denied = await decide(approval.uuid, 'deny', { reason: 'Not today' })
      expect(denied.status).toBe(200)
      expect(denied.body.data).toMatchObject({ status: 'denied', reason: 'Not today' })
      const done = await ended(data.run.uuid)
      expect(done.run).toMatchObject({ status: 'succeeded', output: 'I may not look that up.' })
      expect(weather.requests).toEqual([])
      const toolMessage = (upstream.requests.at(-1)?.body.messages as { role: string; content: string }[]).find((m) => m.role === 'tool')
      expect(JSON.parse(String(toolMessage?.content))).toEqual({ denied: true, reason: 'Not today' })
      expectErrorBody(await decide(approval.uuid, 'approve'), 409, 'CONFLICT')
      expectErrorBody(await decide(approval.uuid, 'deny'), 409, 'CONFLICT')
    })

    it('another tenant gets 404, a read-only token 403, no token 401; a reason over 2,000 characters and a bad status filter are 400s', async () => {
      const data = await waiting()
      const [approval] = data.approvals
      expectErrorBody(await t.http('GET', `/api/v1/approvals/${approval.uuid}`, { token: bob.token }), 404, 'NOT_FOUND')
      expectErrorBody(await decide(approval.uuid, 'approve', {}, bob), 404, 'NOT_FOUND')
      expect((await t.http('GET', '/api/v1/approvals', { token: bob.token })).body.data).toEqual([])
      expectErrorBody(await decide(approval.uuid, 'deny', {}, bob), 404, 'NOT_FOUND')
      const readOnly = await readOnlyToken(t, alice)
      expectErrorBody(await decide(approval.uuid, 'approve', {}, readOnly), 403, 'FORBIDDEN')
      expectErrorBody(await decide(approval.uuid, 'deny', {}, readOnly), 403, 'FORBIDDEN')
      // A read-only token may still read it.
      expect((await t.http('GET', `/api/v1/approvals/${approval.uuid}`, { token: readOnly.token })).body.data.status).toBe('pending')
      expectErrorBody(await t.http('POST', `/api/v1/approvals/${approval.uuid}/approve`, { body: {} }), 401, 'UNAUTHORIZED')
      expectErrorBody(await t.http('POST', `/api/v1/approvals/${approval.uuid}/deny`, { body: {} }), 401, 'UNAUTHORIZED')
      expectErrorBody(await t.http('GET', '/api/v1/approvals'), 401, 'UNAUTHORIZED')
      expectErrorBody(await t.http('GET', `/api/v1/approvals/${approval.uuid}`), 401, 'UNAUTHORIZED')
      const long = await decide(approval.uuid, 'deny', { reason: 'x'.repeat(2_001) })
      expect(long.status).toBe(400)
      expect(long.body.issues[0].path).toEqual(['reason'])
      const filter = await t.http('GET', '/api/v1/approvals?status=maybe', { token: alice.token })
      expect(filter.status).toBe(400)
      expect(filter.body.issues[0].path).toEqual(['status'])
      expect((await t.http('GET', `/api/v1/approvals/${approval.uuid}`, { token: alice.token })).body.data.status).toBe('pending')
      // Canceling the waiting run cancels its approval; deciding it then is a 409.
      const canceled = await t.http('POST', `/api/v1/runs/${data.run.uuid}/cancel`, { token: alice.token })
      expect(canceled.status).toBe(200)
      expect(canceled.body.data.run).toMatchObject({ status: 'canceled', error: { code: 'canceled' } })
      expect(canceled.body.data.run.approvals[0]).toMatchObject({ status: 'canceled' })
      expectErrorBody(await decide(approval.uuid, 'approve'), 409, 'CONFLICT')
      const log = await readSse(`${t.url}/api/v1/runs/${data.run.uuid}/events`, { authorization: `Bearer ${alice.token}` })
      expect(log.events.at(-1)?.event).toBe('run.canceled')
    })

    it('two decisions on one run at the same moment resume it once; both calls run', async () => {
      const data = await waiting({
        kind: 'tool_calls',
        calls: [
          { name: 'weather', arguments: '{"city":"Oslo"}', id: 'call_1' },
          { name: 'weather', arguments: '{"city":"Rome"}', id: 'call_2' },
        ],
      })
      expect(data.approvals.map((a: { tool_call_id: string }) => a.tool_call_id)).toEqual(['call_1', 'call_2'])
      upstream.enqueue({ kind: 'text', text: 'Both sunny.' })
      const answers = await Promise.all(data.approvals.map((a: { uuid: string }) => decide(a.uuid, 'approve')))
      expect(answers.map((a) => a.status)).toEqual([200, 200])
      const done = await ended(data.run.uuid)
      expect(done.run.output).toBe('Both sunny.')
      expect([...weather.requests].sort()).toEqual(['/weather?city=Oslo', '/weather?city=Rome'])
      const log = await readSse(`${t.url}/api/v1/runs/${data.run.uuid}/events`, { authorization: `Bearer ${alice.token}` })
      expect(log.events.filter((e) => e.event === 'run.resumed')).toHaveLength(1)
    })

    it('through the OpenAI-compatible Responses API (the official openai package): mcp_approval_request, then mcp_approval_response resumes the same run', async () => {
      const client = new OpenAI({ baseURL: `${t.url}/api/v1/openai`, apiKey: alice.token, maxRetries: 0 })
      upstream.enqueue(askWeather('Oslo', 'call_oa'))
      const first = await client.responses.create({ model: agentUuid, input: 'Weather in Oslo?' })
      expect(first.status).toBe('completed')
      const request = first.output.find((item) => item.type === 'mcp_approval_request')
      expect(request).toMatchObject({ type: 'mcp_approval_request', name: 'weather', server_label: 'agent' })
      if (request?.type !== 'mcp_approval_request') throw new Error('no approval request')
      expect(JSON.parse(request.arguments)).toEqual({ city: 'Oslo' })
      expect(weather.requests).toEqual([])
      upstream.enqueue({ kind: 'text', text: 'Sunny in Oslo.' })
      const second = await client.responses.create({
        model: agentUuid,
        previous_response_id: first.id,
        input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: true }],
      })
      expect(second.id).toBe(first.id)
      expect(second.output_text).toBe('Sunny in Oslo.')
      expect(weather.requests).toEqual(['/weather?city=Oslo'])
      // Deciding it again is OpenAI's 409; an unknown approval request is a 400 naming the item.
      const again = await client.responses
        .create({ model: agentUuid, previous_response_id: first.id, input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: false }] })
        .catch((error: unknown) => error)
      expect(again).toBeInstanceOf(OpenAI.ConflictError)
      const unknown = await client.responses
        .create({
          model: agentUuid,
          previous_response_id: first.id,
          input: [{ type: 'mcp_approval_response', approval_request_id: '00000000-0000-4000-8000-000000000000', approve: true }],
        })
        .catch((error: unknown) => error)
      expect(unknown).toBeInstanceOf(OpenAI.BadRequestError)
      expect((unknown as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('input[0].approval_request_id')
    })

    it('a command room firing stays running while its run waits, and ends with the run', async () => {
      upstream.enqueue(askWeather('Paris', 'call_cr'))
      const TASKS = '/api/v1/command-room/tasks'
      const task = await t.http('POST', TASKS, { token: alice.token, body: { name: 'Morning weather', agent_uuid: agentUuid, input: 'Weather?', schedule: 'daily', is_active: false } })
      expect(task.status, JSON.stringify(task.body)).toBe(201)
      await t.http('POST', `${TASKS}/${task.body.data.uuid}/run`, { token: alice.token })
      const firings = () => t.http('GET', `${TASKS}/${task.body.data.uuid}/firings`, { token: alice.token }).then((res) => res.body.data)
      const [firing] = await until(firings, (list) => list.length > 0 && list[0].run_uuid !== null, 10_000)
      // A firing links its run before the run is stored (docs/api/command-room.md): 404 until then.
      const waitingRun = await until(() => getRun(firing.run_uuid), (data) => data?.run?.status === 'awaiting_approval', 10_000, (d) => d?.run)
      await new Promise((resolve) => setTimeout(resolve, 500))
      expect((await firings())[0].status).toBe('running')
      upstream.enqueue({ kind: 'text', text: 'Mild in Paris.' })
      await decide(waitingRun.approvals[0].uuid, 'approve')
      const [ended] = await until(firings, (list) => list[0].status !== 'running', 10_000)
      expect(ended).toMatchObject({ status: 'succeeded', run_uuid: firing.run_uuid })
      expect((await getRun(firing.run_uuid)).run.output).toBe('Mild in Paris.')
    })

    it('streams the same through the Responses API: the approval request items before response.completed, then the rest after the decision', async () => {
      const client = new OpenAI({ baseURL: `${t.url}/api/v1/openai`, apiKey: alice.token, maxRetries: 0 })
      const completedOf = async (stream: AsyncIterable<OpenAI.Responses.ResponseStreamEvent>) => {
        const types: string[] = []
        let completed: OpenAI.Responses.Response | null = null
        for await (const event of stream) {
          types.push(event.type)
          if (event.type === 'response.completed') completed = event.response
        }
        return { types, completed }
      }
      upstream.enqueue(askWeather('Lima', 'call_st'))
      const first = await completedOf(await client.responses.create({ model: agentUuid, input: 'Weather in Lima?', stream: true }))
      const request = first.completed?.output.find((item) => item.type === 'mcp_approval_request')
      expect(request).toMatchObject({ type: 'mcp_approval_request', name: 'weather', server_label: 'agent' })
      expect(first.types.filter((type) => type === 'response.output_item.done')).toHaveLength(2)
      upstream.enqueue({ kind: 'text', text: 'Dry in Lima.' })
      const second = await completedOf(
        await client.responses.create({
          model: agentUuid,
          previous_response_id: first.completed!.id,
          input: [{ type: 'mcp_approval_response', approval_request_id: request!.id, approve: true }],
          stream: true,
        }),
      )
      expect(second.completed?.output_text).toBe('Dry in Lima.')
      expect(second.types).toContain('response.output_text.delta')
      expect(weather.requests).toEqual(['/weather?city=Lima'])
    })

    it('a workflow run_agent node waits through the approval and outputs the run\'s final answer', async () => {
      upstream.enqueue(askWeather('Kyiv', 'call_wf'))
      const flow = await t.http('POST', '/api/v1/workflows', {
        token: alice.token,
        body: {
          name: 'Ask the careful agent',
          nodes: [
            { id: 'start', type: 'manual_trigger', parameters: {} },
            { id: 'ask', type: 'run_agent', parameters: { agent_uuid: agentUuid, message: 'Weather in Kyiv?' } },
          ],
          edges: [{ id: 'e0', source: 'start', target: 'ask' }],
        },
      })
      expect(flow.status, JSON.stringify(flow.body)).toBe(201)
      const started = await t.http('POST', `/api/v1/workflows/${flow.body.data.uuid}/run`, { token: alice.token, body: { input: {}, background: true } })
      expect(started.status, JSON.stringify(started.body)).toBe(202)
      const pending = await until(
        () => t.http('GET', '/api/v1/approvals?status=pending', { token: alice.token }).then((res) => res.body.data.filter((a: { arguments: { city?: string } }) => a.arguments.city === 'Kyiv')),
        (list) => list.length === 1,
        10_000,
      )
      const execution = () => t.http('GET', `/api/v1/workflow-executions/${started.body.data.uuid}`, { token: alice.token }).then((res) => res.body.data)
      expect((await execution()).status).toBe('running')
      upstream.enqueue({ kind: 'text', text: 'Cold in Kyiv.' })
      await decide(pending[0].uuid, 'approve')
      const done = await until(execution, (data) => data.status !== 'running' && data.status !== 'queued', 10_000)
      expect(done).toMatchObject({ status: 'succeeded', output: { text: 'Cold in Kyiv.' } })
    })

    it("a workspace owner sees and decides its members' approvals; another member does not see them", async () => {
      const carol = await t.make.user({ name: 'Carol Member' })
      const dave = await t.make.user({ name: 'Dave Member' })
      const team = await t.make.workspace(alice)
      await t.make.member(team.uuid, alice, carol)
      await t.make.member(team.uuid, alice, dave)
      const inTeam = { 'x-workspace-uuid': team.uuid }
      const tool = await t.http('POST', '/api/v1/tools', {
        token: carol.token,
        headers: inTeam,
        body: { name: 'Weather', url: `${weather.url}/weather?city={{city}}`, input_schema: { type: 'object', properties: { city: { type: 'string' } } }, requires_approval: true },
      })
      const agent = await t.http('POST', '/api/v1/agents', { token: carol.token, headers: inTeam, body: { name: 'Team careful', tools: [{ tool_uuid: tool.body.data.uuid }] } })
      upstream.enqueue(askWeather('Quito', 'call_team'))
      const waiting = await t.http('POST', `/api/v1/agents/${agent.body.data.uuid}/run`, { token: carol.token, headers: inTeam, body: { input: 'Weather?' } })
      const approval = waiting.body.data.approvals[0]
      const list = (user: { token: string }) => t.http('GET', '/api/v1/approvals', { token: user.token, headers: inTeam }).then((res) => res.body.data.map((a: { uuid: string }) => a.uuid))
      expect(await list(alice)).toContain(approval.uuid)
      expect(await list(carol)).toEqual([approval.uuid])
      expect(await list(dave)).toEqual([])
      expectErrorBody(await t.http('GET', `/api/v1/approvals/${approval.uuid}`, { token: dave.token, headers: inTeam }), 404, 'NOT_FOUND')
      upstream.enqueue({ kind: 'text', text: 'Cool in Quito.' })
      const decided = await t.http('POST', `/api/v1/approvals/${approval.uuid}/deny`, { token: alice.token, headers: inTeam, body: { reason: 'Not on the team budget' } })
      expect(decided.body.data).toMatchObject({ status: 'denied', decided_by: { id: alice.id, name: 'Alice Approver' } })
      const done = await until(
        () => t.http('GET', `/api/v1/runs/${waiting.body.data.run.uuid}`, { token: carol.token, headers: inTeam }).then((res) => res.body.data.run),
        (run) => run.status === 'succeeded',
        10_000,
      )
      expect(done.output).toBe('Cool in Quito.')
    })

    it('an approval past expires_at expires (reason "expired", counted as denied) and the run resumes', async () => {
      const data = await waiting()
      const [approval] = data.approvals
      upstream.enqueue({ kind: 'text', text: 'Nobody answered.' })
      await t.sql(`update run_approvals set expires_at = now() - interval '1 second' where uuid = ?`, [approval.uuid])
      const done = await ended(data.run.uuid)
      expect(done.run).toMatchObject({ status: 'succeeded', output: 'Nobody answered.' })
      expect(done.run.approvals[0]).toMatchObject({ status: 'expired', reason: 'expired', decided_by: null })
      expect(weather.requests).toEqual([])
    })
  })

  describe('busy threads', () => {
    const threadRun = (threadUuid: string, body: Record<string, unknown>) =>
      t.http('POST', `/api/v1/threads/${threadUuid}/run`, { token: alice.token, body })
    const newThread = async () => {
      const first = await run({ input: 'Hello' })
      expect(first.status).toBe(200)
      return first.body.data.run.thread_uuid as string
    }
    const thread = async (uuid: string) => (await t.http('GET', `/api/v1/threads/${uuid}`, { token: alice.token })).body.data

    it('enqueues a message sent while the thread runs: 202 queued, started after the first ends, messages never interleaved', async () => {
      const threadUuid = await newThread()
      expect(await thread(threadUuid)).toMatchObject({ active_run: null, queued_runs_count: 0 })
      upstream.enqueue({ kind: 'slow', delayMs: 1_000, then: { kind: 'text', text: 'First answer' } }, { kind: 'text', text: 'Second answer' })
      const first = await threadRun(threadUuid, { content: 'one', background: true })
      expect(first.status).toBe(202)
      const second = await threadRun(threadUuid, { content: 'two', background: true })
      expect(second.status, JSON.stringify(second.body)).toBe(202)
      expect(second.body.data.run).toMatchObject({ status: 'queued', thread_uuid: threadUuid })
      expect(second.body.data.messages).toEqual([])
      expect(await thread(threadUuid)).toMatchObject({ active_run: { uuid: first.body.data.run.uuid, status: 'running' }, queued_runs_count: 1 })
      const done = await ended(second.body.data.run.uuid)
      expect(done.run).toMatchObject({ status: 'succeeded', output: 'Second answer' })
      expect((await getRun(first.body.data.run.uuid)).run.status).toBe('succeeded')
      const messages = (await t.http('GET', `/api/v1/messages?thread_uuid=${threadUuid}&per_page=100`, { token: alice.token })).body.data
      const contents = messages.map((m: { content: string }) => m.content)
      expect(contents.slice(-4)).toEqual(['one', 'First answer', 'two', 'Second answer'])
      // The queued run saw the first one's answer.
      const asked = upstream.requests.at(-1)?.body.messages as { content: string }[]
      expect(asked.map((m) => m.content)).toContain('First answer')
      expect(await thread(threadUuid)).toMatchObject({ active_run: null, queued_runs_count: 0 })
    })

    it('a queued run answered when done waits for its turn and answers 200', async () => {
      const threadUuid = await newThread()
      upstream.enqueue({ kind: 'slow', delayMs: 600, then: { kind: 'text', text: 'Slow one' } }, { kind: 'text', text: 'Waited one' })
      await threadRun(threadUuid, { content: 'first', background: true })
      const second = await threadRun(threadUuid, { content: 'second' })
      expect(second.status, JSON.stringify(second.body)).toBe(200)
      expect(second.body.data.run).toMatchObject({ status: 'succeeded', output: 'Waited one' })
      expect(second.body.data.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant'])
    })

    it('reject answers 409 naming the active run and stores nothing; interrupt cancels it (superseded) and runs at once', async () => {
      const threadUuid = await newThread()
      upstream.enqueue({ kind: 'slow', delayMs: 5_000, then: { kind: 'text', text: 'Never seen' } }, { kind: 'text', text: 'Newest' })
      const first = await threadRun(threadUuid, { content: 'long question', background: true })
      const runsBefore = await t.sql('select count(*)::int as n from runs')
      const rejected = await threadRun(threadUuid, { content: 'again?', if_busy: 'reject' })
      expectErrorBody(rejected, 409, 'CONFLICT')
      expect(rejected.body.message).toContain(first.body.data.run.uuid)
      expect(await t.sql('select count(*)::int as n from runs')).toEqual(runsBefore)
      const bad = await threadRun(threadUuid, { content: 'x', if_busy: 'sometimes' })
      expect(bad.status).toBe(400)
      expect(bad.body.issues[0].path).toEqual(['if_busy'])
      const interrupting = await threadRun(threadUuid, { content: 'never mind', if_busy: 'interrupt' })
      expect(interrupting.status, JSON.stringify(interrupting.body)).toBe(200)
      expect(interrupting.body.data.run).toMatchObject({ status: 'succeeded', output: 'Newest' })
      const superseded = await ended(first.body.data.run.uuid)
      expect(superseded.run).toMatchObject({ status: 'canceled', error: { code: 'superseded' } })
      const contents = (await t.http('GET', `/api/v1/messages?thread_uuid=${threadUuid}&per_page=100`, { token: alice.token })).body.data.map(
        (m: { content: string }) => m.content,
      )
      expect(contents).not.toContain('Never seen')
      expect(contents.slice(-2)).toEqual(['never mind', 'Newest'])
    })

    it('the OpenAI-compatible API takes if_busy in metadata: reject is OpenAI\'s 409, an unknown value a 400 naming it', async () => {
      const threadUuid = await newThread()
      const client = new OpenAI({ baseURL: `${t.url}/api/v1/openai`, apiKey: alice.token, maxRetries: 0 })
      upstream.enqueue({ kind: 'slow', delayMs: 1_500, then: { kind: 'text', text: 'Busy answer' } })
      const first = await threadRun(threadUuid, { content: 'slow one', background: true })
      const rejected = await client.chat.completions
        .create({ model: agentUuid, messages: [{ role: 'user', content: 'now?' }], metadata: { thread_uuid: threadUuid, if_busy: 'reject' } })
        .catch((error: unknown) => error)
      expect(rejected).toBeInstanceOf(OpenAI.ConflictError)
      expect(String((rejected as Error).message)).toContain(first.body.data.run.uuid)
      const bad = await client.chat.completions
        .create({ model: agentUuid, messages: [{ role: 'user', content: 'now?' }], metadata: { thread_uuid: threadUuid, if_busy: 'later' } })
        .catch((error: unknown) => error)
      expect(bad).toBeInstanceOf(OpenAI.BadRequestError)
      expect((bad as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('metadata.if_busy')
      await ended(first.body.data.run.uuid)
    })

    it('a run waiting for an approval keeps its thread busy: the next message is queued until the run ends', async () => {
      const data = await waiting()
      const threadUuid = data.run.thread_uuid
      const queued = await threadRun(threadUuid, { content: 'and tomorrow?', background: true })
      expect(queued.body.data.run.status).toBe('queued')
      expect(await thread(threadUuid)).toMatchObject({ active_run: { uuid: data.run.uuid, status: 'awaiting_approval' }, queued_runs_count: 1 })
      upstream.enqueue({ kind: 'text', text: 'Sunny.' }, { kind: 'text', text: 'Tomorrow too.' })
      await decide(data.approvals[0].uuid, 'approve')
      expect((await ended(data.run.uuid)).run.output).toBe('Sunny.')
      expect((await ended(queued.body.data.run.uuid)).run.output).toBe('Tomorrow too.')
    })
  })
})
