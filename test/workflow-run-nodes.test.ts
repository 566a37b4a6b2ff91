/**
 * The run_prompt and run_agent nodes end to end: a workflow runs a prompt and an
 * agent through the runs service against the local OpenAI-compatible upstream (the real provider
 * client over loopback), the runs are stored as the execution's user's, and canceling the
 * execution cancels the run it waits for. Their missing-resource errors: workflow-nodes.test.ts.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { startUpstream, type Upstream } from './helpers/upstream.ts'

describe('run_prompt and run_agent nodes', () => {
  let t: TestApp
  let upstream: Upstream
  let alice: TestUser
  let agentUuid: string
  let promptUuid: string

  beforeAll(async () => {
    upstream = await startUpstream()
    t = await createTestApp({ OPENAI_API_KEY: 'sk-upstream-test', OPENAI_BASE_URL: upstream.url, WORKFLOW_HEARTBEAT_MS: '200' })
    alice = await t.make.user({ name: 'Alice Runner' })
    const agent = await t.http('POST', '/api/v1/agents', { token: alice.token, body: { name: 'Helper', instruction: 'Answer briefly.' } })
    expect(agent.status, JSON.stringify(agent.body)).toBe(201)
    agentUuid = agent.body.data.uuid
    const prompt = await t.http('POST', '/api/v1/prompts', {
      token: alice.token,
      body: { name: 'Greeter', content: 'Greet {{name}}.', metadata: { input: [{ key: 'name', label: 'Name', type: 'text', required: true }] } },
    })
    expect(prompt.status, JSON.stringify(prompt.body)).toBe(201)
    promptUuid = prompt.body.data.uuid
  })
  afterAll(async () => {
    await t?.close()
    await upstream?.close()
  })
  beforeEach(() => upstream.reset())

  /** A workflow of a manual trigger feeding `node`; answers its uuid. */
  const workflowWith = async (node: Record<string, unknown>) => {
    const created = await t.http('POST', '/api/v1/workflows', {
      token: alice.token,
      body: {
        name: 'Runs',
        nodes: [{ id: 'start', type: 'manual_trigger', parameters: {} }, { id: 'step', ...node }],
        edges: [{ id: 'e0', source: 'start', target: 'step' }],
      },
    })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    return created.body.data.uuid as string
  }
  const runWorkflow = (uuid: string, body: Record<string, unknown>) => t.http('POST', `/api/v1/workflows/${uuid}/run`, { token: alice.token, body })
  const runRow = async (uuid: string) => (await t.sql('select status, kind, user_id::float8 as "userId" from runs where uuid = ?', [uuid]))[0]

  it("run_agent sends the evaluated message to the agent and outputs its answer, the run's and the new thread's uuids and the usage", async () => {
    const flow = await workflowWith({ type: 'run_agent', parameters: { agent_uuid: agentUuid, message: "='Hello ' & name" } })
    const res = await runWorkflow(flow, { input: { name: 'Ada' } })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    const execution = res.body.data
    expect(execution.status).toBe('succeeded')
    expect(execution.output).toMatchObject({ text: 'Echo: Hello Ada', usage: { total_tokens: expect.any(Number) } })
    expect(execution.output.run_uuid).toMatch(/^[0-9a-f-]{36}$/)
    expect(execution.output.thread_uuid).toMatch(/^[0-9a-f-]{36}$/)
    expect(await runRow(execution.output.run_uuid)).toEqual({ status: 'succeeded', kind: 'agent', userId: alice.id })
    const messages = await t.http('GET', `/api/v1/messages?thread_uuid=${execution.output.thread_uuid}`, { token: alice.token })
    expect(messages.body.data.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ['user', 'Hello Ada'],
      ['assistant', 'Echo: Hello Ada'],
    ])
    // The system prompt carries the agent's instruction.
    expect(JSON.stringify(upstream.requests[0].body.messages)).toContain('Answer briefly.')
  })

  it('run_prompt renders the prompt with the evaluated inputs and outputs the answer', async () => {
    const flow = await workflowWith({ type: 'run_prompt', parameters: { prompt_uuid: promptUuid, input: { name: '=name' } } })
    const res = await runWorkflow(flow, { input: { name: 'Grace' } })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.data.status).toBe('succeeded')
    expect(res.body.data.output).toMatchObject({ text: 'Echo: Greet Grace.' })
    expect(await runRow(res.body.data.output.run_uuid)).toEqual({ status: 'succeeded', kind: 'prompt', userId: alice.id })
  })

  it('run_prompt without a required input fails the node as invalid_parameters, before any model call', async () => {
    const flow = await workflowWith({ type: 'run_prompt', parameters: { prompt_uuid: promptUuid, input: {} } })
    const res = await runWorkflow(flow, { input: {} })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.data.status).toBe('failed')
    expect(res.body.data.error).toMatchObject({ code: 'invalid_parameters', node_id: 'step' })
    expect(upstream.requests).toHaveLength(0)
  })

  it('canceling the execution cancels the run it waits for (the run ends canceled, the upstream call is dropped)', async () => {
    upstream.enqueue({ kind: 'slow', delayMs: 20_000 })
    const flow = await workflowWith({ type: 'run_agent', parameters: { agent_uuid: agentUuid, message: 'Take your time' } })
    const started = await runWorkflow(flow, { background: true })
    expect(started.status, JSON.stringify(started.body)).toBe(202)
    const executionUuid = started.body.data.uuid as string
    let run: Record<string, unknown> | undefined
    for (let i = 0; i < 100 && !(run && upstream.pending() === 1); i++) {
      ;[run] = await t.sql(
        `select r.uuid, r.status from runs r join agents a on a.id = r.agent_id where a.uuid = ? and r.input::text like '%Take your time%'`,
        [agentUuid],
      )
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(run?.status).toBe('running')
    expect(upstream.pending()).toBe(1)

    const canceled = await t.http('POST', `/api/v1/workflow-executions/${executionUuid}/cancel`, { token: alice.token })
    expect(canceled.status, JSON.stringify(canceled.body)).toBe(200)
    let status: unknown
    for (let i = 0; i < 100 && status !== 'canceled'; i++) {
      status = (await runRow(String(run!.uuid))).status
      if (status !== 'canceled') await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(status).toBe('canceled')
    for (let i = 0; i < 100 && upstream.pending() > 0; i++) await new Promise((resolve) => setTimeout(resolve, 50))
    expect(upstream.pending()).toBe(0)
    const execution = (await t.http('GET', `/api/v1/workflow-executions/${executionUuid}`, { token: alice.token })).body.data
    expect(execution.status).toBe('canceled')
  })
})
