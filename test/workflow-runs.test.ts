/**
 * Workflows that run: the executor through the real endpoints, on the real
 * database and the real queue (pg-boss). Manual runs waited for and in the background, branches,
 * merges, pin data, static data, error policies, retries, timeouts, cancel, the webhook route
 * (responses, signatures, 404/401/409/413 without an execution), schedules on the one scheduler, and
 * tenancy. Node types on their own: workflow-nodes.test.ts; the executions API:
 * workflow-executions.test.ts; a worker killed mid-execution: workflow-crash.test.ts.
 */
import { createHmac } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { readOnlyToken } from './helpers/agents.ts'
import { checkAnswer } from './helpers/contract.ts'

/** A manual trigger feeding `rest` (edges in order). */
function graph(nodes: Record<string, unknown>[], edges: [string, string, string?][]) {
  return {
    nodes: nodes.map((node) => ({ parameters: {}, ...node })),
    edges: edges.map(([source, target, handle], index) => ({ id: `e${index}`, source, target, ...(handle ? { source_handle: handle } : {}) })),
  }
}

const manual = { id: 'start', type: 'manual_trigger' }
const hook = { id: 'start', type: 'webhook_trigger' }

describe('workflow runs', () => {
  let t: TestApp
  let alice: TestUser
  let bob: TestUser
  /** A local HTTP target for the HTTP request node: `/flaky` fails twice then answers, `/down` always 503. */
  let target: Server
  let targetUrl: string
  let flakyCalls = 0

  beforeAll(async () => {
    t = await createTestApp({ TOOL_ALLOW_PRIVATE_NETWORK: 'true', WORKFLOW_HEARTBEAT_MS: '200' })
    alice = await t.make.user({ name: 'Alice Runner' })
    bob = await t.make.user({ name: 'Bob Other' })
    target = createServer((request, response) => {
      if (request.url === '/flaky') {
        flakyCalls++
        if (flakyCalls <= 2) return void response.writeHead(500).end('boom')
        return void response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, calls: flakyCalls }))
      }
      if (request.url === '/down') return void response.writeHead(503).end('down')
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: request.url }))
    })
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve))
    targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    await t?.close()
    target?.close()
  })

  const create = async (user: TestUser, body: Record<string, unknown>) => {
    const response = await t.http('POST', '/api/v1/workflows', { token: user.token, body: { name: 'Flow', ...body } })
    expect(response.status, JSON.stringify(response.body)).toBe(201)
    return response.body.data as { uuid: string; webhook_url: string | null; trigger_count: number }
  }
  const run = (user: TestUser, uuid: string, body: Record<string, unknown> = {}) =>
    t.http('POST', `/api/v1/workflows/${uuid}/run`, { token: user.token, body })
  const execution = async (user: TestUser, uuid: string) => (await t.http('GET', `/api/v1/workflow-executions/${uuid}`, { token: user.token })).body.data
  /** Polls an execution until its status is one of `statuses` (5 s at most). */
  async function until(user: TestUser, uuid: string, statuses: string[]) {
    for (let i = 0; i < 100; i++) {
      const data = await execution(user, uuid)
      if (statuses.includes(data.status)) return data
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    throw new Error(`execution ${uuid} never reached ${statuses.join('/')}`)
  }
  const countExecutions = async (workflowUuid: string) =>
    Number(
      (await t.sql(`select count(*)::int as n from workflow_executions e join workflows w on w.id = e.workflow_id where w.uuid = ?`, [workflowUuid]))[0].n,
    )

  describe('manual runs', () => {
    it('runs a graph here and answers 200 with the execution, its per-node data and the last output', async () => {
      const flow = await create(
        alice,
        graph(
          [
            manual,
            { id: 'shape', type: 'set', parameters: { values: { greeting: "='Hello ' & $.name", count: '=$count($.items)' } } },
            { id: 'check', type: 'if', parameters: { condition: '=count > 1' } },
            { id: 'many', type: 'set', parameters: { values: { verdict: 'many' } } },
            { id: 'few', type: 'set', parameters: { values: { verdict: 'few' } } },
          ],
          [
            ['start', 'shape'],
            ['shape', 'check'],
            ['check', 'many', 'true'],
            ['check', 'few', 'false'],
          ],
        ),
      )
      const response = await run(alice, flow.uuid, { input: { name: 'Ada', items: [1, 2, 3] } })
      expect(response.status, JSON.stringify(response.body)).toBe(200)
      const data = response.body.data
      expect(data).toMatchObject({ status: 'succeeded', mode: 'manual', error: null, workflow: { uuid: flow.uuid, name: 'Flow' } })
      expect(data.input).toEqual({ name: 'Ada', items: [1, 2, 3] })
      expect(data.output).toEqual({ name: 'Ada', items: [1, 2, 3], greeting: 'Hello Ada', count: 3, verdict: 'many' })
      expect(data.duration_ms).toBeGreaterThanOrEqual(0)
      expect(data.data.map((node: { node_id: string; status: string }) => [node.node_id, node.status])).toEqual([
        ['start', 'succeeded'],
        ['shape', 'succeeded'],
        ['check', 'succeeded'],
        ['many', 'succeeded'],
        ['few', 'skipped'],
      ])
      const check = data.data.find((node: { node_id: string }) => node.node_id === 'check')
      expect(check).toMatchObject({ branches: ['true'], attempts: 1, node_type: 'if' })
      expect(check.input).toEqual({ name: 'Ada', items: [1, 2, 3], greeting: 'Hello Ada', count: 3 })
      const workflow = (await t.http('GET', `/api/v1/workflows/${flow.uuid}`, { token: alice.token })).body.data
      expect(workflow.trigger_count).toBe(1)
    })

    it('merges branches, uses pinned outputs and keeps static data', async () => {
      const flow = await create(alice, {
        ...graph(
          [
            manual,
            { id: 'a', type: 'set', parameters: { values: { a: 1 }, mode: 'replace' } },
            { id: 'b', type: 'set', parameters: { values: { b: 2 }, mode: 'replace' } },
            { id: 'join', type: 'merge', parameters: { mode: 'merge_objects' } },
            { id: 'count', type: 'set', parameters: { values: { runs: '=$static.runs ? $static.runs + 1 : 1' }, static_data: { runs: '=$static.runs ? $static.runs + 1 : 1' } } },
          ],
          [
            ['start', 'a'],
            ['start', 'b'],
            ['a', 'join'],
            ['b', 'join'],
            ['join', 'count'],
          ],
        ),
        pin_data: { b: { b: 'pinned' } },
      })
      const first = (await run(alice, flow.uuid)).body.data
      expect(first.status).toBe('succeeded')
      expect(first.output).toEqual({ a: 1, b: 'pinned', runs: 1 })
      expect(first.data.find((node: { node_id: string }) => node.node_id === 'b')).toMatchObject({ status: 'pinned', output: { b: 'pinned' } })
      const second = (await run(alice, flow.uuid)).body.data
      expect(second.output).toMatchObject({ runs: 2 })
      const workflow = (await t.http('GET', `/api/v1/workflows/${flow.uuid}`, { token: alice.token })).body.data
      expect(workflow.static_data).toEqual({ runs: 2 })
    })

    it('retries an HTTP request with backoff, then fails the execution naming the node (error_policy stop)', async () => {
      flakyCalls = 0
      const flaky = await create(
        alice,
        graph([manual, { id: 'call', type: 'http_request', parameters: { url: `${targetUrl}/flaky` }, retry: { max_attempts: 3, delay_ms: 10 } }], [['start', 'call']]),
      )
      const ok = (await run(alice, flaky.uuid)).body.data
      expect(ok.status).toBe('succeeded')
      expect(ok.data[1]).toMatchObject({ node_id: 'call', status: 'succeeded', attempts: 3 })
      expect(ok.output).toMatchObject({ status: 200, body: { ok: true, calls: 3 } })

      const down = await create(
        alice,
        graph(
          [manual, { id: 'call', type: 'http_request', parameters: { url: `${targetUrl}/down` }, retry: { max_attempts: 2, delay_ms: 10 } }, { id: 'after', type: 'set', parameters: { values: { x: 1 } } }],
          [
            ['start', 'call'],
            ['call', 'after'],
          ],
        ),
      )
      const failed = (await run(alice, down.uuid)).body.data
      expect(failed.status).toBe('failed')
      expect(failed.error).toMatchObject({ node_id: 'call' })
      expect(failed.error.message).toMatch(/503/)
      expect(failed.data.map((node: { node_id: string; status: string; attempts: number }) => [node.node_id, node.status, node.attempts])).toEqual([
        ['start', 'succeeded', 1],
        ['call', 'failed', 2],
      ])
    })

    it('passes a failure on with error_policy continue', async () => {
      const flow = await create(alice, {
        ...graph(
          [manual, { id: 'call', type: 'http_request', parameters: { url: `${targetUrl}/down` }, retry: { max_attempts: 1 } }, { id: 'after', type: 'set', parameters: { values: { handled: true } } }],
          [
            ['start', 'call'],
            ['call', 'after'],
          ],
        ),
        settings: { error_policy: 'continue' },
      })
      const data = (await run(alice, flow.uuid)).body.data
      expect(data.status).toBe('succeeded')
      expect(data.output).toMatchObject({ handled: true, error: { code: 'http_status' } })
      expect(data.data[1].status).toBe('failed')
    })

    it('fails an execution past settings.timeout_seconds', async () => {
      const flow = await create(alice, {
        ...graph([manual, { id: 'pause', type: 'wait', parameters: { seconds: 30 } }], [['start', 'pause']]),
        settings: { timeout_seconds: 1 },
      })
      const started = Date.now()
      const data = (await run(alice, flow.uuid)).body.data
      expect(Date.now() - started).toBeLessThan(5000)
      expect(data).toMatchObject({ status: 'failed', error: { code: 'timeout', node_id: 'pause' } })
    })

    it('queues a background run (202) that a worker of the queue runs', async () => {
      const flow = await create(alice, graph([manual, { id: 'shape', type: 'set', parameters: { values: { doubled: '=$.n * 2' } } }], [['start', 'shape']]))
      const response = await run(alice, flow.uuid, { input: { n: 21 }, background: true })
      expect(response.status).toBe(202)
      expect(response.body.data).toMatchObject({ status: 'queued', mode: 'manual', data: [] })
      const done = await until(alice, response.body.data.uuid, ['succeeded', 'failed'])
      expect(done).toMatchObject({ status: 'succeeded', output: { n: 21, doubled: 42 } })
    })

    it('cancels a running execution at once; it ends canceled with the node that was running', async () => {
      const flow = await create(alice, graph([manual, { id: 'pause', type: 'wait', parameters: { seconds: 30 } }], [['start', 'pause']]))
      const queued = (await run(alice, flow.uuid, { background: true })).body.data
      await until(alice, queued.uuid, ['running'])
      const cancel = await t.http('POST', `/api/v1/workflow-executions/${queued.uuid}/cancel`, { token: alice.token })
      expect(cancel.status).toBe(200)
      const done = await until(alice, queued.uuid, ['canceled'])
      // The executor stores its per-node data once it has noticed (at once here: same process).
      for (let i = 0; i < 40 && !(await execution(alice, queued.uuid)).data.length; i++) await new Promise((resolve) => setTimeout(resolve, 50))
      const stored = await execution(alice, queued.uuid)
      expect(done.status).toBe('canceled')
      expect(stored.data.map((node: { node_id: string; status: string }) => [node.node_id, node.status])).toEqual([
        ['start', 'succeeded'],
        ['pause', 'canceled'],
      ])
    })

    it('retries a failed execution through the queue', async () => {
      flakyCalls = 0
      const flow = await create(alice, graph([manual, { id: 'call', type: 'http_request', parameters: { url: `${targetUrl}/flaky` }, retry: { max_attempts: 1 } }], [['start', 'call']]))
      const failed = (await run(alice, flow.uuid, { input: { try: 1 } })).body.data
      expect(failed.status).toBe('failed')
      const retry = await t.http('POST', `/api/v1/workflow-executions/${failed.uuid}/retry`, { token: alice.token })
      expect(retry.status).toBe(202)
      expect(retry.body.data).toMatchObject({ mode: 'retry', retry_of_uuid: failed.uuid })
      // The second attempt of /flaky still fails; the third succeeds.
      const second = await until(alice, retry.body.data.uuid, ['succeeded', 'failed'])
      expect(second.status).toBe('failed')
      const third = (await t.http('POST', `/api/v1/workflow-executions/${second.uuid}/retry`, { token: alice.token })).body.data
      const done = await until(alice, third.uuid, ['succeeded', 'failed'])
      expect(done).toMatchObject({ status: 'succeeded', input: { try: 1 } })
    })

    it("answers 404 for another tenant's workflow, 403 to a read-only token and 409 for an empty graph, running nothing", async () => {
      const flow = await create(alice, { ...graph([manual], []), name: 'Alice private flow' })
      const hidden = await run(bob, flow.uuid)
      expect(hidden.status).toBe(404)
      expect(JSON.stringify(hidden.body)).not.toContain('Alice private flow')
      const reader = await readOnlyToken(t, alice)
      expect((await t.http('POST', `/api/v1/workflows/${flow.uuid}/run`, { token: reader.token, body: {} })).status).toBe(403)
      expect((await t.http('POST', `/api/v1/workflows/${flow.uuid}/run`, { body: {} })).status).toBe(401)
      const empty = await create(alice, {})
      expect((await run(alice, empty.uuid)).status).toBe(409)
      expect(await countExecutions(flow.uuid)).toBe(0)
      const bad = await run(alice, flow.uuid, { background: 'yes' })
      expect(bad.status).toBe(400)
      expect(bad.body.issues[0].path).toEqual(['background'])
    })

    it('answers 400 naming the field for a malformed uuid, an unknown field and unstorable input, running nothing', async () => {
      const flow = await create(alice, graph([manual], []))
      const malformed = await run(alice, '0123-abcd')
      expect(malformed.status).toBe(400)
      expect(malformed.body.issues[0].path).toEqual(['workflow_uuid'])
      const unknown = await run(alice, flow.uuid, { fuzz: 1 })
      expect(unknown.status).toBe(400)
      expect(JSON.stringify(unknown.body.issues)).toContain('fuzz')
      for (const input of [{ text: 'a\u0000b' }, { text: '\ud800' }]) {
        const unstorable = await run(alice, flow.uuid, { input })
        expect(unstorable.status).toBe(400)
        expect(unstorable.body.issues[0].path[0]).toBe('input')
      }
      expect(await countExecutions(flow.uuid)).toBe(0)
    })
  })

  describe('static data under concurrency', () => {
    const bump = '=$exists($static.counter) ? $static.counter + 1 : 1'

    it('counts every one of 100 parallel executions whose set node increments static_data.counter', async () => {
      const flow = await create(
        alice,
        graph([manual, { id: 'bump', type: 'set', parameters: { values: { counter: bump }, static_data: { counter: bump } } }], [['start', 'bump']]),
      )
      const answers = await Promise.all(Array.from({ length: 100 }, () => run(alice, flow.uuid)))
      expect(answers.map((response) => response.status)).toEqual(Array(100).fill(200))
      expect(answers.every((response) => response.body.data.status === 'succeeded')).toBe(true)
      // Each execution evaluated its node against the value the one before it stored.
      const seen = answers.map((response) => response.body.data.output.counter as number).sort((a, b) => a - b)
      expect(seen).toEqual(Array.from({ length: 100 }, (_, i) => i + 1))
      const workflow = (await t.http('GET', `/api/v1/workflows/${flow.uuid}`, { token: alice.token })).body.data
      expect(workflow.static_data).toEqual({ counter: 100 })
      expect(workflow.trigger_count).toBe(100)
    })

    it('stores a set node’s static data when the node runs: later nodes see it, and a later failure keeps it', async () => {
      const flow = await create(alice, {
        ...graph(
          [
            manual,
            { id: 'bump', type: 'set', parameters: { static_data: { counter: bump, by: '=$execution.uuid' } } },
            { id: 'read', type: 'set', parameters: { values: { seen: '=$static.counter' }, mode: 'replace' } },
            { id: 'call', type: 'http_request', parameters: { url: `${targetUrl}/down` }, retry: { max_attempts: 1 } },
          ],
          [
            ['start', 'bump'],
            ['bump', 'read'],
            ['read', 'call'],
          ],
        ),
        static_data: { counter: 41, kept: true },
      })
      const data = (await run(alice, flow.uuid)).body.data
      expect(data).toMatchObject({ status: 'failed', error: { node_id: 'call' } })
      expect(data.data.find((node: { node_id: string }) => node.node_id === 'read').output).toEqual({ seen: 42 })
      const workflow = (await t.http('GET', `/api/v1/workflows/${flow.uuid}`, { token: alice.token })).body.data
      expect(workflow.static_data).toEqual({ counter: 42, kept: true, by: data.uuid })
    })
  })

  describe('interrupted executions (settings.on_interrupt)', () => {
    const resumableGraph = graph(
      [
        manual,
        { id: 'first', type: 'set', parameters: { values: { first: true }, static_data: { seen: '=$.n' } } },
        { id: 'pause', type: 'wait', parameters: { seconds: '=$.n = 0 ? 0 : 30' } },
        { id: 'second', type: 'set', parameters: { values: { second: '=$static.seen' } } },
      ],
      [
        ['start', 'first'],
        ['first', 'pause'],
        ['pause', 'second'],
      ],
    )
    /** Stores what the process running it would have before it died: `running`, its heartbeat stale, the checkpoint given. */
    async function orphan(workflowUuid: string, o: { attempts: number; checkpoint: unknown; input: unknown }) {
      const [row] = await t.sql(
        `insert into workflow_executions (uuid, workflow_id, workspace_id, user_id, status, mode, input, started_at, heartbeat_at, attempts, checkpoint, created_at, updated_at)
         select gen_random_uuid(), w.id, w.workspace_id, w.user_id, 'running', 'manual', ?::jsonb, now() - interval '2 seconds', now() - interval '1 hour', ?, ?::jsonb, now(), now()
         from workflows w where w.uuid = ? returning uuid`,
        [JSON.stringify(o.input), o.attempts, JSON.stringify(o.checkpoint), workflowUuid],
      )
      return String(row.uuid)
    }
    const finished = (node_id: string, position: number, output: unknown) => ({
      position,
      node_id,
      node_type: node_id === 'start' ? 'manual_trigger' : 'set',
      status: 'succeeded',
      input: null,
      output,
      error: null,
      branches: null,
      attempts: 1,
      started_at: '2026-01-01T00:00:00.000Z',
      finished_at: '2026-01-01T00:00:00.000Z',
      duration_ms: 0,
    })

    it('stores the checkpoint of a resumable execution after each node that ran', async () => {
      const flow = await create(alice, { ...resumableGraph, settings: { on_interrupt: 'resume' } })
      const queued = (await run(alice, flow.uuid, { background: true, input: { n: 7 } })).body.data
      await until(alice, queued.uuid, ['running'])
      // The checkpoint after `start` may be seen first (on PostgreSQL `first` takes the workflow row's
      // lock for its static data in between): wait for the one after `first`, where `pause` waits.
      let checkpoint: Record<string, unknown> | undefined
      for (let i = 0; i < 100 && (checkpoint?.nodes as unknown[] | undefined)?.length !== 2; i++) {
        const [row] = await t.sql('select checkpoint::text as checkpoint from workflow_executions where uuid = ?', [queued.uuid])
        if (row.checkpoint) checkpoint = JSON.parse(String(row.checkpoint))
        if ((checkpoint?.nodes as unknown[] | undefined)?.length !== 2) await new Promise((resolve) => setTimeout(resolve, 50))
      }
      expect(checkpoint).toMatchObject({ static_data: { seen: 7 } })
      expect((checkpoint!.nodes as { node_id: string }[]).map((node) => node.node_id)).toEqual(['start', 'first'])
      await t.http('POST', `/api/v1/workflow-executions/${queued.uuid}/cancel`, { token: alice.token })
      await until(alice, queued.uuid, ['canceled'])
    })

    it('resumes an execution whose process died from its checkpoint: finished nodes are not run again', async () => {
      const flow = await create(alice, { ...resumableGraph, settings: { on_interrupt: 'resume' } })
      const checkpoint = { nodes: [finished('start', 0, { n: 0 }), finished('first', 1, { n: 0, first: 'from the checkpoint' })], static_data: { seen: 'kept' } }
      const uuid = await orphan(flow.uuid, { attempts: 1, checkpoint, input: { n: 0 } })
      const done = await until(alice, uuid, ['succeeded', 'failed'])
      expect(done).toMatchObject({ status: 'succeeded', output: { n: 0, first: 'from the checkpoint', second: 'kept' } })
      expect(done.data.map((node: { node_id: string; started_at: string }) => [node.node_id, node.started_at === '2026-01-01T00:00:00.000Z'])).toEqual([
        ['start', true],
        ['first', true],
        ['pause', false],
        ['second', false],
      ])
      const [row] = await t.sql('select attempts, checkpoint from workflow_executions where uuid = ?', [uuid])
      expect([Number(row.attempts), row.checkpoint]).toEqual([2, null])
    })

    it('fails it (abandoned) without on_interrupt: resume, after the last resumption, or (interrupted) when the graph changed since', async () => {
      const failing = await create(alice, resumableGraph)
      const resumable = await create(alice, { ...resumableGraph, settings: { on_interrupt: 'resume' } })
      const checkpoint = { nodes: [finished('start', 0, { n: 0 })], static_data: {} }
      const plain = await orphan(failing.uuid, { attempts: 1, checkpoint: null, input: { n: 0 } })
      const spent = await orphan(resumable.uuid, { attempts: 4, checkpoint, input: { n: 0 } })
      const changed = await orphan(resumable.uuid, { attempts: 1, checkpoint: { nodes: [finished('elsewhere', 0, {})], static_data: {} }, input: { n: 0 } })
      expect(await until(alice, plain, ['failed'])).toMatchObject({ error: { code: 'abandoned' } })
      expect(await until(alice, spent, ['failed'])).toMatchObject({ error: { code: 'abandoned' } })
      expect(await until(alice, changed, ['failed'])).toMatchObject({
        error: { code: 'interrupted', message: 'The workflow changed while the execution was interrupted: it cannot resume' },
      })
    })
  })

  describe('webhooks', () => {
    const responding = graph(
      [
        hook,
        { id: 'shape', type: 'set', parameters: { values: { hello: '=body.name' }, mode: 'replace' } },
        { id: 'reply', type: 'respond_to_webhook', parameters: { status: 201, headers: { 'x-flow': 'yes' } } },
      ],
      [
        ['start', 'shape'],
        ['shape', 'reply'],
      ],
    )
    /** Posts to a webhook; its answer is held to the OpenAPI document like every REST answer (test/helpers/contract.ts). */
    const post = async (url: string, body: string | Buffer, headers: Record<string, string> = { 'content-type': 'application/json' }) => {
      const response = await fetch(url, { method: 'POST', body, headers })
      const text = await response.clone().text()
      const contentType = response.headers.get('content-type')
      checkAnswer('POST', url, response.status, contentType, text === '' ? null : contentType?.startsWith('application/json') ? JSON.parse(text) : text)
      return response
    }

    it('answers with the respond node and records the execution with the request as the trigger input', async () => {
      const flow = await create(alice, { ...responding, is_active: true })
      expect(flow.webhook_url).toMatch(/\/api\/v1\/hooks\/[0-9a-f]{64}$/)
      const response = await post(flow.webhook_url!.replace(t.config.appUrl, t.url), JSON.stringify({ name: 'Ada' }), {
        'content-type': 'application/json',
        authorization: 'Bearer not-for-the-graph',
      })
      expect(response.status).toBe(201)
      expect(response.headers.get('x-flow')).toBe('yes')
      expect((await response.json()) as any).toEqual({ hello: 'Ada' })
      const list = (await t.http('GET', `/api/v1/workflow-executions?workflow_uuid=${flow.uuid}`, { token: alice.token })).body.data
      expect(list).toHaveLength(1)
      const done = await until(alice, list[0].uuid, ['succeeded'])
      expect(done.mode).toBe('webhook')
      expect(done.input).toMatchObject({ method: 'POST', body: { name: 'Ada' }, headers: { 'content-type': 'application/json' } })
      expect(done.input.headers.authorization).toBeUndefined()
      const workflow = (await t.http('GET', `/api/v1/workflows/${flow.uuid}`, { token: alice.token })).body.data
      expect(workflow.trigger_count).toBe(1)
    })

    it('queues graphs without a respond node and answers 202 with the execution uuid', async () => {
      const flow = await create(alice, { ...graph([hook, { id: 'shape', type: 'set', parameters: { values: { seen: true } } }], [['start', 'shape']]), is_active: true })
      const response = await post(flow.webhook_url!.replace(t.config.appUrl, t.url), 'plain text', { 'content-type': 'text/plain' })
      expect(response.status).toBe(202)
      const body = (await response.json()) as any
      expect(body.data.status).toBe('queued')
      const done = await until(alice, body.data.execution_uuid, ['succeeded'])
      expect(done.output).toMatchObject({ body: 'plain text', seen: true })
    })

    it('checks X-Signature when the workflow has a secret: 401 without or with a wrong one, 200 with the right one', async () => {
      const secret = 'a-webhook-secret-of-some-length'
      const flow = await create(alice, { ...responding, is_active: true, webhook_secret: secret })
      const retrieved = (await t.http('GET', `/api/v1/workflows/${flow.uuid}`, { token: alice.token })).body.data
      expect(retrieved.has_webhook_secret).toBe(true)
      expect(JSON.stringify(retrieved)).not.toContain(secret)
      const url = flow.webhook_url!.replace(t.config.appUrl, t.url)
      const body = JSON.stringify({ name: 'Signed' })
      expect((await post(url, body)).status).toBe(401)
      expect((await post(url, body, { 'content-type': 'application/json', 'x-signature': 'f'.repeat(64) })).status).toBe(401)
      const signature = createHmac('sha256', secret).update(body).digest('hex')
      const ok = await post(url, body, { 'content-type': 'application/json', 'x-signature': `sha256=${signature}` })
      expect(ok.status).toBe(201)
      expect((await ok.json()) as any).toEqual({ hello: 'Signed' })
      expect(await countExecutions(flow.uuid)).toBe(1)
    })

    it('answers 404 for an unknown token, 409 for an inactive workflow or another trigger, 413 and 400 for bad bodies, creating nothing', async () => {
      expect((await post(`${t.url}/api/v1/hooks/${'0'.repeat(64)}`, '{}')).status).toBe(404)
      expect((await post(`${t.url}/api/v1/hooks/not-a-token`, '{}')).status).toBe(404)
      const inactive = await create(alice, responding)
      const inactiveUrl = inactive.webhook_url!.replace(t.config.appUrl, t.url)
      const conflict = await post(inactiveUrl, '{}')
      expect(conflict.status).toBe(409)
      expect((await conflict.json()) as any).toMatchObject({ code: 'CONFLICT' })
      const manualFlow = await create(alice, { ...graph([manual], []), is_active: true })
      expect((await post(manualFlow.webhook_url!.replace(t.config.appUrl, t.url), '{}')).status).toBe(409)
      const active = await create(alice, { ...responding, is_active: true })
      const url = active.webhook_url!.replace(t.config.appUrl, t.url)
      const tooLarge = await post(url, Buffer.alloc(t.config.workflows.webhookBodyLimitBytes + 1, 'a'), { 'content-type': 'text/plain' })
      expect(tooLarge.status).toBe(413)
      const malformed = await post(url, '{"name":')
      expect(malformed.status).toBe(400)
      expect(((await malformed.json()) as any).issues[0].path).toEqual(['body'])
      for (const flow of [inactive, manualFlow, active]) expect(await countExecutions(flow.uuid)).toBe(0)
    })

    it('answers 502 when the execution fails before responding', async () => {
      const flow = await create(alice, {
        ...graph(
          [hook, { id: 'call', type: 'http_request', parameters: { url: `${targetUrl}/down` }, retry: { max_attempts: 1 } }, { id: 'reply', type: 'respond_to_webhook', parameters: {} }],
          [
            ['start', 'call'],
            ['call', 'reply'],
          ],
        ),
        is_active: true,
      })
      const response = await post(flow.webhook_url!.replace(t.config.appUrl, t.url), '{}')
      expect(response.status).toBe(502)
      const body = (await response.json()) as any
      expect(body.code).toBe('BAD_GATEWAY')
      expect(body.message).toMatch(/failed/)
    })

    it('shows webhook_url only to those who manage the workflow', async () => {
      const flow = await create(alice, { ...responding, visibility: 'public' })
      const seen = (await t.http('GET', `/api/v1/workflows/${flow.uuid}`, { token: bob.token })).body.data
      expect(seen.webhook_url).toBeNull()
    })
  })

  describe('schedules', () => {
    const scheduled = (cron: string, timezone = 'UTC') =>
      create(alice, {
        ...graph([{ id: 'start', type: 'schedule_trigger', parameters: { cron, timezone } }, { id: 'shape', type: 'set', parameters: { values: { fired: true } } }], [['start', 'shape']]),
        is_active: true,
      })
    const scheduleOf = async (uuid: string) =>
      (await t.sql(`select s.cron, s.timezone, s.next_run_at from workflow_schedules s join workflows w on w.id = s.workflow_id where w.uuid = ?`, [uuid]))[0]
    const executionsOf = (uuid: string) =>
      t.sql(
        `select e.uuid, e.mode, e.input, e.due_at, e.created_at from workflow_executions e join workflows w on w.id = e.workflow_id where w.uuid = ? order by e.due_at`,
        [uuid],
      )

    it('fires an active schedule trigger at its due time, records the due time as scheduled_at, and stops when deactivated', async () => {
      const flow = await scheduled('*/2 * * * * *', 'Europe/Paris')
      expect(await scheduleOf(flow.uuid)).toMatchObject({ cron: '*/2 * * * * *', timezone: 'Europe/Paris' })
      let rows: Record<string, any>[] = []
      for (let i = 0; i < 100 && !rows.length; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50))
        rows = await executionsOf(flow.uuid)
      }
      expect(rows.length).toBeGreaterThan(0)
      const due = new Date(rows[0].due_at as string)
      // A due time of `*/2` seconds, not the moment a process got to it.
      expect(due.getUTCMilliseconds()).toBe(0)
      expect(due.getUTCSeconds() % 2).toBe(0)
      const done = await until(alice, rows[0].uuid, ['succeeded'])
      expect(done).toMatchObject({ mode: 'schedule', output: { fired: true, scheduled_at: due.toISOString(), timezone: 'Europe/Paris' } })
      await t.http('PUT', `/api/v1/workflows/${flow.uuid}`, { token: alice.token, body: { is_active: false } })
      expect(await scheduleOf(flow.uuid)).toBeUndefined()
      const stopped = (await executionsOf(flow.uuid)).length
      await new Promise((resolve) => setTimeout(resolve, 2_500))
      expect(await executionsOf(flow.uuid)).toHaveLength(stopped)
    })

    it('records one execution per due time however many processes fire at once, and goes on from now after missed due times', async () => {
      const flow = await scheduled('0 * * * *')
      const before = await scheduleOf(flow.uuid)
      expect(new Date(before.next_run_at as string).getTime()).toBeGreaterThan(Date.now())
      // Due three hours ago: every process was down since.
      await t.sql(`update workflow_schedules s set next_run_at = date_trunc('hour', now()) - interval '3 hours' from workflows w where w.id = s.workflow_id and w.uuid = ?`, [flow.uuid])
      const fired = await Promise.all([t.runtime.scheduler.fireDue(), t.runtime.scheduler.fireDue(), t.runtime.scheduler.fireDue()])
      expect(fired.reduce((sum, n) => sum + n, 0)).toBeGreaterThanOrEqual(1)
      const rows = await executionsOf(flow.uuid)
      expect(rows).toHaveLength(1)
      expect(rows[0].mode).toBe('schedule')
      const next = new Date((await scheduleOf(flow.uuid)).next_run_at as string)
      expect(next.getTime()).toBeGreaterThan(Date.now())
      expect(next.getUTCMinutes()).toBe(0)
      // The same due time again (a lost lock) records nothing more: the unique key on workflow and due time.
      await t.sql(`update workflow_schedules s set next_run_at = ? from workflows w where w.id = s.workflow_id and w.uuid = ?`, [rows[0].due_at, flow.uuid])
      await t.runtime.scheduler.fireDue()
      expect(await executionsOf(flow.uuid)).toHaveLength(1)
      expect(new Date((await scheduleOf(flow.uuid)).next_run_at as string).getTime()).toBeGreaterThan(Date.now())
      await until(alice, String(rows[0].uuid), ['succeeded'])
      const [{ trigger_count }] = await t.sql(`select trigger_count from workflows where uuid = ?`, [flow.uuid])
      expect(Number(trigger_count)).toBe(1)
    })

    it('keeps the due time across saves that leave the schedule alone, and moves it when the cron changes', async () => {
      const flow = await scheduled('0 9 * * *', 'America/New_York')
      const first = await scheduleOf(flow.uuid)
      await t.http('PUT', `/api/v1/workflows/${flow.uuid}`, { token: alice.token, body: { name: 'Renamed' } })
      expect(await scheduleOf(flow.uuid)).toEqual(first)
      const changed = graph([{ id: 'start', type: 'schedule_trigger', parameters: { cron: '30 9 * * *', timezone: 'America/New_York' } }, { id: 'shape', type: 'set', parameters: { values: {} } }], [['start', 'shape']])
      expect((await t.http('PUT', `/api/v1/workflows/${flow.uuid}`, { token: alice.token, body: changed })).status).toBe(200)
      const moved = await scheduleOf(flow.uuid)
      expect(moved.cron).toBe('30 9 * * *')
      expect(new Date(moved.next_run_at as string).toLocaleString('en-US', { timeZone: 'America/New_York', hour: 'numeric', minute: 'numeric', hour12: false })).toBe('09:30')
      expect((await t.http('DELETE', `/api/v1/workflows/${flow.uuid}`, { token: alice.token })).status).toBe(204)
      expect(await scheduleOf(flow.uuid)).toBeUndefined()
    })

    it('writes the due times of workflows saved before they had any, and drops the schedules pg-boss held', async () => {
      const flow = await scheduled('15 * * * *')
      await t.sql(`delete from workflow_schedules s using workflows w where w.id = s.workflow_id and w.uuid = ?`, [flow.uuid])
      expect(await t.runtime.workflows.schedules.reconcile()).toBe(1)
      expect(await scheduleOf(flow.uuid)).toMatchObject({ cron: '15 * * * *', timezone: 'UTC' })
      const boss = await t.runtime.jobs.start()
      await boss.createQueue('workflow-schedule')
      await boss.schedule('workflow-schedule', '*/5 * * * *', { workflow_id: 1 }, { key: flow.uuid })
      expect(await boss.getSchedules('workflow-schedule')).toHaveLength(1)
      await t.runtime.jobs.dropSchedules('workflow-schedule')
      expect(await boss.getSchedules('workflow-schedule')).toHaveLength(0)
    })
  })
})

