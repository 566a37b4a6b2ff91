/**
 * Processes killed with SIGKILL in the middle of their work (docs/api/runs.md and
 * docs/api/workflows.md, "crashes"): real `npm start` / `npm run worker` processes under tsx, on
 * the mode the suite runs in (a PGlite data folder, or a fresh PostgreSQL database; workers need
 * PostgreSQL). Heartbeats tell the survivors (or the restarted process) that the work's process
 * died: runs are taken over and go on as the same runs, executions are resumed or failed per
 * their workflow's `on_interrupt`, within seconds, and nothing runs twice.
 */
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest'
import { freshDatabase } from './helpers/database.ts'
import { TEST_APP_KEY } from './helpers/app.ts'
import { readSse } from './helpers/sse.ts'
import { startUpstream, type Upstream } from './helpers/upstream.ts'
import {
  processSuite,
  startHitCounter,
  startProcess,
  startServer,
  stopProcess,
  until,
  type HitCounter,
  type ServiceProcess,
} from './helpers/processes.ts'
import type { Orm } from '../src/platform/db.ts'
import { Webhook } from 'standardwebhooks'
import { startReceiver, type Receiver } from './helpers/webhook-receiver.ts'

describe('npm start killed with background agent runs in flight (docs/api/runs.md, "Interrupted runs")', () => {
  const RUNS = 50
  const distributed = Boolean(process.env.DATABASE_URL)
  let upstream: Upstream
  beforeAll(async () => {
    upstream = await startUpstream()
    // The first call of each question never answers in time: every run is mid-call when its
    // process dies. Asked again (by the process that takes the run over), it is answered.
    const asked = new Set<string>()
    upstream.respondWith((req) => {
      const text = JSON.stringify(req.body?.messages ?? [])
      const first = !asked.has(text)
      asked.add(text)
      return first ? { kind: 'slow', delayMs: 60_000 } : { kind: 'text', text: `Answered: ${/question \d+/.exec(text)?.[0]}` }
    })
  })
  afterAll(() => upstream?.close())
  const suite = processSuite('aw-recovery', () => ({ OPENAI_API_KEY: 'sk-upstream-test', OPENAI_BASE_URL: upstream.url }))

  it(`takes every run over within 20 s (${distributed ? 'in the other live process' : 'in the restarted process'}): each succeeds as the same run, its stream going on to its final event`, async () => {
    suite.dumpOnFailure()
    const first = await startServer(suite.env)
    suite.processes.push(first)
    // On PostgreSQL a second process serves the followers and takes the runs over while the first is dead.
    const other = distributed ? await startServer(suite.env) : null
    if (other) suite.processes.push(other)
    const signUp = await first.http('POST', '/api/v1/auth/sign-up', {
      body: { name: 'Crash', email: 'crash@example.com', password: 'correct horse battery staple' },
    })
    expect(signUp.status, JSON.stringify(signUp.body)).toBe(201)
    const token = String(signUp.body.data.access_token)
    const agent = await first.http('POST', '/api/v1/agents', { token, body: { name: 'Survivor', instruction: 'Answer.' } })
    const started = await Promise.all(
      Array.from({ length: RUNS }, (_, n) =>
        first.http('POST', `/api/v1/agents/${agent.body.data.uuid}/run`, { token, body: { input: `question ${n}`, background: true } }),
      ),
    )
    for (const res of started) expect(res.status, JSON.stringify(res.body)).toBe(202)
    const uuids = started.map((res) => String(res.body.data.run.uuid))
    await until(
      async () => upstream.requests.length,
      (count) => count === RUNS,
      20_000,
    )
    const streams = other
      ? uuids.map((uuid) => readSse(`${other.url}/api/v1/runs/${uuid}/events`, { authorization: `Bearer ${token}` }))
      : []

    await stopProcess(first, 'SIGKILL')
    const killed = Date.now()
    const serving = other ?? (await startServer(suite.env))
    if (!other) suite.processes.push(serving)
    // The clock starts at the kill, or once the restarted process is up.
    const from = other ? killed : Date.now()
    // Without a live process, the followers start on the restarted one from the first event.
    const followed = await Promise.all(
      other ? streams : uuids.map((uuid) => readSse(`${serving.url}/api/v1/runs/${uuid}/events`, { authorization: `Bearer ${token}` })),
    )
    const final = Date.now()
    for (const [index, stream] of followed.entries()) {
      const types = stream.events.map((e) => e.event)
      expect(types.at(-1), JSON.stringify(stream.events)).toBe('run.succeeded')
      expect(types.filter((type) => type === 'run.resumed')).toHaveLength(1)
      // One log, no gap: the ids the first process wrote go on in the second.
      expect(stream.events.map((e) => Number(e.id))).toEqual(stream.events.map((_, n) => n + 1))
      expect(JSON.parse(stream.events.at(-1)!.data).data.output).toBe(`Answered: question ${index}`)
    }
    const runs = await Promise.all(uuids.map(async (uuid) => (await serving.http('GET', `/api/v1/runs/${uuid}`, { token })).body.data))
    expect(runs.map((res) => res.run.status)).toEqual(Array(RUNS).fill('succeeded'))
    for (const [index, res] of runs.entries()) {
      expect(res.messages.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
        ['user', `question ${index}`],
        ['assistant', `Answered: question ${index}`],
      ])
      expect(res.run.events_count).toBe(Number(followed[index].events.at(-1)!.id))
    }
    console.info(`${RUNS} runs final ${final - killed} ms after the kill, ${final - from} ms after ${other ? 'it' : 'the restart'}`)
    expect(final - from).toBeLessThan(20_000)
    expect(await stopProcess(serving, 'SIGTERM')).toBe(0)
  }, 120_000)
})

