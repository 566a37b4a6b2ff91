/**
 * SIGTERM with work in flight (docs/operations.md, "Shutdown"): a real `npm start` process
 * (src/server.ts under tsx) on the mode the suite runs in (a PGlite data folder, or a fresh
 * PostgreSQL database), its model a local OpenAI-compatible server (test/helpers/upstream.ts)
 * that answers slowly. While it drains, new requests are answered 503 with `Retry-After`,
 * run-event streams are told to reconnect, and work in flight gets `SHUTDOWN_TIMEOUT_MS`: what ends
 * in time answers normally; a run that does not is handed over (its caller gets it, `running`)
 * and an execution ends `interrupted` (or, for a workflow with `on_interrupt: resume`, goes back
 * to the queue), and every caller still gets a clean answer. The process exits 0 before the hard
 * exit; after a restart the handed-over runs go on to `succeeded`, nothing stays `running`, and the
 * handed-back executions resume from their last finished node.
 */
import { request } from 'node:http'
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest'
import { WebSocket } from 'ws'
import { TEST_APP_KEY, type HttpResult } from './helpers/app.ts'
import { readSse } from './helpers/sse.ts'
import { startUpstream, type Upstream } from './helpers/upstream.ts'
import { startHitCounter, startServer, stopProcess, until, type HitCounter, type ServerProcess, processStorage } from './helpers/processes.ts'

/** Milliseconds of grace the server gets; long work takes far more, quick work far less. */
const GRACE_MS = 3_000

/**
 * A WebSocket on `/trpc` that records the messages it gets and how it closes (`opened` settles
 * once it is open), or the status of a refused upgrade.
 */
function trpcSocket(url: string) {
  const socket = new WebSocket(`${url.replace('http', 'ws')}/trpc`)
  const messages: string[] = []
  socket.on('message', (data) => messages.push(String(data)))
  const opened = new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve())
    socket.once('error', reject)
  })
  const refused = new Promise<number>((resolve) => socket.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)))
  const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)))
  socket.on('error', () => {})
  return { messages, opened, refused, closed }
}

/** A GET on a new connection (no keep-alive pool): status and raw headers, or the connection error. */
function freshGet(url: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined> } | { error: string }> {
  return new Promise((resolve) => {
    const req = request(url, { agent: false }, (res) => {
      res.resume()
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }))
    })
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }))
    req.end()
  })
}

