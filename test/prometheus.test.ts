/**
 * `GET /metrics` (docs/operations.md, "Metrics"; src/http/prometheus.plugin.ts): the scrape is
 * read with a Prometheus text-format parser (prom2javascript), and every family is checked for
 * its type and labels; HTTP requests are counted by route template (never a raw path, an unknown
 * path as `unmatched`); a run against the loopback model server counts its status, duration,
 * tokens and tool call; a workflow execution and a webhook attempt are counted; and who may read
 * it: loopback callers without METRICS_TOKEN, bearers of the token with it.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { Readable } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import { getMetricsFromStream, type PromData, type PromHistogramData, type PromMetrics } from 'prom2javascript'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildHttpApp, type HttpApp } from '../src/http/app.ts'
import { ConfigError, loadConfig } from '../src/platform/config.ts'
import { JobQueue } from '../src/platform/queue.ts'
import { QUEUE_DEPTH_DEADLINE_MS, watchQueueDepth } from '../src/platform/queue-metrics.ts'
import { captureLogs, createTestApp, TEST_APP_KEY, type TestApp, type TestUser } from './helpers/app.ts'
import { startWeatherServer, type WeatherServer, weatherToolInput } from './helpers/tool-server.ts'
import { startUpstream, type Upstream } from './helpers/upstream.ts'
import { startReceiver, type Receiver } from './helpers/webhook-receiver.ts'

/** A UUID anywhere in a string. */
const ANY_UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i

/** A scrape: its text and the families the parser read from it. */
interface Scrape {
  text: string
  families: PromMetrics
}

/** Whether `sample` has exactly the labels `labels`. */
const sameLabels = (sample: { labels: Record<string, string> }, labels: Record<string, string>) =>
  Object.keys(sample.labels).length === Object.keys(labels).length && Object.entries(labels).every(([name, value]) => sample.labels[name] === value)

/** The value of the counter or gauge sample of `name` with exactly `labels`; 0 when there is none yet. */
function valueOf(scrape: Scrape, name: string, labels: Record<string, string> = {}): number {
  const samples = (scrape.families[name]?.data ?? []) as PromData[]
  return samples.find((sample) => sameLabels(sample, labels))?.value ?? 0
}

/** The observation count of the histogram sample of `name` with exactly `labels`; 0 when there is none yet. */
function countOf(scrape: Scrape, name: string, labels: Record<string, string> = {}): number {
  const samples = (scrape.families[name]?.data ?? []) as PromHistogramData[]
  return samples.find((sample) => sameLabels(sample, labels))?.count ?? 0
}

/** Asks `check` every 50 ms until it answers something truthy, or fails after `ms`. */
async function until<T>(check: () => Promise<T | false | null | undefined>, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await check()
    if (value) return value
    if (Date.now() > deadline) throw new Error('timed out waiting')
    await sleep(50)
  }
}