describe('npm start killed mid-evaluation (docs/api/evaluations.md, "How an evaluation runs")', () => {
  const ITEMS = 8
  let upstream: Upstream
  beforeAll(async () => {
    upstream = await startUpstream()
    // Each item's first call never answers in time: the items under way at the kill are mid-call.
    const asked = new Set<string>()
    upstream.respondWith((req) => {
      const item = /item \d+/.exec(JSON.stringify(req.body?.messages ?? []))?.[0] ?? 'none'
      const first = !asked.has(item)
      asked.add(item)
      return first && Number(item.slice(5)) < 2 ? { kind: 'slow', delayMs: 60_000 } : { kind: 'text', text: `Answered ${item}` }
    })
  })
  afterAll(() => upstream?.close())
  const suite = processSuite('aw-evaluation', () => ({ OPENAI_API_KEY: 'sk-upstream-test', OPENAI_BASE_URL: upstream.url }))

  it('resumes after a restart: every item ends with one run of its own, none run twice, none lost', async () => {
    suite.dumpOnFailure()
    const first = await startServer(suite.env)
    suite.processes.push(first)
    const signUp = await first.http('POST', '/api/v1/auth/sign-up', {
      body: { name: 'Evaluator', email: 'evaluator@example.com', password: 'correct horse battery staple' },
    })
    const token = String(signUp.body.data.access_token)
    const agent = await first.http('POST', '/api/v1/agents', { token, body: { name: 'Evaluated', instruction: 'Answer.' } })
    const dataset = await first.http('POST', '/api/v1/datasets', { token, body: { name: 'Eight items' } })
    const items = Array.from({ length: ITEMS }, (_, n) => ({ input: `item ${n}`, expected_output: `Answered item ${n}` }))
    expect((await first.http('POST', `/api/v1/datasets/${dataset.body.data.uuid}/items`, { token, body: { items } })).status).toBe(201)
    const created = await first.http('POST', '/api/v1/evaluations', {
      token,
      body: { name: 'Survives', dataset_uuid: dataset.body.data.uuid, agent_uuid: agent.body.data.uuid, scorers: [{ type: 'exact_match' }], concurrency: 2 },
    })
    expect(created.status, JSON.stringify(created.body)).toBe(202)
    const uuid = String(created.body.data.uuid)
    // Items 0 and 1 are mid-call: the kill comes while both runs wait for the model.
    await until(async () => upstream.requests.length, (count) => count >= 2, 20_000)
    await stopProcess(first, 'SIGKILL')
    const killed = Date.now()
    const serving = await startServer(suite.env)
    suite.processes.push(serving)
    const restarted = Date.now()
    const done = await until(
      async () => (await serving.http('GET', `/api/v1/evaluations/${uuid}`, { token })).body.data,
      (evaluation) => !['queued', 'running'].includes(evaluation.status),
      60_000,
    )
    console.info(`evaluation ended ${Date.now() - killed} ms after the kill, ${Date.now() - restarted} ms after the restart`)
    expect(done).toMatchObject({ status: 'succeeded', progress: { total: ITEMS, done: ITEMS, failed: 0 } })
    expect(done.summary[0]).toMatchObject({ mean_score: 1, pass_rate: 1 })
    const results = (await serving.http('GET', `/api/v1/evaluations/${uuid}/results?per_page=100`, { token })).body.data
    const runUuids = results.map((result: { run_uuid: string }) => result.run_uuid)
    expect(new Set(runUuids).size).toBe(ITEMS)
    for (const [n, result] of results.entries()) {
      expect(result).toMatchObject({ status: 'succeeded', output: `Answered item ${n}` })
      const run = (await serving.http('GET', `/api/v1/runs/${result.run_uuid}`, { token })).body.data.run
      expect(run).toMatchObject({ status: 'succeeded', evaluation_uuid: uuid })
    }
    // The two interrupted items were asked twice (their runs taken over), every other item once.
    const asked = (n: number) => upstream.requests.filter((req) => JSON.stringify(req.body?.messages ?? []).includes(`item ${n}"`)).length
    expect(Array.from({ length: ITEMS }, (_, n) => asked(n))).toEqual([2, 2, ...Array(ITEMS - 2).fill(1)])
    expect(await stopProcess(serving, 'SIGTERM')).toBe(0)
  }, 120_000)
})