describe('per-workspace concurrency of background executions', () => {
  let t: TestApp
  let alice: TestUser
  beforeAll(async () => {
    t = await createTestApp({ WORKFLOW_CONCURRENCY: '1' })
    alice = await t.make.user({ name: 'Alice Limited' })
  })
  afterAll(async () => t?.close())

  it('runs at most WORKFLOW_CONCURRENCY executions of one workspace at once; the next waits queued', async () => {
    const created = await t.http('POST', '/api/v1/workflows', {
      token: alice.token,
      body: { name: 'Slow', ...graph([manual, { id: 'pause', type: 'wait', parameters: { seconds: 1 } }], [['start', 'pause']]) },
    })
    const uuid = created.body.data.uuid as string
    const first = (await t.http('POST', `/api/v1/workflows/${uuid}/run`, { token: alice.token, body: { background: true } })).body.data.uuid
    const second = (await t.http('POST', `/api/v1/workflows/${uuid}/run`, { token: alice.token, body: { background: true } })).body.data.uuid
    const status = async (execution: string) =>
      (await t.http('GET', `/api/v1/workflow-executions/${execution}`, { token: alice.token })).body.data
    // Both statuses from one statement (one snapshot): two reads in a row could see the first still
    // running and then the second already claimed, when the first ended between the reads.
    const statuses = async () => {
      const rows = await t.sql('select uuid, status from workflow_executions where uuid in (?, ?)', [first, second])
      const of = (uuid: string) => String(rows.find((row) => row.uuid === uuid)?.status)
      return [of(first), of(second)]
    }
    let sawOneRunning = false
    for (let i = 0; i < 100; i++) {
      const [statusA, statusB] = await statuses()
      expect(statusA === 'running' && statusB === 'running', 'both ran at once').toBe(false)
      if ([statusA, statusB].includes('running') && [statusA, statusB].includes('queued')) sawOneRunning = true
      if (statusA === 'succeeded' && statusB === 'succeeded') {
        const [a, b] = [await status(first), await status(second)]
        const [early, late] = a.started_at < b.started_at ? [a, b] : [b, a]
        expect(late.started_at >= early.finished_at).toBe(true)
        break
      }
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(sawOneRunning).toBe(true)
    expect((await status(first)).status).toBe('succeeded')
    expect((await status(second)).status).toBe('succeeded')
  }, 30_000)
})
