/**
 * Every event type of outbound webhooks (docs/api/webhooks.md, "Event types"), made through the
 * API as a user makes it: runs that succeed, fail, are canceled and wait for an approval, workflow
 * executions, knowledge documents, command room firings, a budget alert, agent versions and a
 * ping. Each reaches a real receiver on loopback once, verifies with the `standardwebhooks`
 * package, names its workspace, and its `data` is what the resource's retrieve answer holds; an
 * endpoint subscribed to two types gets those alone. Everything is made at once in `beforeAll`
 * (the model is test/helpers/upstream.ts, answering by the run's input), then checked per type.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Webhook } from 'standardwebhooks'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { startUpstream, type Reply, type Upstream, type UpstreamRequest } from './helpers/upstream.ts'
import { startReceiver, type Receiver } from './helpers/webhook-receiver.ts'
import { ISO, UUID } from './helpers/expect.ts'
import { WEBHOOK_EVENT_TYPES } from '../entities/index.ts'

/** A verified payload. */
interface Event {
  id: string
  type: string
  timestamp: string
  workspace_uuid: string
  data: Record<string, any>
}

/** A request the receiver got, verified with one endpoint's secret. */
interface Got {
  webhookId: string
  body: string
  event: Event
}

/** What the model answers, by the last user message of the request (else a short text). */
const REPLIES: Record<string, Reply> = {
  'Fail, please': { kind: 'status', status: 500 },
  'Fire and fail': { kind: 'status', status: 500 },
  'Wait, please': { kind: 'slow', delayMs: 10_000 },
  'Weather in Oslo?': { kind: 'tool_calls', calls: [{ name: 'weather', arguments: '{"city":"Oslo"}', id: 'call_w' }] },
  'Spend, please': { kind: 'text', text: 'Spent.', usage: { prompt_tokens: 400, completion_tokens: 200 } },
  'Evaluate slowly': { kind: 'slow', delayMs: 1_500 },
}
const SUBSET = ['run.failed', 'knowledge_document.ready']

/** The text of the last user message of a chat completion request. */
function lastUserText(request: UpstreamRequest): string {
  const messages: { role: string; content: unknown }[] = Array.isArray(request.body?.messages) ? request.body.messages : []
  const content = messages.filter((message) => message.role === 'user').at(-1)?.content
  if (typeof content === 'string') return content
  return Array.isArray(content) ? content.map((part: { text?: string }) => part.text ?? '').join('') : ''
}

/** Polls `check` every 25 ms until it answers something truthy, or fails naming `what` after `ms`. */
async function until<T>(
  what: string,
  check: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  ms = 20_000,
): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await check()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

/** Lets `promise` reject before a test awaits it without an unhandled rejection; the test still sees it. */
function held<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {})
  return promise
}