describe('npm start killed while runs wait and a webhook attempt is under way (docs/api/runs.md, "States"; docs/api/webhooks.md, "Delivery")', () => {
  let counter: HitCounter
  let receiver: Receiver
  beforeAll(async () => {
    counter = await startHitCounter()
    receiver = await startReceiver()
  })
  afterAll(async () => {
    await counter?.close()
    await receiver?.close()
  })
  // A 3 s attempt timeout: an attempt whose process died is sent again 8 s after it started.
  const suite = processSuite('aw-waiting', () => ({
    TOOL_ALLOW_PRIVATE_NETWORK: 'true',
    WEBHOOK_ALLOW_PRIVATE_NETWORK: 'true',
    WEBHOOK_TIMEOUT_MS: '3000',
  }))

  it('loses nothing: after a restart the approved run resumes in the new process, calls the tool once, and the queued message runs after it; the webhook attempt is sent again with its webhook-id', async () => {
    suite.dumpOnFailure()
    const first = await startServer(suite.env)
    suite.processes.push(first)
    const signUp = await first.http('POST', '/api/v1/auth/sign-up', {
      body: { name: 'Waiter', email: 'waiter@example.com', password: 'correct horse battery staple' },
    })
    const token = String(signUp.body.data.access_token)
    const tool = await first.http('POST', '/api/v1/tools', {
      token,
      body: {
        name: 'Refund',
        method: 'GET',
        url: `${counter.url}/hit/refund-{{order}}`,
        input_schema: { type: 'object', properties: { order: { type: 'string' } } },
        requires_approval: true,
      },
    })
    const agent = await first.http('POST', '/api/v1/agents', {
      token,
      body: { name: 'Careful', metadata: { large_language_model: 'local-test-model' }, tools: [{ tool_uuid: tool.body.data.uuid }] },
    })
    // The local test model calls the tool when told to (docs/api/runs.md, "The local test model").
    const waiting = await first.http('POST', `/api/v1/agents/${agent.body.data.uuid}/run`, {
      token,
      body: { input: '/call refund {"order":"A-1"}' },
    })
    expect(waiting.body.data.run.status, JSON.stringify(waiting.body)).toBe('awaiting_approval')
    const runUuid = String(waiting.body.data.run.uuid)
    const queued = await first.http('POST', `/api/v1/threads/${waiting.body.data.run.thread_uuid}/run`, {
      token,
      body: { content: 'and then?', background: true },
    })
    expect(queued.body.data.run.status).toBe('queued')
    // An endpoint that never answers the first attempt: the process dies mid-attempt.
    receiver.enqueue({ hang: true })
    const endpoint = await first.http('POST', '/api/v1/webhook-endpoints', {
      token,
      body: { url: receiver.url, event_types: ['agent.version_created'] },
    })
    const secret = String(endpoint.body.data.secret)
    const ping = await first.http('POST', `/api/v1/webhook-endpoints/${endpoint.body.data.uuid}/ping`, { token })
    expect(ping.status, JSON.stringify(ping.body)).toBe(202)
    const [hung] = await receiver.waitFor(1)

    await stopProcess(first, 'SIGKILL')
    const second = await startServer(suite.env)
    suite.processes.push(second)
    const [, again] = await receiver.waitFor(2, 20_000)
    expect(again.headers['webhook-id']).toBe(hung.headers['webhook-id'])
    expect(new Webhook(secret).verify(again.body, again.headers)).toMatchObject({ type: 'webhook_endpoint.ping' })
    const delivered = await until(
      async () => (await second.http('GET', `/api/v1/webhook-deliveries/${ping.body.data.uuid}`, { token })).body.data,
      (delivery) => delivery.status === 'succeeded',
      10_000,
    )
    expect(delivered.attempts.map((attempt: { status_code: number | null }) => attempt.status_code)).toEqual([200])
    // Still waiting after the restart: nothing of it lived in the dead process.
    expect((await second.http('GET', `/api/v1/runs/${runUuid}`, { token })).body.data.run.status).toBe('awaiting_approval')
    const approved = await second.http('POST', `/api/v1/approvals/${waiting.body.data.approvals[0].uuid}/approve`, { token, body: {} })
    expect(approved.status, JSON.stringify(approved.body)).toBe(200)
    const done = await until(
      async () => (await second.http('GET', `/api/v1/runs/${runUuid}`, { token })).body.data.run,
      (run) => run.status === 'succeeded',
      15_000,
    )
    expect(done.output).toBe('I am the local test model; I do not think. The tool answered: {"ok":true}')
    expect(counter.hits.get('refund-A-1')).toBe(1)
    const next = await until(
      async () => (await second.http('GET', `/api/v1/runs/${queued.body.data.run.uuid}`, { token })).body.data.run,
      (run) => run.status === 'succeeded',
      15_000,
    )
    expect(next.output).toBe('I am the local test model; I do not think. You said: and then?')
    expect(await stopProcess(second, 'SIGTERM')).toBe(0)
  }, 90_000)
})

