/**
 * Redis outages (docs/operations.md, "Redis outages"), against a Redis of this test's own
 * (test/helpers/redis-server.ts), never the shared one of REDIS_URL: the service keeps answering
 * within its deadlines while Redis is gone or stops answering, `/ready` says which dependency is
 * missing, and no invalidation lost meanwhile leaves a stale read behind once Redis is back.
 *
 * Two API "processes" (test/helpers/nodes.ts, caches on) share the test database and this Redis,
 * as in distributed mode; the database is PostgreSQL when DATABASE_URL is set, PGlite otherwise.
 */
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { captureLogs, createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { startNode, type Node } from './helpers/nodes.ts'
import { startRedisServer, type RedisServer } from './helpers/redis-server.ts'
import { freePort } from './helpers/ports.ts'
import { readSse } from './helpers/sse.ts'
import { startUpstream, type Upstream } from './helpers/upstream.ts'
import { AUTH_CACHE_TTL_MS } from '../src/platform/auth-cache.ts'
import { READ_CACHE_TTL_MS } from '../src/platform/read-cache.ts'
import { RedisConnection } from '../src/platform/redis.ts'

/** Redis's password: in the URL of every process, and in no log line. */
const PASSWORD = `pw-${randomBytes(12).toString('hex')}`
/** What every request must stay under while Redis is down or stalled. */
const BUDGET_MS = 1000
/** A request still unanswered after this is given up (and fails the test): the outage must not hang it. */
const GIVE_UP_MS = 5000

/** One request's answer and how long it took. */
interface Timed {
  label: string
  status: number
  ms: number
  retryAfter: string | null
  body: any
}

/** A request against `node`, timed from send to the whole body read; a hung one counts GIVE_UP_MS and status 0. */
async function timed(
  node: Node,
  label: string,
  method: string,
  path: string,
  options: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Timed> {
  const headers: Record<string, string> = { ...options.headers }
  if (options.token) headers.authorization = `Bearer ${options.token}`
  if (options.body !== undefined) headers['content-type'] = 'application/json'
  const started = performance.now()
  try {
    const response = await fetch(node.url + path, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: AbortSignal.timeout(GIVE_UP_MS),
    })
    const text = await response.text()
    const ms = performance.now() - started
    return { label, status: response.status, ms, retryAfter: response.headers.get('retry-after'), body: text ? JSON.parse(text) : null }
  } catch {
    return { label, status: 0, ms: GIVE_UP_MS, retryAfter: null, body: null }
  }
}

/** Every answer within the budget, and no 5xx but a 503 carrying Retry-After. */
function expectWithinBudget(results: Timed[]): void {
  for (const r of results) {
    expect(r.ms, `${r.label} took ${Math.round(r.ms)} ms (${r.status})`).toBeLessThan(BUDGET_MS)
    expect(r.status, `${r.label}: ${JSON.stringify(r.body)}`).toBeGreaterThan(0)
    if (r.status >= 500) {
      expect(r.status, `${r.label}: ${JSON.stringify(r.body)}`).toBe(503)
      expect(r.retryAfter, `${r.label}: 503 without Retry-After`).toMatch(/^\d+$/)
    }
  }
}

describe('Redis outages', () => {
  let redis: RedisServer
  let upstream: Upstream
  let t: TestApp
  let a: Node
  let b: Node
  let ada: TestUser
  const logs: string[][] = []
  /** Durations measured while Redis was down, by request, for the report at the end. */
  const measured: Timed[] = []

  beforeAll(async () => {
    redis = await startRedisServer(PASSWORD)
    upstream = await startUpstream()
    const main = captureLogs()
    logs.push(main.lines)
    t = await createTestApp(
      { REDIS_URL: redis.url, SIGN_IN_MAX_PER_EMAIL: '4', OPENAI_API_KEY: 'sk-upstream-test', OPENAI_BASE_URL: upstream.url },
      { log: main.log.child({ process: 't' }) },
    )
    const logA = captureLogs()
    const logB = captureLogs()
    logs.push(logA.lines, logB.lines)
    a = await startNode(t, AUTH_CACHE_TTL_MS, READ_CACHE_TTL_MS, { log: logA.log.child({ process: 'a' }) })
    b = await startNode(t, AUTH_CACHE_TTL_MS, READ_CACHE_TTL_MS, { log: logB.log.child({ process: 'b' }) })
    ada = await t.make.user({ name: 'Ada Outage' })
  })
  afterAll(async () => {
    // DEBUG_LOGS=<file>: every log line of the three processes, to see what a failure did.
    if (process.env.DEBUG_LOGS) (await import('node:fs')).writeFileSync(process.env.DEBUG_LOGS, logs.flat().join(''))
    await a?.close()
    await b?.close()
    await t?.close()
    await redis?.stop()
    await upstream?.close()
    const byLabel = Map.groupBy(measured, (r) => r.label)
    const line = [...byLabel].map(
      ([label, rs]) =>
        `${label}: ${rs.length}× max ${Math.round(Math.max(...rs.map((r) => r.ms)))} ms [${[...new Set(rs.map((r) => r.status))].join('/')}]`,
    )
    if (line.length) console.info(`request durations while Redis was down or stalled: ${line.join('; ')}`)
  })

  const agentName = async (node: Node, uuid: string) => {
    const res = await timed(node, 'GET agent', 'GET', `/api/v1/agents/${uuid}`, { token: ada.token })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    return { name: String(res.body.data.name), res }
  }
  const rename = (node: Node, uuid: string, name: string) =>
    timed(node, 'PUT agent', 'PUT', `/api/v1/agents/${uuid}`, { token: ada.token, body: { name } })
  const metrics = (node: Node, noCache: boolean) =>
    timed(node, noCache ? 'metrics no-cache' : 'metrics', 'POST', '/v1/agents/metrics', {
      token: ada.token,
      body: { calculation: 'accumulated_count' },
      headers: noCache ? { 'cache-control': 'no-cache' } : {},
    })
  const signIn = (node: Node, user: TestUser) =>
    timed(node, 'sign-in', 'POST', '/api/v1/auth/sign-in', { body: { email: user.email, password: user.password } })
  const me = (node: Node, user: TestUser) => timed(node, 'GET user', 'GET', '/api/v1/user', { token: user.token })
  const ready = (node: Node) => timed(node, 'GET /ready', 'GET', '/ready')

  it('Redis stopped: every request answers within 1 s, /ready is 503 naming redis, and after the restart /ready is 200 and no read is stale', async () => {
    const created = await timed(a, 'POST agent', 'POST', '/api/v1/agents', { token: ada.token, body: { name: 'Before' } })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    const uuid = String(created.body.data.uuid)
    // Both processes hold the agent in their read cache, and the metrics answer is stored.
    expect((await agentName(a, uuid)).name).toBe('Before')
    expect((await agentName(b, uuid)).name).toBe('Before')
    expect((await metrics(a, false)).status).toBe(200)
    await vi.waitFor(async () => expect((await ready(a)).body).toMatchObject({ status: 'ok', database: 'ok', redis: 'ok' }), { timeout: 2000 })

    await redis.stop()

    const outage: Timed[] = []
    for (const node of [a, b]) {
      for (let round = 0; round < 3; round++) {
        outage.push(await signIn(node, ada), await me(node, ada), await metrics(node, true), await metrics(node, false))
      }
    }
    measured.push(...outage)
    expectWithinBudget(outage)
    for (const r of outage) expect(r.status, `${r.label}: ${JSON.stringify(r.body)}`).toBe(200)

    // The rate limits hold per process meanwhile (SIGN_IN_MAX_PER_EMAIL is 4 here).
    const bea = await t.make.user({ name: 'Bea Outage' })
    const attempts: Timed[] = []
    for (let i = 0; i < 5; i++) attempts.push(await signIn(a, bea))
    measured.push(...attempts)
    expectWithinBudget(attempts)
    expect(attempts.map((r) => r.status)).toEqual([200, 200, 200, 200, 429])
    expect(attempts[4].retryAfter).toMatch(/^[1-9]\d*$/)

    const down = await ready(a)
    measured.push(down)
    expectWithinBudget([down])
    expect(down.status).toBe(503)
    expect(down.body).toMatchObject({ status: 'unavailable', database: 'ok', redis: 'unreachable' })
    expect(down.retryAfter).toMatch(/^\d+$/)

    // A write in one process while nobody can be told: the other reads it at once, and after.
    const renamed = await rename(b, uuid, 'During the outage')
    expectWithinBudget([renamed])
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200)
    const during = await agentName(a, uuid)
    expectWithinBudget([during.res])
    expect(during.name).toBe('During the outage')
    measured.push(renamed, during.res)

    // Run events: a run executing in b, followed from a, whose bus cannot carry them: a polls the
    // stored events (every 250 ms instead of the 2 s of a bus that is up), so the stream still
    // ends soon after the run does.
    upstream.enqueue({ kind: 'slow', delayMs: 500 })
    const started = await timed(b, 'POST run', 'POST', `/api/v1/agents/${uuid}/run`, {
      token: ada.token,
      body: { input: 'During the outage', background: true },
    })
    expectWithinBudget([started])
    expect(started.status, JSON.stringify(started.body)).toBe(202)
    const following = performance.now()
    const followed = await readSse(`${a.url}/api/v1/runs/${started.body.data.run.uuid}/events`, { authorization: `Bearer ${ada.token}` })
    const followMs = performance.now() - following
    measured.push({
      label: 'run events followed elsewhere (500 ms run)',
      status: followed.status,
      ms: followMs,
      retryAfter: null,
      body: null,
    })
    expect(followed.status).toBe(200)
    expect(followed.events.at(-1)?.event).toBe('run.succeeded')
    expect(followed.events.map((e) => Number(e.id))).toEqual(followed.events.map((_, i) => i + 1))

    await redis.start()
    // Checked once Redis is back, so a miss here cannot leave the next test without Redis. Polling
    // every 250 ms ends the stream well before the 2 s a live bus's fallback would take; 2 s leaves
    // room for a loaded machine (1.55 s was seen with two test files at once at load 10).
    expect(followMs).toBeLessThan(500 + 1500)
    const back = performance.now()
    for (const node of [a, b]) {
      await vi.waitFor(async () => expect((await ready(node)).body).toMatchObject({ status: 'ok', database: 'ok', redis: 'ok' }), {
        timeout: 5000,
        interval: 50,
      })
    }
    expect(performance.now() - back).toBeLessThan(5000)
    expect((await agentName(a, uuid)).name).toBe('During the outage')
    expect((await agentName(b, uuid)).name).toBe('During the outage')

    // Pub/sub carries invalidations again: a write in a is seen by b's next read (b cached it just above).
    expect((await rename(a, uuid, 'After the outage')).status).toBe(200)
    await vi.waitFor(async () => expect((await agentName(b, uuid)).name).toBe('After the outage'), { timeout: 1000, interval: 10 })
    // And the metrics cache is shared again: a stored answer is a hit in the other process.
    const stored = await metrics(a, true)
    expect(stored.status).toBe(200)
    const hit = await metrics(b, false)
    expect(hit.body.cached_at).toBe(stored.body.cached_at)
  })

  it('Redis stalled: calls give up at their deadline, the circuit opens, and an invalidation that could not be published reaches the others once Redis answers', async () => {
    const created = await timed(a, 'POST agent', 'POST', '/api/v1/agents', { token: ada.token, body: { name: 'Before the stall' } })
    expect(created.status).toBe(201)
    const uuid = String(created.body.data.uuid)
    expect((await agentName(a, uuid)).name).toBe('Before the stall')
    const cachedAt = performance.now()

    // Writes stall (PUBLISH, SET and the rate limiter's script); reads and PING still answer. b's
    // invalidation is lost for good: its connection is killed while the PUBLISH waits. a's
    // connection and subscription never drop, so a cannot tell: it serves its entry on, until b,
    // which owes the others a catch-all, gets it through once Redis takes writes again.
    const bId = await b.runtime.redis!.client.clientId()
    await redis.command('CLIENT', 'PAUSE', '1000', 'WRITE')
    const renaming = rename(b, uuid, 'During the stall')
    await new Promise((resolve) => setTimeout(resolve, 100))
    await redis.command('CLIENT', 'KILL', 'ID', String(bId))
    const stalled = [await renaming, await signIn(b, ada), await metrics(b, true)]
    measured.push(...stalled.map((r) => ({ ...r, label: `${r.label} (stalled)` })))
    expectWithinBudget(stalled)
    for (const r of stalled) expect(r.status, `${r.label}: ${JSON.stringify(r.body)}`).toBe(200)
    // Before a's entry would expire by itself (5 s after it was cached).
    const beforeExpiry = READ_CACHE_TTL_MS - 500 - (performance.now() - cachedAt)
    await vi.waitFor(async () => expect((await agentName(a, uuid)).name).toBe('During the stall'), { timeout: beforeExpiry, interval: 50 })

    // Everything stalls: after a few calls time out (or heartbeats: REDIS_CIRCUIT_FAILURES in a
    // row) the circuit opens, and calls are refused at once, without waiting on Redis.
    await redis.command('CLIENT', 'PAUSE', '3000', 'ALL')
    const paused = performance.now()
    const results: Timed[] = []
    while (!a.runtime.redis?.circuitOpen && performance.now() - paused < 2500) {
      results.push(await metrics(a, true))
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(a.runtime.redis?.circuitOpen).toBe(true)
    const refused = performance.now()
    await expect(a.runtime.redis!.ping()).rejects.toThrow('Redis is not answering (circuit open)')
    expect(performance.now() - refused).toBeLessThan(50)
    results.push(await metrics(a, true), await metrics(a, false), await signIn(a, ada))
    measured.push(...results.map((r) => ({ ...r, label: `${r.label} (paused)` })))
    expectWithinBudget(results)
    for (const r of results) expect(r.status, `${r.label}: ${JSON.stringify(r.body)}`).toBe(200)
    const stillDown = await ready(a)
    expect(stillDown.status).toBe(503)
    expect(stillDown.body.redis).toBe('unreachable')
    // The first heartbeat after the pause closes the circuit.
    await vi.waitFor(() => expect(a.runtime.redis?.up).toBe(true), { timeout: 4000, interval: 50 })
    expect((await ready(a)).status).toBe(200)
  })

  it('fails to start within its connection attempts when Redis cannot be reached, naming REDIS_URL but not its password', async () => {
    const port = await freePort()
    const { log, lines } = captureLogs()
    logs.push(lines)
    const started = performance.now()
    const error: unknown = await RedisConnection.connect(`redis://:${PASSWORD}@127.0.0.1:${port}`, log).catch((cause: unknown) => cause)
    const ms = performance.now() - started
    expect(error).toBeInstanceOf(Error)
    expect(String(error)).toBe('Error: Redis cannot be reached (REDIS_URL)')
    expect(String((error as Error).cause)).toContain('ECONNREFUSED')
    // 10 attempts, 50 ms apart and doubling up to 1 s (src/platform/redis.ts): about 6 s.
    expect(ms).toBeGreaterThan(4000)
    expect(ms).toBeLessThan(10_000)
  })

  it('writes no secret to any log line', () => {
    const all = logs.flat().join('')
    expect(all.length).toBeGreaterThan(0)
    expect(all).not.toContain(PASSWORD)
    expect(all).not.toContain(ada.token)
  })
})