describe('SIGTERM with requests, runs and executions in flight', () => {
  const env: Record<string, string> = {
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    APP_KEY: TEST_APP_KEY,
    SHUTDOWN_TIMEOUT_MS: String(GRACE_MS),
    LLM_TIMEOUT_MS: '60000',
    OPENAI_API_KEY: 'sk-upstream-test',
    TOOL_ALLOW_PRIVATE_NETWORK: 'true',
  }
  let upstream: Upstream
  let counter: HitCounter
  let drop: (() => Promise<void>) | undefined
  const servers: ServerProcess[] = []

  beforeAll(async () => {
    counter = await startHitCounter()
    upstream = await startUpstream()
    env.OPENAI_BASE_URL = upstream.url
    // Inputs say how long the model takes: `quick` ends within the grace period, `long` does not
    // the first time it is asked (a run taken over after the restart asks again, and is answered).
    const asked = new Set<string>()
    upstream.respondWith((req) => {
      const text = JSON.stringify(req.body?.messages ?? [])
      const first = !asked.has(text)
      asked.add(text)
      return { kind: 'slow', delayMs: text.includes('long') && first ? 50_000 : 1_500 }
    })
    const storage = await processStorage('aw-shutdown')
    drop = storage.drop
    Object.assign(env, storage.env)
  }, 60_000)
  afterAll(async () => {
    for (const server of servers) await stopProcess(server)
    await upstream?.close()
    await counter?.close()
    await drop?.()
  })

  it('answers new requests 503, lets quick work finish, interrupts the rest, exits 0 in time; nothing stays running', async () => {
    onTestFailed(() => console.error(servers.map((server) => server.output().slice(-6000)).join('\n---- next process ----\n')))
    const first = await startServer(env)
    servers.push(first)
    const { http } = first
    const signUp = await http('POST', '/api/v1/auth/sign-up', { body: { name: 'Grace', email: 'grace@example.com', password: 'correct horse battery staple' } })
    expect(signUp.status, JSON.stringify(signUp.body)).toBe(201)
    const token = String(signUp.body.data.access_token)
    const agent = await http('POST', '/api/v1/agents', { token, body: { name: 'Slowpoke', instruction: 'Answer.' } })
    expect(agent.status, JSON.stringify(agent.body)).toBe(201)
    const agentUuid = String(agent.body.data.uuid)
    const workflow = async (name: string, seconds: number) => {
      const created = await http('POST', '/api/v1/workflows', {
        token,
        body: {
          name,
          nodes: [
            { id: 'start', type: 'manual_trigger', parameters: {} },
            { id: 'pause', type: 'wait', parameters: { seconds } },
          ],
          edges: [{ source: 'start', target: 'pause' }],
        },
      })
      expect(created.status, JSON.stringify(created.body)).toBe(201)
      return String(created.body.data.uuid)
    }
    const quickFlow = await workflow('Quick', 2)
    const longFlow = await workflow('Long', 40)
    // Resumable: says it started, waits (40 s; 1 s once resumed: its graph is changed before the
    // SIGTERM, and a resumed execution runs the graph of its workflow as it is then), says it ended.
    const hit = (name: string) => ({ method: 'GET', url: `="${counter.url}/hit/" & $execution.uuid & "/${name}"` })
    const resumableNodes = (seconds: number) => [
      { id: 'start', type: 'manual_trigger', parameters: {} },
      { id: 'before', type: 'http_request', parameters: hit('before') },
      { id: 'pause', type: 'wait', parameters: { seconds } },
      { id: 'after', type: 'http_request', parameters: hit('after') },
    ]
    const resumable = await http('POST', '/api/v1/workflows', {
      token,
      body: {
        name: 'Resumable',
        settings: { on_interrupt: 'resume' },
        nodes: resumableNodes(40),
        edges: [
          { source: 'start', target: 'before' },
          { source: 'before', target: 'pause' },
          { source: 'pause', target: 'after' },
        ],
      },
    })
    expect(resumable.status, JSON.stringify(resumable.body)).toBe(201)
    const resumableFlow = String(resumable.body.data.uuid)

    const runAgent = (input: string, background = false) =>
      http('POST', `/api/v1/agents/${agentUuid}/run`, { token, body: { input, ...(background ? { background: true } : {}) } })
    const runFlow = (uuid: string, background = false) => http('POST', `/api/v1/workflows/${uuid}/run`, { token, body: background ? { background: true } : {} })

    // Background work first, so it is running when the waited requests start.
    const backgroundRuns = await Promise.all([1, 2, 3, 4, 5].map((n) => runAgent(`long background ${n}`, true)))
    for (const res of backgroundRuns) expect(res.status, JSON.stringify(res.body)).toBe(202)
    const backgroundRunUuids = backgroundRuns.map((res) => String(res.body.data.run.uuid))
    const backgroundFlows = await Promise.all([1, 2, 3].map(() => runFlow(longFlow, true)))
    for (const res of backgroundFlows) expect(res.status, JSON.stringify(res.body)).toBe(202)
    const backgroundFlowUuids = backgroundFlows.map((res) => String(res.body.data.uuid))
    const resumableRuns = await Promise.all([1, 2].map(() => runFlow(resumableFlow, true)))
    const resumableUuids = resumableRuns.map((res) => String(res.body.data.uuid))
    await until(
      () => Promise.all([...backgroundFlowUuids, ...resumableUuids].map((uuid) => http('GET', `/api/v1/workflow-executions/${uuid}`, { token }))),
      (all) => all.every((res) => res.body?.data?.status === 'running'),
      20_000,
    )
    const quickRuns = [1, 2, 3].map((n) => runAgent(`quick ${n}`))
    const longRuns = [1, 2, 3].map((n) => runAgent(`long ${n}`))
    const quickFlows = [1, 2].map(() => runFlow(quickFlow))
    const longFlows = [1, 2].map(() => runFlow(longFlow))
    const waitedResumable = runFlow(resumableFlow)
    const stream = readSse(`${first.url}/api/v1/runs/${backgroundRunUuids[0]}/events`, { authorization: `Bearer ${token}` })
    const socket = trpcSocket(first.url)
    await socket.opened
    // Every waited request has reached the server (its run or execution is stored and running).
    await until(
      () => http('GET', `/api/v1/workflow-executions/counts`, { token }),
      (res) => res.body?.data?.running === 10,
      20_000,
    )
    await until(async () => counter.hits.size, (size) => size === 3, 20_000)
    const shortened = await http('PUT', `/api/v1/workflows/${resumableFlow}`, { token, body: { nodes: resumableNodes(1) } })
    expect(shortened.status, JSON.stringify(shortened.body)).toBe(200)
    await until(async () => upstream.requests.length, (count) => count === 11, 20_000)

    const signaled = Date.now()
    first.child.kill('SIGTERM')
    await until(async () => first.output(), (output) => output.includes('shutting down'), 5_000)

    // Draining: the process still accepts connections and answers 503 with Retry-After.
    const refused = await freshGet(`${first.url}/api/v1/agents`)
    expect(refused).toMatchObject({ status: 503, headers: { 'retry-after': '5', connection: 'close' } })
    expect(await freshGet(`${first.url}/ready`)).toMatchObject({ status: 503 })
    expect(await freshGet(`${first.url}/health`)).toMatchObject({ status: 200 })
    // WebSocket clients get tRPC's reconnect notification and are closed with 1001; new ones are refused 503.
    expect(await socket.closed).toBe(1001)
    expect(socket.messages.map((message) => JSON.parse(message))).toEqual([{ id: null, method: 'reconnect' }])
    expect(await trpcSocket(first.url).refused).toBe(503)
    // The run-event stream is told to reconnect and ends, well before the grace period does.
    const followed = await stream
    const streamEndedMs = Date.now() - signaled
    expect(followed.events.at(-1)?.event).toBe('reconnect')
    expect(JSON.parse(followed.events.at(-1)!.data)).toMatchObject({ retry_ms: 1000 })
    expect(streamEndedMs).toBeLessThan(GRACE_MS)

    // Quick work finished normally; long work got a clean answer once the grace period was over.
    const quick = await Promise.all(quickRuns)
    for (const res of quick) expect(res.body.data?.run, JSON.stringify(res.body)).toMatchObject({ status: 'succeeded' })
    // Long runs were handed over, not failed: their callers get the run as it stands, still running.
    const long = await Promise.all(longRuns)
    for (const res of long) {
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body.data.run).toMatchObject({ status: 'running', error: null })
    }
    const longRunUuids = long.map((res: HttpResult) => String(res.body.data.run.uuid))
    for (const res of await Promise.all(quickFlows)) expect(res.body.data, JSON.stringify(res.body)).toMatchObject({ status: 'succeeded' })
    const longFlowAnswers = await Promise.all(longFlows)
    for (const res of longFlowAnswers) {
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body.data).toMatchObject({ status: 'failed', error: { code: 'interrupted' } })
    }
    // The waited resumable one went back to the queue: its caller is told so.
    const handedBack = await waitedResumable
    expect(handedBack.status, JSON.stringify(handedBack.body)).toBe(200)
    expect(handedBack.body.data).toMatchObject({ status: 'queued', error: null })
    resumableUuids.push(String(handedBack.body.data.uuid))

    // The process exits 0 after the grace period plus the short hand-over, never by the hard exit.
    const code = await first.exited
    const shutdownMs = Date.now() - signaled
    console.info(`shutdown took ${shutdownMs} ms (grace ${GRACE_MS} ms); the run-event stream ended after ${streamEndedMs} ms`)
    expect(code, first.output().slice(-3000)).toBe(0)
    expect(first.output()).not.toContain('shutdown timed out')
    expect(shutdownMs).toBeGreaterThanOrEqual(GRACE_MS)
    expect(shutdownMs).toBeLessThan(GRACE_MS + 4_500)

    // Restarted: the runs handed over go on there and succeed; every execution is final, none `running`.
    const second = await startServer(env)
    servers.push(second)
    const runStatuses = await until(
      () => Promise.all([...backgroundRunUuids, ...longRunUuids].map(async (uuid) => (await second.http('GET', `/api/v1/runs/${uuid}`, { token })).body.data.run)),
      (all) => all.every((run) => run.status === 'succeeded'),
      20_000,
      (all) => all.map((run) => [run.status, run.error]),
    )
    expect(runStatuses.map((run) => run.output)).toEqual([...[1, 2, 3, 4, 5].map((n) => `Echo: long background ${n}`), ...[1, 2, 3].map((n) => `Echo: long ${n}`)])
    for (const uuid of backgroundFlowUuids) {
      const execution = await second.http('GET', `/api/v1/workflow-executions/${uuid}`, { token })
      expect(execution.body.data).toMatchObject({ status: 'failed', error: { code: 'interrupted' } })
    }
    // The handed-back executions resume from their last finished node: `before` ran once, `pause` and `after` now.
    await until(
      () => Promise.all(resumableUuids.map(async (uuid) => (await second.http('GET', `/api/v1/workflow-executions/${uuid}`, { token })).body.data)),
      (all) => all.every((execution) => execution?.status === 'succeeded'),
      20_000,
      (all) => all.map((execution) => ({ uuid: execution.uuid, status: execution.status, error: execution.error, nodes: execution.data.length })),
    )
    const resumed = await Promise.all(resumableUuids.map(async (uuid) => (await second.http('GET', `/api/v1/workflow-executions/${uuid}`, { token })).body.data))
    for (const execution of resumed) {
      expect(execution.data.map((node: { node_id: string; status: string }) => [node.node_id, node.status])).toEqual([
        ['start', 'succeeded'],
        ['before', 'succeeded'],
        ['pause', 'succeeded'],
        ['after', 'succeeded'],
      ])
      expect([counter.hits.get(`${execution.uuid}/before`), counter.hits.get(`${execution.uuid}/after`)]).toEqual([1, 1])
    }
    const counts = await second.http('GET', '/api/v1/workflow-executions/counts', { token })
    expect(counts.body.data).toMatchObject({ queued: 0, running: 0, succeeded: 5, failed: 5, canceled: 0, total: 10 })
    // A handed-over run's log goes on after run.resumed, with no gap, to its final event.
    const events = await readSse(`${second.url}/api/v1/runs/${backgroundRunUuids[1]}/events`, { authorization: `Bearer ${token}` })
    expect(events.events.map((e) => e.event)).toContain('run.resumed')
    expect(events.events.map((e) => Number(e.id))).toEqual(events.events.map((_, index) => index + 1))
    expect(events.events.at(-1)?.event).toBe('run.succeeded')
    expect(await stopProcess(second, 'SIGTERM')).toBe(0)
  }, 90_000)
})