describe.runIf(Boolean(process.env.DATABASE_URL))(
  "two approvals of one run decided in two processes while the run's process is dead",
  () => {
    let counter: HitCounter
    let upstream: Upstream
    beforeAll(async () => {
      counter = await startHitCounter()
      upstream = await startUpstream()
    })
    afterAll(async () => {
      await counter?.close()
      await upstream?.close()
    })
    const suite = processSuite('aw-decisions', () => ({
      OPENAI_API_KEY: 'sk-upstream-test',
      OPENAI_BASE_URL: upstream.url,
      TOOL_ALLOW_PRIVATE_NETWORK: 'true',
      // Redis carries cancels and live events between the processes, as in production.
      ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
    }))

    it('resumes the run once, in a live process, and calls each tool once', async () => {
      suite.dumpOnFailure()
      const [a, b, c] = await Promise.all([startServer(suite.env), startServer(suite.env), startServer(suite.env)])
      suite.processes.push(a, b, c)
      const signUp = await a.http('POST', '/api/v1/auth/sign-up', {
        body: { name: 'Deciders', email: 'deciders@example.com', password: 'correct horse battery staple' },
      })
      const token = String(signUp.body.data.access_token)
      const tool = await a.http('POST', '/api/v1/tools', {
        token,
        body: {
          name: 'Refund',
          method: 'GET',
          url: `${counter.url}/hit/{{order}}`,
          input_schema: { type: 'object', properties: { order: { type: 'string' } } },
          requires_approval: true,
        },
      })
      const agent = await a.http('POST', '/api/v1/agents', {
        token,
        body: { name: 'Careful', tools: [{ tool_uuid: tool.body.data.uuid }] },
      })
      upstream.enqueue(
        {
          kind: 'tool_calls',
          calls: [
            { name: 'refund', arguments: '{"order":"one"}', id: 'c1' },
            { name: 'refund', arguments: '{"order":"two"}', id: 'c2' },
          ],
        },
        { kind: 'text', text: 'Both refunded.' },
      )
      const waiting = await a.http('POST', `/api/v1/agents/${agent.body.data.uuid}/run`, { token, body: { input: 'Refund both' } })
      expect(waiting.body.data.run.status, JSON.stringify(waiting.body)).toBe('awaiting_approval')
      const [first, second] = waiting.body.data.approvals.map((approval: { uuid: string }) => approval.uuid)
      await stopProcess(a, 'SIGKILL')
      const decided = await Promise.all([
        b.http('POST', `/api/v1/approvals/${first}/approve`, { token, body: {} }),
        c.http('POST', `/api/v1/approvals/${second}/approve`, { token, body: {} }),
      ])
      expect(decided.map((res) => res.status)).toEqual([200, 200])
      const runUuid = String(waiting.body.data.run.uuid)
      const done = await until(
        async () => (await b.http('GET', `/api/v1/runs/${runUuid}`, { token })).body.data.run,
        (run) => run.status === 'succeeded',
        15_000,
      )
      expect(done.output).toBe('Both refunded.')
      expect([counter.hits.get('one'), counter.hits.get('two')]).toEqual([1, 1])
      const log = await readSse(`${c.url}/api/v1/runs/${runUuid}/events`, { authorization: `Bearer ${token}` })
      expect(log.events.filter((event) => event.event === 'run.resumed')).toHaveLength(1)
      expect(log.events.map((event) => Number(event.id))).toEqual(log.events.map((_, index) => index + 1))
    }, 120_000)
  },
)