describe('GET /metrics', () => {
  const { log, lines } = captureLogs()
  const token = `metrics-${randomBytes(16).toString('hex')}`
  let t: TestApp
  /** A second HTTP host over the same runtime, with METRICS_TOKEN set. */
  let guarded: HttpApp
  let upstream: Upstream
  let weather: WeatherServer
  let receiver: Receiver
  let alice: TestUser

  beforeAll(async () => {
    ;[upstream, weather, receiver] = await Promise.all([startUpstream(), startWeatherServer(), startReceiver()])
    t = await createTestApp(
      {
        OPENAI_API_KEY: 'sk-upstream-test',
        OPENAI_BASE_URL: upstream.url,
        TOOL_ALLOW_PRIVATE_NETWORK: 'true',
        WEBHOOK_ALLOW_PRIVATE_NETWORK: 'true',
      },
      { log },
    )
    // Through loadConfig, as METRICS_TOKEN is read at start.
    const { metrics } = loadConfig({ DATA_DIR: t.config.dataDir, APP_KEY: TEST_APP_KEY, METRICS_TOKEN: token })
    guarded = await buildHttpApp({ ...t.runtime, config: { ...t.config, metrics } })
    alice = await t.make.user({ name: 'Alice Metrics' })
  })
  afterAll(async () => {
    await guarded?.app.close()
    await t?.close()
    await Promise.all([upstream?.close(), weather?.close(), receiver?.close()])
  })

  /** Scrapes over HTTP from loopback (no token configured) and parses the answer. */
  async function scrape(): Promise<Scrape> {
    // prom-client writes `Nan` for the event loop lag's mean when its monitor (a sample every 10 ms)
    // took none since the previous scrape: Prometheus reads that, prom2javascript does not.
    await sleep(25)
    const response = await fetch(`${t.url}/metrics`)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
    const text = await response.text()
    return { text, families: await getMetricsFromStream(Readable.from([text])) }
  }

  it('counts REST requests by route template, and no raw path or id reaches a label', async () => {
    const agent = (await t.as(alice).agents.create({ name: 'Metered' } as never)).data
    const labels = { method: 'GET', route: '/api/v1/agents/{agent_uuid}', status_code: '200' }
    const before = await scrape()
    expect((await t.http('GET', `/api/v1/agents/${agent.uuid}`, { token: alice.token })).status).toBe(200)
    const after = await scrape()
    expect(valueOf(after, 'http_requests_total', labels) - valueOf(before, 'http_requests_total', labels)).toBe(1)
    expect(countOf(after, 'http_request_duration_seconds', labels) - countOf(before, 'http_request_duration_seconds', labels)).toBe(1)
    expect(after.text).not.toContain(agent.uuid)
    for (const family of Object.values(after.families)) {
      for (const sample of family.data) for (const value of Object.values(sample.labels)) expect(value).not.toMatch(ANY_UUID)
    }
  })

  it('labels a request that reached no route or no operation `unmatched`', async () => {
    const made = `/no/such/path/${randomUUID()}`
    const labels = { method: 'GET', route: 'unmatched', status_code: '404' }
    const before = await scrape()
    expect((await fetch(`${t.url}${made}`)).status).toBe(404)
    expect((await fetch(`${t.url}/api/v1/nothing-here-${randomUUID()}`)).status).toBe(404)
    // A method no route has: Fastify's own 404, with no route at all.
    expect((await fetch(`${t.url}/health`, { method: 'PURGE' })).status).toBe(404)
    const after = await scrape()
    expect(valueOf(after, 'http_requests_total', labels) - valueOf(before, 'http_requests_total', labels)).toBe(2)
    const purge = { method: 'PURGE', route: 'unmatched', status_code: '404' }
    expect(valueOf(after, 'http_requests_total', purge) - valueOf(before, 'http_requests_total', purge)).toBe(1)
    expect(after.text).not.toContain('/no/such/path')
    expect(after.text).not.toContain('nothing-here')
  })

  it('counts a run by status, its duration, its tokens by model and direction, and its tool call', async () => {
    const tool = (await t.as(alice).tools.create(weatherToolInput(weather) as never)).data
    const agent = (await t.as(alice).agents.create({ name: 'Forecaster', tools: [{ tool_uuid: tool.uuid }] } as never)).data
    upstream.reset()
    upstream.enqueue(
      { kind: 'tool_calls', calls: [{ name: 'weather', arguments: '{"city":"Oslo"}', id: 'call_metrics' }], usage: { prompt_tokens: 40, completion_tokens: 9 } },
      { kind: 'text', text: 'Sunny in Oslo.', usage: { prompt_tokens: 61, completion_tokens: 5 } },
    )
    const before = await scrape()
    const res = await t.http('POST', `/api/v1/agents/${agent.uuid}/run`, { token: alice.token, body: { input: 'Weather in Oslo?' } })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.data.run.status).toBe('succeeded')
    expect(weather.requests).toEqual(['/weather?city=Oslo'])
    expect(upstream.requests).toHaveLength(2)
    const model: string = res.body.data.run.model
    expect(model).toBeTruthy()
    const delta = (after: Scrape, name: string, labels: Record<string, string> = {}) => valueOf(after, name, labels) - valueOf(before, name, labels)
    // The duration is observed once the run's execution has wound up, just after its answer.
    const after = await until(async () => {
      const scraped = await scrape()
      return countOf(scraped, 'run_duration_seconds') > countOf(before, 'run_duration_seconds') && scraped
    })
    expect(countOf(after, 'run_duration_seconds') - countOf(before, 'run_duration_seconds')).toBe(1)
    expect(delta(after, 'runs_total', { status: 'succeeded' })).toBe(1)
    expect(delta(after, 'runs_total', { status: 'failed' })).toBe(0)
    expect(delta(after, 'gen_ai_tokens_total', { model, direction: 'input' })).toBe(40 + 61)
    expect(delta(after, 'gen_ai_tokens_total', { model, direction: 'output' })).toBe(9 + 5)
    expect(delta(after, 'tool_calls_total')).toBe(1)
  })

  it('counts a workflow execution by its final status', async () => {
    const created = await t.http('POST', '/api/v1/workflows', {
      token: alice.token,
      body: {
        name: 'Metered flow',
        nodes: [
          { id: 'start', type: 'manual_trigger', parameters: {} },
          { id: 'shape', type: 'set', parameters: { values: { greeting: 'hello' } } },
        ],
        edges: [{ id: 'e0', source: 'start', target: 'shape' }],
      },
    })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    const before = await scrape()
    const run = await t.http('POST', `/api/v1/workflows/${created.body.data.uuid}/run`, { token: alice.token, body: {} })
    expect(run.status, JSON.stringify(run.body)).toBe(200)
    expect(run.body.data.status).toBe('succeeded')
    const succeeded = { status: 'succeeded' }
    const after = await until(async () => {
      const scraped = await scrape()
      return valueOf(scraped, 'workflow_executions_total', succeeded) > valueOf(before, 'workflow_executions_total', succeeded) && scraped
    })
    expect(valueOf(after, 'workflow_executions_total', succeeded) - valueOf(before, 'workflow_executions_total', succeeded)).toBe(1)
    expect(valueOf(after, 'workflow_executions_total', { status: 'failed' })).toBe(valueOf(before, 'workflow_executions_total', { status: 'failed' }))
  })

  it('counts webhook delivery attempts by outcome, and reports the queue depth of every job once the queue runs', async () => {
    const endpoint = await t.http('POST', '/api/v1/webhook-endpoints', {
      token: alice.token,
      body: { url: receiver.url, event_types: ['knowledge_document.failed'] },
    })
    expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201)
    const before = await scrape()
    expect((await t.http('POST', `/api/v1/webhook-endpoints/${endpoint.body.data.uuid}/ping`, { token: alice.token })).status).toBe(202)
    await receiver.waitFor(1)
    const succeeded = { outcome: 'succeeded' }
    const after = await until(async () => {
      const scraped = await scrape()
      return valueOf(scraped, 'webhook_deliveries_total', succeeded) > valueOf(before, 'webhook_deliveries_total', succeeded) && scraped
    })
    expect(valueOf(after, 'webhook_deliveries_total', succeeded) - valueOf(before, 'webhook_deliveries_total', succeeded)).toBe(1)
    for (const outcome of ['pending', 'failed']) {
      expect(valueOf(after, 'webhook_deliveries_total', { outcome })).toBe(valueOf(before, 'webhook_deliveries_total', { outcome }))
    }
    // The ping's job started the queue: each registered job has its depth.
    const depths = (after.families.job_queue_depth?.data ?? []) as PromData[]
    expect(depths.map((sample) => sample.labels.job)).toContain('webhooks.deliver')
    for (const sample of depths) expect(sample.value).toBeGreaterThanOrEqual(0)
  })

  it('answers the scrape whatever the queue does: not started, failing or silent', async () => {
    // A queue of this runtime's database that nothing started: it reports nothing and starts nothing.
    const idle = new JobQueue(t.runtime.orm, t.config, t.runtime.log)
    expect(await idle.waiting()).toEqual(new Map())
    const before = await scrape()
    const unwatch = [
      watchQueueDepth(idle),
      watchQueueDepth({ waiting: () => Promise.reject(new Error('the database is down')) }),
      watchQueueDepth({ waiting: () => new Promise<Map<string, number>>(() => {}) }),
    ]
    try {
      const started = Date.now()
      const after = await scrape()
      expect(Date.now() - started).toBeLessThan(QUEUE_DEPTH_DEADLINE_MS + 2_000)
      // The real queue's jobs, each once; the values may have moved on meanwhile.
      const jobs = (scraped: Scrape) => scraped.families.job_queue_depth.data.map((sample) => sample.labels.job).sort()
      expect(jobs(after)).toEqual(jobs(before))
    } finally {
      for (const stop of unwatch) stop()
    }
  })

  it('writes every family with its type and labels, and the process metrics', async () => {
    const { families } = await scrape()
    const expected: Record<string, [type: string, labels: string[]]> = {
      http_requests_total: ['counter', ['method', 'route', 'status_code']],
      http_request_duration_seconds: ['histogram', ['method', 'route', 'status_code']],
      runs_total: ['counter', ['status']],
      run_duration_seconds: ['histogram', []],
      gen_ai_tokens_total: ['counter', ['direction', 'model']],
      tool_calls_total: ['counter', []],
      workflow_executions_total: ['counter', ['status']],
      job_queue_depth: ['gauge', ['job']],
      webhook_deliveries_total: ['counter', ['outcome']],
    }
    for (const [name, [type, labels]] of Object.entries(expected)) {
      const family = families[name]
      expect(family, name).toBeDefined()
      expect(family.type, name).toBe(type)
      expect(family.data.length, name).toBeGreaterThan(0)
      for (const sample of family.data) expect(Object.keys(sample.labels).sort(), name).toEqual(labels)
    }
    expect(families.runs_total.data.map((sample) => sample.labels.status).sort()).toEqual(['canceled', 'failed', 'succeeded'])
    expect(families.workflow_executions_total.data.map((sample) => sample.labels.status).sort()).toEqual(['canceled', 'failed', 'succeeded'])
    expect(families.webhook_deliveries_total.data.map((sample) => sample.labels.outcome).sort()).toEqual(['failed', 'pending', 'succeeded'])
    expect(new Set(families.gen_ai_tokens_total.data.map((sample) => sample.labels.direction))).toEqual(new Set(['input', 'output']))
    // prom-client's process metrics.
    expect(families.process_cpu_seconds_total?.type).toBe('counter')
    expect(families.process_resident_memory_bytes?.type).toBe('gauge')
    expect(families.nodejs_eventloop_lag_seconds?.type).toBe('gauge')
    expect(families.nodejs_heap_size_used_bytes?.type).toBe('gauge')
  })

  it('without METRICS_TOKEN answers loopback callers only, whatever X-Forwarded-For says', async () => {
    for (const remoteAddress of ['127.0.0.1', '::1', '::ffff:127.0.0.1']) {
      const local = await t.app.inject({ method: 'GET', url: '/metrics', remoteAddress })
      expect(local.statusCode, remoteAddress).toBe(200)
    }
    const remote = await t.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '10.0.0.1', headers: { 'x-forwarded-for': '127.0.0.1' } })
    expect(remote.statusCode).toBe(403)
    expect(remote.json()).toMatchObject({ code: 'FORBIDDEN', request_id: expect.any(String) })
    expect(remote.body).not.toContain('http_requests_total')
  })

  it('with METRICS_TOKEN answers the bearer of the token only, from any address, and never logs it', async () => {
    const scrapeWith = (headers: Record<string, string>) =>
      guarded.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '10.0.0.1', headers })
    const none = await scrapeWith({})
    expect(none.statusCode).toBe(401)
    expect(none.headers['www-authenticate']).toBe('Bearer')
    expect(none.json()).toMatchObject({ code: 'UNAUTHORIZED' })
    for (const authorization of [`Bearer ${token}x`, `Bearer ${token.slice(0, -1)}`, 'Bearer nope', `Basic ${token}`, token]) {
      const wrong = await scrapeWith({ authorization })
      expect(wrong.statusCode, authorization).toBe(401)
      expect(wrong.headers['www-authenticate']).toBe('Bearer')
    }
    const right = await scrapeWith({ authorization: `Bearer ${token}` })
    expect(right.statusCode).toBe(200)
    expect(right.body).toContain('# TYPE http_requests_total counter')
    expect((await scrapeWith({ authorization: `bearer ${token}` })).statusCode).toBe(200)
    // Loopback is no pass when a token is configured.
    expect((await guarded.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(401)
    expect(lines.join('')).not.toContain(token)
  })

  it('logs its own requests at debug and is not in the OpenAPI document', async () => {
    const entries = lines.map((line) => JSON.parse(line) as { level: number; msg: string; req?: { url: string } })
    const scrapes = entries.filter((entry) => entry.msg === 'request completed' && entry.req?.url === '/metrics')
    expect(scrapes.length).toBeGreaterThan(0)
    for (const entry of scrapes) expect(entry.level).toBe(20)
    const doc = (await t.http('GET', '/openapi.json')).body as { paths: Record<string, unknown> }
    expect(doc.paths['/metrics']).toBeUndefined()
  })
})

describe('METRICS_TOKEN', () => {
  it('is at least 16 printable characters without spaces; a bad one stops start-up without being echoed', () => {
    for (const bad of ['short-token', 'a token with spaces in it']) {
      const start = () => loadConfig({ DATA_DIR: '/nonexistent', APP_KEY: TEST_APP_KEY, METRICS_TOKEN: bad })
      expect(start).toThrow(ConfigError)
      expect(start).toThrow(/^METRICS_TOKEN:/)
      try {
        start()
      } catch (error) {
        expect(String(error)).not.toContain(bad)
      }
    }
  })

  it('is read, and left out of a serialised configuration', () => {
    const token = 'a-metrics-token-0123456789'
    const config = loadConfig({ DATA_DIR: '/nonexistent', APP_KEY: TEST_APP_KEY, METRICS_TOKEN: token })
    expect(config.metrics.token).toBe(token)
    expect(JSON.stringify(config)).not.toContain(token)
    expect(loadConfig({ DATA_DIR: '/nonexistent', APP_KEY: TEST_APP_KEY }).metrics.token).toBeUndefined()
  })
})