describe('webhook events (every type, made through the API)', () => {
  let t: TestApp
  let upstream: Upstream
  let receiver: Receiver
  let owner: TestUser
  let all: { uuid: string; secret: string }
  let subset: { uuid: string; secret: string }
  /** The events made in `beforeAll`, each a promise of the uuids it names. */
  let made: ReturnType<typeof makeEverything>
  /** The events the tests found, each a type and what picks its event out, counted again by the last test. */
  const checked: [string, (data: Record<string, any>) => boolean][] = []

  const get = async (path: string) => {
    const res = await t.http('GET', path, { token: owner.token })
    expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(200)
    return res.body
  }
  const post = async (path: string, body: unknown, status: number) => {
    const res = await t.http('POST', path, { token: owner.token, body })
    expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(status)
    return res.body
  }
  const makeAgent = async (name: string, extra: Record<string, unknown> = {}) =>
    (await post('/api/v1/agents', { name, instruction: 'Answer briefly.', ...extra }, 201)).data.uuid as string
  const runAgent = (agentUuid: string, input: string, background = false) =>
    t.http('POST', `/api/v1/agents/${agentUuid}/run`, { token: owner.token, body: { input, background } })

  /** The requests of the receiver that verify with `secret`, verified. */
  const deliveredTo = (secret: string): Got[] =>
    receiver.received.flatMap((got) => {
      try {
        return [{ webhookId: got.headers['webhook-id'], body: got.body, event: new Webhook(secret).verify(got.body, got.headers) as Event }]
      } catch {
        return []
      }
    })

  /**
   * The one event of `type` whose data `matches`, once it arrived at the endpoint for every type:
   * in the owner's workspace, its webhook-id its id, and never there twice.
   */
  const eventOf = async (type: string, matches: (data: Record<string, any>) => boolean): Promise<Event> => {
    const found = await until(`${type} at the receiver`, () => {
      const got = deliveredTo(all.secret).filter((item) => item.event.type === type && matches(item.event.data))
      return got.length > 0 && got
    })
    expect(found).toHaveLength(1)
    const [{ webhookId, event }] = found
    expect(Object.keys(event).sort()).toEqual(['data', 'id', 'timestamp', 'type', 'workspace_uuid'])
    expect(webhookId).toBe(event.id)
    expect(event.id).toMatch(UUID)
    expect(event.timestamp).toMatch(ISO)
    expect(event.workspace_uuid).toBe(owner.workspaceUuid)
    checked.push([type, matches])
    return event
  }
  const byUuid = (uuid: string) => (data: Record<string, any>) => data.uuid === uuid

  /** Starts making every event at once; each entry resolves to the uuids a test looks for. */
  function makeEverything(agents: { helper: string; careful: string; librarian: string; spender: string }) {
    const run = async (input: string, status: number) => {
      const res = await runAgent(agents.helper, input)
      expect(res.status, JSON.stringify(res.body)).toBe(status)
      return status === 200 ? (res.body.data.run.uuid as string) : /Run ([0-9a-f-]{36}) failed/.exec(res.body.message)![1]
    }
    const canceled = async () => {
      const started = await runAgent(agents.helper, 'Wait, please', true)
      expect(started.status, JSON.stringify(started.body)).toBe(202)
      const uuid = started.body.data.run.uuid as string
      expect((await post(`/api/v1/runs/${uuid}/cancel`, undefined, 200)).data.run.status).toBe('canceled')
      return uuid
    }
    const approval = async () => {
      const res = await runAgent(agents.careful, 'Weather in Oslo?')
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body.data.run.status).toBe('awaiting_approval')
      return res.body.data.approvals[0].uuid as string
    }
    const execution = async (nodes: Record<string, unknown>[], status: string) => {
      const flow = await post(
        '/api/v1/workflows',
        { name: `Flow ${status}`, nodes, edges: nodes.slice(1).map((node, i) => ({ id: `e${i}`, source: 'start', target: node.id })) },
        201,
      )
      const done = await post(`/api/v1/workflows/${flow.data.uuid}/run`, { input: { name: 'Ada' } }, 200)
      expect(done.data.status).toBe(status)
      return done.data.uuid as string
    }
    const start = { id: 'start', type: 'manual_trigger', parameters: {} }
    const documents = async () => {
      const sources = [
        { type: 'text', name: 'Reactor notes', text: 'The reactor on deck seven is cooled with liquid argon.' },
        { type: 'url', url: `${upstream.url}/gone.html` },
      ]
      const trained = await post(`/api/v1/agents/${agents.librarian}/train`, { sources }, 202)
      return trained.data.map((document: { uuid: string }) => document.uuid) as [string, string]
    }
    const firing = async (input: string) => {
      const task = await post(
        '/api/v1/command-room/tasks',
        { name: input, agent_uuid: agents.helper, schedule: 'daily', input, is_active: false },
        201,
      )
      const fired = await post(`/api/v1/command-room/tasks/${task.data.uuid}/run`, undefined, 202)
      return { task: task.data.uuid as string, firing: fired.data.uuid as string }
    }
    const budget = async () => {
      const created = await post(
        '/api/v1/budgets',
        {
          name: 'Spender cap',
          scope: 'agent',
          agent_uuid: agents.spender,
          period: 'month',
          limit_tokens: 1000,
          action: 'notify',
          alert_thresholds: [50],
        },
        201,
      )
      expect((await runAgent(agents.spender, 'Spend, please')).status).toBe(200)
      return created.data.uuid as string
    }
    const versions = async () => {
      const agent = await makeAgent('Versioned')
      const changed = await t.http('PUT', `/api/v1/agents/${agent}`, { token: owner.token, body: { instruction: 'Answer at length.' } })
      expect(changed.status, JSON.stringify(changed.body)).toBe(200)
      return agent
    }
    /**
     * An evaluation of a two-item dataset, one item at a time; to fail, its agent is deleted while
     * the first item's slow run goes on, so the second cannot run (docs/api/evaluations.md).
     */
    const evaluation = async (fail: boolean) => {
      const dataset = await post('/api/v1/datasets', { name: fail ? 'Doomed questions' : 'Questions' }, 201)
      await post(`/api/v1/datasets/${dataset.data.uuid}/items`, { items: [{ input: 'Evaluate slowly' }, { input: 'Evaluate me' }] }, 201)
      const agent = fail ? await makeAgent('Doomed') : agents.helper
      const body = { name: fail ? 'Failing' : 'Passing', dataset_uuid: dataset.data.uuid, agent_uuid: agent, scorers: [{ type: 'contains', value: 'Fine' }], concurrency: 1 }
      const created = await post('/api/v1/evaluations', body, 202)
      if (fail) expect((await t.http('DELETE', `/api/v1/agents/${agent}`, { token: owner.token })).status).toBe(204)
      return created.data.uuid as string
    }
    return {
      evaluationSucceeded: held(evaluation(false)),
      evaluationFailed: held(evaluation(true)),
      runSucceeded: held(run('Succeed, please', 200)),
      runFailed: held(run('Fail, please', 502)),
      runCanceled: held(canceled()),
      approval: held(approval()),
      executionSucceeded: held(
        execution([start, { id: 'shape', type: 'set', parameters: { values: { greeting: "='Hello ' & $.name" } } }], 'succeeded'),
      ),
      executionFailed: held(
        execution(
          [start, { id: 'call', type: 'http_request', parameters: { url: `${upstream.url}/gone` }, retry: { max_attempts: 1 } }],
          'failed',
        ),
      ),
      documents: held(documents()),
      firingSucceeded: held(firing('Fire and succeed')),
      firingFailed: held(firing('Fire and fail')),
      budget: held(budget()),
      versioned: held(versions()),
      ping: held(post(`/api/v1/webhook-endpoints/${all.uuid}/ping`, undefined, 202).then((body) => body.data.event_id as string)),
    }
  }

  beforeAll(async () => {
    ;[upstream, receiver] = await Promise.all([startUpstream(), startReceiver()])
    upstream.respondWith((request) => REPLIES[lastUserText(request)] ?? { kind: 'text', text: 'Fine.' })
    t = await createTestApp({
      OPENAI_API_KEY: 'sk-upstream-test',
      OPENAI_BASE_URL: upstream.url,
      TOOL_ALLOW_PRIVATE_NETWORK: 'true',
      WEBHOOK_ALLOW_PRIVATE_NETWORK: 'true',
    })
    owner = await t.make.user({ name: 'Olive Owner' })
    all = (await post('/api/v1/webhook-endpoints', { url: receiver.url, event_types: ['*'] }, 201)).data
    subset = (await post('/api/v1/webhook-endpoints', { url: `${receiver.url}?subset`, event_types: SUBSET }, 201)).data
    const weather = await post(
      '/api/v1/tools',
      {
        name: 'Weather',
        description: 'The forecast of a city',
        method: 'GET',
        url: `${upstream.url}/weather?city={{city}}`,
        input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        requires_approval: true,
      },
      201,
    )
    const [helper, careful, librarian, spender] = await Promise.all([
      makeAgent('Helper'),
      makeAgent('Careful', { tools: [{ tool_uuid: weather.data.uuid }] }),
      makeAgent('Librarian'),
      makeAgent('Spender'),
    ])
    made = makeEverything({ helper, careful, librarian, spender })
  })
  afterAll(async () => {
    await t?.close()
    await receiver?.close()
    await upstream?.close()
  })

  it('run.succeeded, run.failed and run.canceled carry the Run as GET runs/{run_uuid} answers it', async () => {
    for (const [type, uuid, status] of [
      ['run.succeeded', await made.runSucceeded, 'succeeded'],
      ['run.failed', await made.runFailed, 'failed'],
      ['run.canceled', await made.runCanceled, 'canceled'],
    ] as const) {
      const event = await eventOf(type, byUuid(uuid))
      const retrieved = (await get(`/api/v1/runs/${uuid}`)).data.run
      expect(retrieved.status).toBe(status)
      expect(event.data, type).toEqual(retrieved)
    }
  })

  it('run.approval_requested carries the Approval as GET approvals/{approval_uuid} answers it', async () => {
    const uuid = await made.approval
    const event = await eventOf('run.approval_requested', byUuid(uuid))
    const retrieved = (await get(`/api/v1/approvals/${uuid}`)).data
    expect(retrieved).toMatchObject({ status: 'pending', tool_name: 'weather', arguments: { city: 'Oslo' } })
    expect(event.data).toEqual(retrieved)
  })

  it('workflow_execution.succeeded and .failed carry the execution as GET workflow-executions/{execution_uuid} answers it', async () => {
    for (const [type, uuid] of [
      ['workflow_execution.succeeded', await made.executionSucceeded],
      ['workflow_execution.failed', await made.executionFailed],
    ] as const) {
      const event = await eventOf(type, byUuid(uuid))
      expect(event.data, type).toEqual((await get(`/api/v1/workflow-executions/${uuid}`)).data)
    }
  })

  it('knowledge_document.ready and .failed carry the Document as GET knowledge/{document_uuid} answers it', async () => {
    const [ready, failed] = await made.documents
    for (const [type, uuid, status] of [
      ['knowledge_document.ready', ready, 'ready'],
      ['knowledge_document.failed', failed, 'failed'],
    ] as const) {
      const event = await eventOf(type, byUuid(uuid))
      const retrieved = (await get(`/api/v1/knowledge/${uuid}`)).data
      expect(retrieved.status).toBe(status)
      expect(event.data, type).toEqual(retrieved)
    }
  })

  it('command_room_firing.succeeded and .failed carry the Firing as GET command-room/tasks/{task_uuid}/firings lists it', async () => {
    for (const [type, { task, firing }, status] of [
      ['command_room_firing.succeeded', await made.firingSucceeded, 'succeeded'],
      ['command_room_firing.failed', await made.firingFailed, 'failed'],
    ] as const) {
      const event = await eventOf(type, byUuid(firing))
      const listed = (await get(`/api/v1/command-room/tasks/${task}/firings`)).data.find((item: { uuid: string }) => item.uuid === firing)
      expect(listed.status).toBe(status)
      expect(event.data, type).toEqual(listed)
    }
  })

  it('budget.threshold_reached carries the Budget as GET budgets/{budget_uuid} answers it, with the spend recorded at the threshold', async () => {
    const uuid = await made.budget
    const event = await eventOf('budget.threshold_reached', (data) => data.budget?.uuid === uuid)
    const retrieved = (await get(`/api/v1/budgets/${uuid}`)).data
    expect(retrieved.spent_tokens).toBe(600)
    expect(event.data).toEqual({ budget: retrieved, threshold: 50, spent_tokens: 600, spent_cost: retrieved.spent_cost })
  })

  it('agent.version_created carries each version as GET agents/{agent_uuid}/versions lists it, with the agent uuid', async () => {
    const agent = await made.versioned
    const listed = (await get(`/api/v1/agents/${agent}/versions`)).data
    expect(listed.map((version: { version: number }) => version.version)).toEqual([2, 1])
    for (const version of listed) {
      const event = await eventOf('agent.version_created', (data) => data.agent_uuid === agent && data.version === version.version)
      expect(event.data).toEqual({ agent_uuid: agent, ...version })
    }
  })

  it('evaluation.succeeded and .failed carry the Evaluation as GET evaluations/{evaluation_uuid} answers it', async () => {
    for (const [type, uuid, status] of [
      ['evaluation.succeeded', await made.evaluationSucceeded, 'succeeded'],
      ['evaluation.failed', await made.evaluationFailed, 'failed'],
    ] as const) {
      const event = await eventOf(type, byUuid(uuid))
      const retrieved = (await get(`/api/v1/evaluations/${uuid}`)).data
      expect(retrieved.status).toBe(status)
      expect(event.data, type).toEqual(retrieved)
    }
  })

  it('webhook_endpoint.ping carries the Endpoint as GET webhook-endpoints/{endpoint_uuid} answers it', async () => {
    const eventId = await made.ping
    const event = await eventOf('webhook_endpoint.ping', (data) => data.uuid === all.uuid)
    expect(event.id).toBe(eventId)
    expect(event.data).toEqual((await get(`/api/v1/webhook-endpoints/${all.uuid}`)).data)
  })

  it('delivers every type, each event once per endpoint in one attempt; the endpoint for two types got those alone, the same bytes', async () => {
    const settled = async (endpoint: string) => {
      const page = await get(`/api/v1/webhook-endpoints/${endpoint}/deliveries?per_page=100`)
      return page.data.every((delivery: { status: string }) => delivery.status !== 'pending') && page
    }
    for (const [endpoint, secret] of [
      [all, all.secret],
      [subset, subset.secret],
    ] as const) {
      const page = await until('settled deliveries', () => settled(endpoint.uuid))
      const got = deliveredTo(secret)
      expect(page.meta.total).toBe(page.data.length)
      expect(page.data.map((delivery: { status: string; attempts: unknown[] }) => [delivery.status, delivery.attempts.length])).toEqual(
        page.data.map(() => ['succeeded', 1]),
      )
      expect(got.map((item) => item.webhookId).sort()).toEqual(page.data.map((delivery: { event_id: string }) => delivery.event_id).sort())
      expect(new Set(got.map((item) => item.webhookId)).size).toBe(got.length)
    }
    expect(new Set(deliveredTo(all.secret).map((item) => item.event.type))).toEqual(new Set(WEBHOOK_EVENT_TYPES))
    // Every request verifies with exactly one of the two secrets.
    expect(deliveredTo(all.secret).length + deliveredTo(subset.secret).length).toBe(receiver.received.length)
    for (const [type, matches] of checked) {
      expect(
        deliveredTo(all.secret).filter((item) => item.event.type === type && matches(item.event.data)),
        type,
      ).toHaveLength(1)
    }
    const forSubset = deliveredTo(all.secret).filter((item) => SUBSET.includes(item.event.type))
    expect(new Set(forSubset.map((item) => item.event.type))).toEqual(new Set(SUBSET))
    expect(
      deliveredTo(subset.secret)
        .map((item) => item.body)
        .sort(),
    ).toEqual(forSubset.map((item) => item.body).sort())
  })
})