describe.runIf(Boolean(process.env.DATABASE_URL))('npm run worker killed with executions in flight', () => {
  const EACH = 5
  let counter: HitCounter
  let env: Record<string, string>
  let orm: Orm
  let drop: (() => Promise<void>) | undefined
  const processes: ServiceProcess[] = []

  beforeAll(async () => {
    counter = await startHitCounter()
    const database = await freshDatabase()
    orm = database.orm
    drop = database.drop
    env = { NODE_ENV: 'test', LOG_LEVEL: 'info', APP_KEY: TEST_APP_KEY, DATABASE_URL: database.url!, TOOL_ALLOW_PRIVATE_NETWORK: 'true' }
  }, 60_000)
  afterAll(async () => {
    for (const proc of processes) await stopProcess(proc)
    await counter?.close()
    await drop?.()
  })

  it('resumes the executions of workflows with on_interrupt: resume and fails the others within seconds; none runs a node twice', async () => {
    onTestFailed(() => console.error(processes.map((proc) => proc.output().slice(-6000)).join('\n---- next process ----\n')))
    const api = await startServer({ ...env, WORKER: 'false' })
    processes.push(api)
    const worker = await startProcess('src/worker.ts', env, /worker started/)
    processes.push(worker)
    const { http } = api
    const signUp = await http('POST', '/api/v1/auth/sign-up', {
      body: { name: 'Crash', email: 'worker-crash@example.com', password: 'correct horse battery staple' },
    })
    const token = String(signUp.body.data.access_token)
    // Each says it started, waits (40 s; 1 s once resumed: the graph is changed before the kill, and
    // a resumed execution runs its workflow's graph as it is then), says it ended.
    const hit = (name: string) => ({ method: 'GET', url: `="${counter.url}/hit/" & $execution.uuid & "/${name}"` })
    const nodes = (seconds: number) => [
      { id: 'start', type: 'manual_trigger', parameters: {} },
      { id: 'before', type: 'http_request', parameters: hit('before') },
      { id: 'pause', type: 'wait', parameters: { seconds } },
      { id: 'after', type: 'http_request', parameters: hit('after') },
    ]
    const workflow = async (name: string, settings: Record<string, unknown>) => {
      const created = await http('POST', '/api/v1/workflows', {
        token,
        body: {
          name,
          settings,
          nodes: nodes(40),
          edges: [
            { source: 'start', target: 'before' },
            { source: 'before', target: 'pause' },
            { source: 'pause', target: 'after' },
          ],
        },
      })
      expect(created.status, JSON.stringify(created.body)).toBe(201)
      return String(created.body.data.uuid)
    }
    const resumable = await workflow('Resumable', { on_interrupt: 'resume' })
    const failing = await workflow('Failing', {})
    const queue = (uuid: string) => http('POST', `/api/v1/workflows/${uuid}/run`, { token, body: { background: true } })
    const queued = await Promise.all([
      ...Array.from({ length: EACH }, () => queue(resumable)),
      ...Array.from({ length: EACH }, () => queue(failing)),
    ])
    for (const res of queued) expect(res.status, JSON.stringify(res.body)).toBe(202)
    const resumableUuids = queued.slice(0, EACH).map((res) => String(res.body.data.uuid))
    const failingUuids = queued.slice(EACH).map((res) => String(res.body.data.uuid))
    // Every execution is in its wait, on the worker.
    await until(
      async () => counter.hits.size,
      (size) => size === 2 * EACH,
      20_000,
    )
    for (const uuid of [resumable, failing])
      expect((await http('PUT', `/api/v1/workflows/${uuid}`, { token, body: { nodes: nodes(1) } })).status).toBe(200)

    await stopProcess(worker, 'SIGKILL')
    const killed = Date.now()
    const survivor = await startProcess('src/worker.ts', env, /worker started/)
    processes.push(survivor)

    const read = (uuid: string) => http('GET', `/api/v1/workflow-executions/${uuid}`, { token }).then((res) => res.body.data)
    // When the dead worker's queue slots were released: none of its jobs is active any more.
    const released = until(
      async () =>
        Number(
          (
            await orm.em.fork().execute(`select count(*)::int as n from pgboss.job where name = 'workflow-execution' and state = 'active'`)
          )[0].n,
        ),
      (active) => active < 2 * EACH,
      30_000,
    ).then(() => Date.now() - killed)
    const failedMs = until(
      () => Promise.all(failingUuids.map(read)),
      (all) => all.every((e) => e.status === 'failed'),
      30_000,
    ).then(() => Date.now() - killed)
    const resumedMs = until(
      () => Promise.resolve(resumableUuids.filter((uuid) => counter.hits.get(`${uuid}/after`)).length),
      (n) => n === EACH,
      30_000,
    ).then(() => Date.now() - killed)
    const [releasedAfter, failedAfter, resumedAfter] = await Promise.all([released, failedMs, resumedMs])
    const finals = await until(
      () => Promise.all(resumableUuids.map(read)),
      (all) => all.every((e) => e.status === 'succeeded'),
      10_000,
    )
    console.info(
      `after the kill: first queue slot released ${releasedAfter} ms, non-resumable executions failed ${failedAfter} ms, resumable ones ended ${resumedAfter} ms`,
    )
    expect(failedAfter).toBeLessThan(20_000)
    expect(resumedAfter).toBeLessThan(20_000)
    expect(releasedAfter).toBeLessThan(15_000)

    for (const uuid of failingUuids) expect(await read(uuid)).toMatchObject({ status: 'failed', error: { code: 'abandoned' } })
    for (const execution of finals) {
      expect(execution.data.map((node: { node_id: string; status: string }) => [node.node_id, node.status])).toEqual([
        ['start', 'succeeded'],
        ['before', 'succeeded'],
        ['pause', 'succeeded'],
        ['after', 'succeeded'],
      ])
    }
    // The dead worker's jobs come back from the queue (retried once their heartbeat stopped): they find nothing to run.
    await until(
      async () =>
        Number(
          (
            await orm.em
              .fork()
              .execute(
                `select count(*)::int as n from pgboss.job where name = 'workflow-execution' and state in ('active', 'retry', 'created')`,
              )
          )[0].n,
        ),
      (n) => n === 0,
      20_000,
    )
    const hits = (uuid: string) => [counter.hits.get(`${uuid}/before`) ?? 0, counter.hits.get(`${uuid}/after`) ?? 0]
    expect(resumableUuids.map(hits)).toEqual(Array(EACH).fill([1, 1]))
    expect(failingUuids.map(hits)).toEqual(Array(EACH).fill([1, 0]))
    const counts = await http('GET', '/api/v1/workflow-executions/counts', { token })
    expect(counts.body.data).toMatchObject({ queued: 0, running: 0, succeeded: EACH, failed: EACH, canceled: 0, total: 2 * EACH })
    expect(await stopProcess(survivor, 'SIGTERM')).toBe(0)
    expect(await stopProcess(api, 'SIGTERM')).toBe(0)
  }, 120_000)
})
