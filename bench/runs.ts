/**
 * `npm run bench:runs`: what the service adds to a run, with the local
 * OpenAI-compatible upstream of the tests (test/helpers/upstream.ts) answering at once, all over
 * 127.0.0.1, in one run:
 *
 *   (a) the upstream called directly: a streaming chat completion through `fetch` (the request
 *       the service sends: system prompt, the user's input, `stream: true` with usage), time to
 *       the first body chunk and to the full answer; N sequential, then autocannon at C
 *       connections;
 *   (b) `POST /api/v1/agents/{uuid}/run` answered when done (200): N sequential, then autocannon
 *       at C connections;
 *   (c) a background run (`background: true`, 202) followed over `GET /api/v1/runs/{uuid}/events`
 *       (Server-Sent Events): time from the POST to the first `text.delta` event and to the end
 *       of the stream (`run.succeeded`); N sequential, a stream that fails counted (as in (d));
 *   (d) S concurrent streaming runs (each a background POST followed over SSE), R rounds: errors
 *       counted (a non-202, a stream that is not 200, ends without `run.succeeded`, carries an
 *       `error` event or a text other than `Echo: <input>`, a stored run that is not `succeeded`),
 *       and the service process's memory: resident set from /proc (what `ps -o rss=` shows) and
 *       V8 heap used through the Node inspector of the child, at a baseline after warm-up (after
 *       (a)-(c) and a settle), at the peak (sampled every 20 ms, and the kernel's high-water mark)
 *       and after each round plus a settle, first as left, then after a full GC.
 *
 * A yardstick row, `GET /api/v1/ping` sequential with the service's CPU per request, tells how
 * busy the machine was (the the quiet-machine figure of docs/benchmarks.md is about 0.17 ms): the machine is shared,
 * and CPU time per request inflates with the load too.
 *
 * Targets: (b) p50 - (a) full-answer p50 <= 5 ms, (c) first-event p50 - (a) first-chunk p50 <= 5 ms,
 * (d) no errors and memory back to its baseline (after a GC: heap used and resident set within
 * 10% of the baseline's).
 *
 * Modes: PostgreSQL (a fresh database `aw_bench_runs_*` on BENCH_DATABASE_URL, dropped at the end)
 * and PGlite (embedded, a temporary DATA_DIR). On PostgreSQL a last part starts a second service
 * whose database connections go through a counting proxy (bench/runs-probes.ts) and reports the
 * SQL of one run: statements, round trips, server time, by statement shape.
 *
 * The upstream and the service are child processes; this process only generates load. The exit
 * code is 0 whether or not a target is met (a measurement, not a test), 1 on an error.
 *
 * Environment (defaults keep a run of both modes under about 3 minutes on 2 cores):
 *   BENCH_DATABASE_URL       admin connection of the PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres)
 *   BENCH_RUNS_MODES         "postgres,pglite" (default both)
 *   BENCH_RUNS_SEQUENTIAL    N, sequential requests of (a), (b), (c) (default 150)
 *   BENCH_RUNS_WARMUP        sequential warm-up requests of each kind before measuring (default 30)
 *   BENCH_RUNS_CONNECTIONS   C, autocannon connections of (a) and (b) (default 10)
 *   BENCH_RUNS_DURATION      seconds of each autocannon run, after a 1 s warm-up (default 5)
 *   BENCH_RUNS_STREAMS       S, concurrent streaming runs of (d) (default 200)
 *   BENCH_RUNS_ROUNDS        R, rounds of (d) (default 2)
 *   BENCH_RUNS_SETTLE        seconds of rest before each memory reading (default 2)
 *   BENCH_RUNS_PROFILE       runs of each kind counted through the SQL proxy, 0 to skip (default 10)
 *   BENCH_RUNS_CPU_PROF      a folder: run the service under `node --cpu-prof` writing there; each part's window
 *                            is in the results JSON as row "<mode>:<part>" (npx tsx bench/profile-summary.ts
 *                            FILE --row=postgres:b --results=bench/results/runs-latest.json)
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import autocannon from 'autocannon'
import pg from 'pg'
import { cpuSeconds } from './cpu.ts'
import { type Bench, CHILD_ENV, expectOk, fmt, machineOf, runBench, signUp, writeResults } from './harness.ts'
import { type Child, startChild, startUpstreamChild, stopChild } from './processes.ts'
import { freePort } from '../test/helpers/ports.ts'
import { Inspector, memoryOf, resetPeak, SqlCounter, type SqlCounts } from './runs-probes.ts'

/** A whole number >= 0 from the environment, else `fallback`. */
function envCount(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback)
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number >= 0`)
  return value
}

const settings = {
  modes: (process.env.BENCH_RUNS_MODES ?? 'postgres,pglite')
    .split(',')
    .map((mode) => mode.trim())
    .filter(Boolean) as Mode[],
  sequential: Math.max(1, envCount('BENCH_RUNS_SEQUENTIAL', 150)),
  warmup: envCount('BENCH_RUNS_WARMUP', 30),
  connections: Math.max(1, envCount('BENCH_RUNS_CONNECTIONS', 10)),
  durationSeconds: Math.max(1, envCount('BENCH_RUNS_DURATION', 5)),
  cannonWarmupSeconds: 1,
  streams: Math.max(1, envCount('BENCH_RUNS_STREAMS', 200)),
  rounds: Math.max(1, envCount('BENCH_RUNS_ROUNDS', 2)),
  settleSeconds: envCount('BENCH_RUNS_SETTLE', 2),
  profileRuns: envCount('BENCH_RUNS_PROFILE', 10),
  cpuProfileDir: process.env.BENCH_RUNS_CPU_PROF ? path.resolve(process.env.BENCH_RUNS_CPU_PROF) : undefined,
}
type Mode = 'postgres' | 'pglite'
for (const mode of settings.modes) if (mode !== 'postgres' && mode !== 'pglite') throw new Error(`BENCH_RUNS_MODES: unknown mode ${mode}`)

/** The issue's budget: what the service may add at p50, in ms. */
const ADDED_TARGET_MS = 5
/** Memory "back to its baseline": after a GC, within this factor of the baseline's. */
const MEMORY_TARGET_RATIO = 1.1
const INPUT = 'What is the weather like in Lisbon today?'
const SYSTEM = 'Answer briefly.'

const now = () => performance.now()
/** The monotonic clock in µs, which V8's CPU profiles use on Linux. */
const monotonicUs = () => Number(process.hrtime.bigint() / 1000n)
/** Measured windows of each part, `<mode>:<part>` (for bench/profile-summary.ts --row). */
const windows: { key: string; window: { startUs: number; endUs: number } }[] = []
async function windowed<T>(key: string, part: () => Promise<T>): Promise<T> {
  const startUs = monotonicUs()
  const result = await part()
  windows.push({ key, window: { startUs, endUs: monotonicUs() } })
  return result
}

// ---------------------------------------------------------------------------------------------
// Statistics

interface Summary {
  n: number
  p50: number
  p90: number
  p99: number
  mean: number
  max: number
}

/** Nearest-rank percentiles of `values` (ms). */
function summarise(values: number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b)
  const rank = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN
  const mean = sorted.reduce((sum, value) => sum + value, 0) / (sorted.length || 1)
  return { n: sorted.length, p50: rank(0.5), p90: rank(0.9), p99: rank(0.99), mean, max: sorted.at(-1) ?? NaN }
}

/** An autocannon result as the table shows it. */
interface CannonSummary {
  connections: number
  seconds: number
  requests: number
  requestsPerSecond: number
  p50: number
  p90: number
  p99: number
  non2xx: number
  errors: number
  /** CPU ms per request of the service and of the upstream (children), null without /proc. */
  serviceCpuMsPerRequest: number | null
  upstreamCpuMsPerRequest: number | null
}

// ---------------------------------------------------------------------------------------------
// Children

/** The service on PostgreSQL (`databaseUrl`) or PGlite (`dataDir`), its model provider the upstream. */
async function startRunsService(
  bench: Bench,
  target: { databaseUrl: string } | { dataDir: string },
  upstreamUrl: string,
  inspectPort?: number,
): Promise<Child> {
  const service = await startChild(
    'service',
    'src/server.ts',
    {
      ...CHILD_ENV,
      ...('databaseUrl' in target ? { DATABASE_URL: target.databaseUrl, DATA_DIR: '' } : { DATABASE_URL: '', DATA_DIR: target.dataDir }),
      APP_KEY: `base64:${randomBytes(32).toString('base64')}`,
      APP_URL: '',
      REDIS_URL: '',
      SIGN_IN_MAX_PER_ADDRESS: '1000000',
      SIGN_IN_MAX_PER_EMAIL: '1000000',
      OPENAI_API_KEY: 'sk-bench-runs',
      OPENAI_BASE_URL: upstreamUrl,
    },
    {
      readyPath: '/ready',
      nodeArgs: [
        ...(inspectPort ? [`--inspect=127.0.0.1:${inspectPort}`] : []),
        ...(settings.cpuProfileDir && inspectPort ? ['--cpu-prof', `--cpu-prof-dir=${settings.cpuProfileDir}`] : []),
      ],
      timeoutMs: 120_000,
    },
  )
  bench.children.push(service)
  return service
}

async function stopService(bench: Bench, service: Child): Promise<void> {
  await stopChild(service)
  bench.children.splice(bench.children.indexOf(service), 1)
}

// ---------------------------------------------------------------------------------------------
// Requests

export interface Api {
  url: string
  token: string
  agentUuid: string
}

const upstreamBody = (input: string) =>
  JSON.stringify({
    model: 'gpt-4o-mini',
    messages: [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: input },
    ],
    stream: true,
    stream_options: { include_usage: true },
  })

/** (a) One streaming chat completion: ms to the first body chunk and to the end. */
export async function upstreamOnce(upstreamUrl: string): Promise<{ first: number; full: number }> {
  const start = now()
  const response = await fetch(`${upstreamUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: 'Bearer sk-bench-runs', 'content-type': 'application/json' },
    body: upstreamBody(INPUT),
  })
  if (response.status !== 200 || !response.body) throw new Error(`upstream: HTTP ${response.status}`)
  let first: number | undefined
  let tail = ''
  const decoder = new TextDecoder()
  for await (const chunk of response.body) {
    first ??= now() - start
    tail = (tail + decoder.decode(chunk, { stream: true })).slice(-32)
  }
  const full = now() - start
  if (!tail.includes('[DONE]')) throw new Error('upstream: the stream did not end with [DONE]')
  return { first: first ?? full, full }
}

/** A new user of the service at `serviceUrl` and its agent, whose instruction is the system prompt of (a)'s request. */
export async function runnerApi(serviceUrl: string): Promise<Api> {
  const email = `bench-runs-${randomBytes(4).toString('hex')}@example.com`
  const { token } = await signUp(serviceUrl, 'Bench Runner', email)
  const created = await expectOk(
    await fetch(`${serviceUrl}/api/v1/agents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Bench runner', instruction: SYSTEM }),
    }),
    'POST /api/v1/agents',
  )
  return { url: serviceUrl, token, agentUuid: (JSON.parse(created.toString('utf8')) as { data: { uuid: string } }).data.uuid }
}

const runBody = (input: string, background: boolean) => JSON.stringify(background ? { input, background: true } : { input })
const headersOf = (api: Api) => ({ authorization: `Bearer ${api.token}`, 'content-type': 'application/json' })

/**
 * The database's own costs on this machine: a round trip (`select 1`) and a one-row insert in its
 * own transaction, whose commit waits for the WAL to reach the disk (synchronous_commit = on).
 */
async function measurePostgres(databaseUrl: string): Promise<{ select: Summary; commit: Summary }> {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    const time = async (sql: string) => {
      const start = now()
      await client.query(sql)
      return now() - start
    }
    const select = summarise(await sequential(50, () => time('select 1')))
    await client.query('create table if not exists bench_runs_commit (x int)')
    const commit = summarise(await sequential(50, () => time('insert into bench_runs_commit values (1)')))
    await client.query('drop table bench_runs_commit')
    return { select, commit }
  } finally {
    await client.end()
  }
}

/** `GET /api/v1/ping`: ms to the answer. */
async function pingOnce(api: Api): Promise<number> {
  const start = now()
  const response = await fetch(`${api.url}/api/v1/ping`)
  await response.arrayBuffer()
  if (response.status !== 200) throw new Error(`ping: HTTP ${response.status}`)
  return now() - start
}

/** (b) One run answered when done: ms to the whole answer, and the run's own timings (whole ms). */
interface Answered {
  elapsed: number
  /** `latency_ms`: from the execution's start (after the launch transaction) to the end of the model's stream. */
  latencyMs: number
  /** `first_event_ms`: from the execution's start to the first text delta from the model. */
  firstEventMs: number
}

export async function runOnce(api: Api, input = INPUT): Promise<Answered> {
  const start = now()
  const response = await fetch(`${api.url}/api/v1/agents/${api.agentUuid}/run`, {
    method: 'POST',
    headers: headersOf(api),
    body: runBody(input, false),
  })
  const text = await response.text()
  const elapsed = now() - start
  if (response.status !== 200) throw new Error(`run: HTTP ${response.status} ${text.slice(0, 300)}`)
  const { data } = JSON.parse(text) as { data: { run: { status: string; output: string; latency_ms: number; first_event_ms: number } } }
  if (data.run.status !== 'succeeded' || data.run.output !== `Echo: ${input}`)
    throw new Error(`run: ${data.run.status} ${JSON.stringify(data.run.output)}`)
  return { elapsed, latencyMs: data.run.latency_ms, firstEventMs: data.run.first_event_ms }
}

/** (c)/(d) A background run followed over SSE; times in ms from the POST's start. */
interface Followed {
  runUuid: string
  /** The 202. */
  accepted: number
  /** The first `text.delta` event. */
  firstDelta: number
  /** The end of the stream. */
  end: number
  events: number
}

/** What went wrong with a followed run, for the error counts of (d). */
class FollowError extends Error {
  constructor(
    readonly kind: string,
    message: string,
  ) {
    super(message)
  }
}

async function followOnce(api: Api, input = INPUT): Promise<Followed> {
  const start = now()
  let response: Response
  try {
    response = await fetch(`${api.url}/api/v1/agents/${api.agentUuid}/run`, {
      method: 'POST',
      headers: headersOf(api),
      body: runBody(input, true),
    })
  } catch (error) {
    throw new FollowError('POST failed', String(error))
  }
  const text = await response.text()
  const accepted = now() - start
  if (response.status !== 202) throw new FollowError(`POST ${response.status}`, text.slice(0, 300))
  const runUuid = (JSON.parse(text) as { data: { run: { uuid: string } } }).data.run.uuid
  let stream: Response
  try {
    stream = await fetch(`${api.url}/api/v1/runs/${runUuid}/events`, {
      headers: { authorization: `Bearer ${api.token}`, accept: 'text/event-stream' },
    })
  } catch (error) {
    throw new FollowError('GET events failed', String(error))
  }
  if (stream.status !== 200 || !stream.body) throw new FollowError(`GET events ${stream.status}`, await stream.text())
  let firstDelta: number | undefined
  let buffer = ''
  let answer = ''
  let last = ''
  let events = 0
  const decoder = new TextDecoder()
  try {
    for await (const chunk of stream.body) {
      buffer += decoder.decode(chunk, { stream: true })
      for (let at = buffer.indexOf('\n\n'); at !== -1; at = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, at)
        buffer = buffer.slice(at + 2)
        let type = 'message'
        let data = ''
        for (const line of block.split('\n')) {
          if (line.startsWith('event:')) type = line.slice(6).trim()
          else if (line.startsWith('data:')) data += line.slice(5).trim()
        }
        if (data === '') continue
        events += 1
        last = type
        if (type === 'text.delta') {
          firstDelta ??= now() - start
          answer += (JSON.parse(data) as { data: { text: string } }).data.text
        } else if (type === 'error' || type === 'run.failed') throw new FollowError(`event ${type}`, data.slice(0, 300))
      }
    }
  } catch (error) {
    if (error instanceof FollowError) throw error
    throw new FollowError('stream broke', String(error))
  }
  const end = now() - start
  if (last !== 'run.succeeded') throw new FollowError('no run.succeeded', `last event ${last || 'none'}`)
  if (firstDelta === undefined) throw new FollowError('no text.delta', 'no text.delta event')
  if (answer !== `Echo: ${input}`) throw new FollowError('wrong answer', JSON.stringify(answer))
  return { runUuid, accepted, firstDelta, end, events }
}

/** `promise`'s value, or the error it failed with. */
const settled = <T>(promise: Promise<T>): Promise<T | Error> =>
  promise.catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))))

/** Errors by kind, with the first message of each kind. */
interface ErrorCounts {
  count: number
  kinds: Record<string, number>
  samples: Record<string, string>
}

/** How many of `outcomes` are errors, by kind (printed with a sample message of each). */
function countErrors(outcomes: unknown[]): ErrorCounts {
  const kinds: Record<string, number> = {}
  const samples: Record<string, string> = {}
  let count = 0
  for (const outcome of outcomes) {
    if (!(outcome instanceof Error)) continue
    count += 1
    const kind = outcome instanceof FollowError ? outcome.kind : outcome.message.slice(0, 80)
    kinds[kind] = (kinds[kind] ?? 0) + 1
    samples[kind] ??= outcome.message.slice(0, 300)
  }
  if (count) console.warn(`\n${count} failed: ${JSON.stringify(samples)}`)
  return { count, kinds, samples }
}

/** `times` sequential calls of `once`. */
export async function sequential<T>(times: number, once: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = []
  for (let index = 0; index < times; index++) results.push(await once(index))
  return results
}

/** autocannon against `options` at C connections: a 1 s warm-up, then the measured run. */
async function cannonAt(options: autocannon.Options, pids: { service?: number; upstream: number }): Promise<CannonSummary> {
  const run = (seconds: number) => autocannon({ ...options, connections: settings.connections, pipelining: 1, duration: seconds })
  await run(settings.cannonWarmupSeconds)
  const service0 = pids.service ? cpuSeconds(pids.service) : null
  const upstream0 = cpuSeconds(pids.upstream)
  const result = await run(settings.durationSeconds)
  const service1 = pids.service ? cpuSeconds(pids.service) : null
  const upstream1 = cpuSeconds(pids.upstream)
  const perRequest = (a: number | null, b: number | null) =>
    a === null || b === null || result.requests.total === 0 ? null : ((b - a) * 1000) / result.requests.total
  return {
    connections: settings.connections,
    seconds: settings.durationSeconds,
    requests: result.requests.total,
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    serviceCpuMsPerRequest: perRequest(service0, service1),
    upstreamCpuMsPerRequest: perRequest(upstream0, upstream1),
  }
}

// ---------------------------------------------------------------------------------------------
// Memory

interface MemoryPoint {
  /** Resident set, bytes, as left. */
  rss: number | null
  /** V8 heap used, bytes, as left. */
  heapUsed: number | null
  /** The same after a full GC. */
  rssAfterGc: number | null
  heapUsedAfterGc: number | null
}

async function memoryPoint(pid: number, inspector: Inspector | null): Promise<MemoryPoint> {
  const rss = memoryOf(pid)?.rss ?? null
  const heapUsed = inspector ? await inspector.heapUsed() : null
  if (inspector) await inspector.collectGarbage()
  return {
    rss,
    heapUsed,
    rssAfterGc: inspector ? (memoryOf(pid)?.rss ?? null) : null,
    heapUsedAfterGc: inspector ? await inspector.heapUsed() : null,
  }
}

interface Round {
  runs: number
  errors: number
  errorKinds: Record<string, number>
  /** The first message of each kind. */
  errorSamples: Record<string, string>
  /** Stored runs whose status is not `succeeded` (read back through `GET /api/v1/runs/{uuid}`). */
  notSucceeded: number
  wallMs: number
  accepted: Summary
  firstDelta: Summary
  end: Summary
  peakRss: number | null
  peakHeapUsed: number | null
  after: MemoryPoint
}

async function streamsRound(api: Api, pid: number, inspector: Inspector | null): Promise<Round> {
  resetPeak(pid)
  let peakRss = 0
  let peakHeap = 0
  const rssTimer = setInterval(() => (peakRss = Math.max(peakRss, memoryOf(pid)?.rss ?? 0)), 20)
  let heapBusy = false
  const heapTimer = setInterval(() => {
    if (!inspector || heapBusy) return
    heapBusy = true
    void inspector
      .heapUsed()
      .then((used) => (peakHeap = Math.max(peakHeap, used)))
      .finally(() => (heapBusy = false))
  }, 100)
  const start = now()
  const outcomes = await Promise.all(
    Array.from({ length: settings.streams }, (_, index) => settled(followOnce(api, `${INPUT} (${index})`))),
  )
  const wallMs = now() - start
  clearInterval(rssTimer)
  clearInterval(heapTimer)
  const hwm = memoryOf(pid)?.peak ?? null
  const done = outcomes.filter((outcome): outcome is Followed => !(outcome instanceof Error))
  const { kinds: errorKinds, samples: errorSamples } = countErrors(outcomes)
  await sleep(settings.settleSeconds * 1000)
  const after = await memoryPoint(pid, inspector)
  // The stored runs, read back (after the memory reading, so as not to disturb it).
  let notSucceeded = 0
  for (let at = 0; at < done.length; at += 20) {
    const statuses = await Promise.all(
      done.slice(at, at + 20).map(async ({ runUuid }) => {
        const response = await fetch(`${api.url}/api/v1/runs/${runUuid}`, { headers: { authorization: `Bearer ${api.token}` } })
        return response.ok
          ? (JSON.parse(await response.text()) as { data: { run: { status: string } } }).data.run.status
          : `HTTP ${response.status}`
      }),
    )
    notSucceeded += statuses.filter((status) => status !== 'succeeded').length
  }
  return {
    runs: outcomes.length,
    errors: outcomes.length - done.length,
    errorKinds,
    errorSamples,
    notSucceeded,
    wallMs,
    accepted: summarise(done.map((d) => d.accepted)),
    firstDelta: summarise(done.map((d) => d.firstDelta)),
    end: summarise(done.map((d) => d.end)),
    peakRss: peakRss === 0 ? hwm : Math.max(peakRss, hwm ?? 0),
    peakHeapUsed: inspector ? Math.max(peakHeap, after.heapUsed ?? 0) : null,
    after,
  }
}

// ---------------------------------------------------------------------------------------------
// SQL of one run

interface SqlProfile {
  runs: number
  /** Per run answered when done, and per background run followed over SSE. */
  answered: SqlPerRun
  followed: SqlPerRun
  /**
   * Followed streams that ended without their last events through the proxy: the run's status is
   * final before its last events are stored, and a follower that reads the log in between stops.
   */
  truncatedStreams: number
  /** One run of each kind (the median of 5 by its end), statement by statement, in ms from the POST. */
  timelines: { answered: TimelineRow[]; followed: TimelineRow[] }
}

/** A line of a run's timeline: a client mark (`ms` 0) or a statement cycle. */
interface TimelineRow {
  atMs: number
  ms: number
  what: string
}

/** Records `times` runs of `once` with their statement timelines; keeps the run whose end is the median. */
async function medianTimeline(
  counter: SqlCounter,
  times: number,
  once: () => Promise<{ endMs: number; marks: { atMs: number; what: string }[] }>,
): Promise<TimelineRow[]> {
  const recorded: { endMs: number; rows: TimelineRow[] }[] = []
  for (let index = 0; index < times; index++) {
    await sleep(100)
    const start = now()
    counter.record()
    const run = await once().catch(() => null)
    await sleep(100)
    if (!run) {
      counter.timeline()
      continue // a truncated stream (see truncatedStreams): not a timeline
    }
    const statements = counter
      .timeline()
      .map((entry) => ({ atMs: entry.startMs - start, ms: entry.endMs - entry.startMs, what: `\`${entry.shape}\`` }))
    const rows = [...run.marks.map((mark) => ({ ...mark, ms: 0 })), ...statements].sort((a, b) => a.atMs - b.atMs)
    recorded.push({ endMs: run.endMs, rows })
  }
  recorded.sort((a, b) => a.endMs - b.endMs)
  return recorded[Math.floor(recorded.length / 2)]?.rows ?? []
}

interface SqlPerRun {
  statements: number
  roundTrips: number
  serverMs: number
  /** Statements per run by shape, most frequent first. */
  byShape: { shape: string; perRun: number }[]
  /** Events stored per run (`runs.events_count`) and `insert into run_events` statements per run. */
  eventInserts: number
}

function perRun(counts: SqlCounts, runs: number): SqlPerRun {
  const byShape = [...counts.byShape.entries()]
    .map(([shape, count]) => ({ shape, perRun: count / runs }))
    .sort((a, b) => b.perRun - a.perRun || a.shape.localeCompare(b.shape))
  const eventInserts = byShape.filter((row) => /insert into run_events/i.test(row.shape)).reduce((sum, row) => sum + row.perRun, 0)
  return {
    statements: counts.statements / runs,
    roundTrips: counts.roundTrips / runs,
    serverMs: counts.serverMs / runs,
    byShape,
    eventInserts,
  }
}

async function profileSql(bench: Bench, api: Api, upstreamUrl: string): Promise<SqlProfile> {
  const { counter, url } = await SqlCounter.start(bench.databaseUrl)
  bench.closers.push(() => counter.close())
  const service = await startRunsService(bench, { databaseUrl: url }, upstreamUrl)
  const profiled = { ...api, url: service.url }
  try {
    await sequential(10, () => runOnce(profiled))
    await sequential(10, () => followOnce(profiled).catch(() => undefined))
    const runs = settings.profileRuns
    await sleep(200)
    counter.take()
    await sequential(runs, () => runOnce(profiled))
    await sleep(200)
    const answered = perRun(counter.take(), runs)
    // The proxy slows every statement down: a stream cut short (see truncatedStreams) is counted, not fatal.
    let truncatedStreams = 0
    await sequential(runs, () =>
      followOnce(profiled).catch((error: unknown) => {
        if (!(error instanceof FollowError)) throw error
        truncatedStreams += 1
      }),
    )
    await sleep(500)
    const followed = perRun(counter.take(), runs)
    const timelines = {
      answered: await medianTimeline(counter, 5, async () => {
        const run = await runOnce(profiled)
        return {
          endMs: run.elapsed,
          marks: [
            { atMs: 0, what: '**POST sent**' },
            { atMs: run.elapsed, what: '**200 answer read**' },
          ],
        }
      }),
      followed: await medianTimeline(counter, 5, async () => {
        const run = await followOnce(profiled)
        return {
          endMs: run.end,
          marks: [
            { atMs: 0, what: '**POST sent** (background)' },
            { atMs: run.accepted, what: '**202 answer read**, GET events sent' },
            { atMs: run.firstDelta, what: '**first `text.delta` read**' },
            { atMs: run.end, what: '**stream ended**' },
          ],
        }
      }),
    }
    return { runs, answered, followed, truncatedStreams, timelines }
  } finally {
    await stopService(bench, service)
  }
}

// ---------------------------------------------------------------------------------------------
// One mode

interface ModeResult {
  mode: Mode
  upstreamSequential: { first: Summary; full: Summary }
  upstreamCannon: CannonSummary
  runSequential: Summary
  /** The run's own `latency_ms` and `first_event_ms` in (b), and the request's time outside the execution. */
  runTimings: { execution: Summary; firstEvent: Summary; outsideExecution: Summary }
  runCannon: CannonSummary
  follow: {
    errors: ErrorCounts
    accepted: Summary
    firstDelta: Summary
    end: Summary
    eventsPerRun: number
  }
  /** Service CPU ms per run in the sequential phases of (b) and (c). */
  serviceCpuMsPerRun: { answered: number | null; followed: number | null }
  /** `GET /api/v1/ping`, sequential: the machine's yardstick (service CPU ms per request). */
  ping: { latency: Summary; serviceCpuMs: number | null }
  /** PostgreSQL only, through `pg` from here: `select 1` and a one-row autocommit insert (a WAL flush). */
  postgresYardstick: { select: Summary; commit: Summary } | null
  added: { runP50Ms: number; firstEventP50Ms: number; endP50Ms: number; cannonP50Ms: number }
  memory: { baseline: MemoryPoint; rounds: Round[]; peakResetWorked: boolean }
  sql: SqlProfile | null
  startupSeconds: number
}

const cpuDelta = (pid: number, before: number | null, runs: number) => {
  const after = cpuSeconds(pid)
  return before === null || after === null ? null : ((after - before) * 1000) / runs
}

async function measureMode(bench: Bench, mode: Mode, upstream: Child): Promise<ModeResult> {
  console.log(`\n== ${mode} ==`)
  const dataDir = mode === 'pglite' ? mkdtempSync(path.join(os.tmpdir(), 'aw-bench-runs-')) : null
  if (dataDir) bench.closers.push(async () => rmSync(dataDir, { recursive: true, force: true }))
  const inspectPort = await freePort()
  const startup = now()
  const service = await startRunsService(bench, dataDir ? { dataDir } : { databaseUrl: bench.databaseUrl }, upstream.url, inspectPort)
  const startupSeconds = (now() - startup) / 1000
  const pid = service.process.pid!
  const upstreamPid = upstream.process.pid!
  let inspector: Inspector | null = null
  try {
    const api = await runnerApi(service.url)

    const n = settings.sequential
    process.stdout.write(`warm-up (${settings.warmup} of each) ... `)
    await sequential(settings.warmup, () => upstreamOnce(upstream.url))
    await sequential(settings.warmup, () => runOnce(api))
    const warmupErrors = countErrors(await sequential(settings.warmup, () => settled(followOnce(api))))
    console.log(`done${warmupErrors.count ? ` (${warmupErrors.count} followed runs failed: ${JSON.stringify(warmupErrors.kinds)})` : ''}`)

    // A yardstick for this machine's state: the the quiet-machine figure of docs/benchmarks.md for ping is ~0.17 ms of service CPU.
    await sequential(settings.warmup, () => pingOnce(api))
    let cpu0 = cpuSeconds(pid)
    const ping = summarise(await sequential(n, () => pingOnce(api)))
    const pingCpu = cpuDelta(pid, cpu0, n)
    const postgresYardstick = mode === 'postgres' ? await measurePostgres(bench.databaseUrl) : null

    process.stdout.write(`(a) upstream direct: ${n} sequential ... `)
    const direct = await windowed(`${mode}:a`, () => sequential(n, () => upstreamOnce(upstream.url)))
    const upstreamSequential = { first: summarise(direct.map((d) => d.first)), full: summarise(direct.map((d) => d.full)) }
    process.stdout.write(`autocannon ${settings.connections} connections ${settings.durationSeconds} s ... `)
    const upstreamCannon = await cannonAt(
      {
        url: `${upstream.url}/chat/completions`,
        method: 'POST',
        headers: { authorization: 'Bearer sk-bench-runs', 'content-type': 'application/json' },
        body: upstreamBody(INPUT),
      },
      { upstream: upstreamPid },
    )
    console.log(`p50 ${fmt(upstreamSequential.full.p50, 2)} ms, ${fmt(upstreamCannon.requestsPerSecond)} req/s`)

    process.stdout.write(`(b) POST agents/{x}/run: ${n} sequential ... `)
    cpu0 = cpuSeconds(pid)
    const answered = await windowed(`${mode}:b`, () => sequential(n, () => runOnce(api)))
    const runSequential = summarise(answered.map((a) => a.elapsed))
    const runTimings = {
      execution: summarise(answered.map((a) => a.latencyMs)),
      firstEvent: summarise(answered.map((a) => a.firstEventMs)),
      outsideExecution: summarise(answered.map((a) => a.elapsed - a.latencyMs)),
    }
    const answeredCpu = cpuDelta(pid, cpu0, n)
    process.stdout.write(`autocannon ${settings.connections} connections ${settings.durationSeconds} s ... `)
    const runCannon = await windowed(`${mode}:b-cannon`, () =>
      cannonAt(
        { url: `${api.url}/api/v1/agents/${api.agentUuid}/run`, method: 'POST', headers: headersOf(api), body: runBody(INPUT, false) },
        { service: pid, upstream: upstreamPid },
      ),
    )
    console.log(`p50 ${fmt(runSequential.p50, 2)} ms, ${fmt(runCannon.requestsPerSecond)} runs/s`)

    process.stdout.write(`(c) background run + SSE: ${n} sequential ... `)
    cpu0 = cpuSeconds(pid)
    const followOutcomes = await windowed(`${mode}:c`, () => sequential(n, () => settled(followOnce(api))))
    const followedCpu = cpuDelta(pid, cpu0, n)
    const followed = followOutcomes.filter((outcome): outcome is Followed => !(outcome instanceof Error))
    const follow = {
      errors: countErrors(followOutcomes),
      accepted: summarise(followed.map((f) => f.accepted)),
      firstDelta: summarise(followed.map((f) => f.firstDelta)),
      end: summarise(followed.map((f) => f.end)),
      eventsPerRun: followed.reduce((sum, f) => sum + f.events, 0) / followed.length,
    }
    console.log(`first event p50 ${fmt(follow.firstDelta.p50, 2)} ms, end p50 ${fmt(follow.end.p50, 2)} ms`)

    process.stdout.write(
      `(d) ${settings.streams} concurrent streaming runs x ${settings.rounds}: baseline after ${settings.settleSeconds} s ... `,
    )
    // The inspector session opens only now, so that (a)-(c) ran without one attached.
    try {
      inspector = await Inspector.connect(inspectPort)
    } catch (error) {
      console.warn(`no heap readings (inspector: ${String(error)})`)
    }
    await sleep(settings.settleSeconds * 1000)
    const baseline = await memoryPoint(pid, inspector)
    const peakResetWorked = resetPeak(pid)
    const rounds: Round[] = []
    for (let round = 0; round < settings.rounds; round++) {
      process.stdout.write(`round ${round + 1} ... `)
      rounds.push(await windowed(`${mode}:d${round + 1}`, () => streamsRound(api, pid, inspector)))
    }
    console.log(`errors ${rounds.map((r) => r.errors + r.notSucceeded).join(', ')}`)

    inspector?.close()
    inspector = null
    await stopService(bench, service)

    let sql: SqlProfile | null = null
    if (mode === 'postgres' && settings.profileRuns > 0) {
      process.stdout.write(`SQL of one run (${settings.profileRuns} of each, through the counting proxy) ... `)
      sql = await profileSql(bench, api, upstream.url)
      console.log(
        `${fmt(sql.answered.statements, 1)} statements per run answered when done, ${fmt(sql.followed.statements, 1)} per followed run`,
      )
    }
    return {
      mode,
      upstreamSequential,
      upstreamCannon,
      runSequential,
      runTimings,
      runCannon,
      follow,
      serviceCpuMsPerRun: { answered: answeredCpu, followed: followedCpu },
      ping: { latency: ping, serviceCpuMs: pingCpu },
      postgresYardstick,
      added: {
        runP50Ms: runSequential.p50 - upstreamSequential.full.p50,
        firstEventP50Ms: follow.firstDelta.p50 - upstreamSequential.first.p50,
        endP50Ms: follow.end.p50 - upstreamSequential.full.p50,
        cannonP50Ms: runCannon.p50 - upstreamCannon.p50,
      },
      memory: { baseline, rounds, peakResetWorked },
      sql,
      startupSeconds,
    }
  } finally {
    inspector?.close()
    if (bench.children.includes(service)) await stopService(bench, service)
  }
}

// ---------------------------------------------------------------------------------------------
// Report

const ms = (value: number | null | undefined, digits = 2) =>
  value === null || value === undefined || Number.isNaN(value) ? 'n/a' : fmt(value, digits)
const mb = (bytes: number | null | undefined) =>
  bytes === null || bytes === undefined || Number.isNaN(bytes) ? 'n/a' : fmt(bytes / 1024 / 1024, 1)
const ratio = (value: number | null | undefined, base: number | null | undefined) => (value && base ? value / base : null)
const verdict = (pass: boolean) => (pass ? '**met**' : '**not met**')

interface Targets {
  run: boolean
  firstEvent: boolean
  noErrors: boolean
  memory: boolean | null
}

function targetsOf(result: ModeResult): Targets {
  const last = result.memory.rounds.at(-1)!
  const heap = ratio(last.after.heapUsedAfterGc, result.memory.baseline.heapUsedAfterGc)
  const rss = ratio(last.after.rssAfterGc, result.memory.baseline.rssAfterGc)
  return {
    run: result.added.runP50Ms <= ADDED_TARGET_MS,
    firstEvent: result.added.firstEventP50Ms <= ADDED_TARGET_MS,
    noErrors: result.follow.errors.count === 0 && result.memory.rounds.every((round) => round.errors === 0 && round.notSucceeded === 0),
    memory: heap === null || rss === null ? null : heap <= MEMORY_TARGET_RATIO && rss <= MEMORY_TARGET_RATIO,
  }
}

function modeMarkdown(result: ModeResult): string[] {
  const a = result.upstreamSequential
  const ac = result.upstreamCannon
  const b = result.runSequential
  const bc = result.runCannon
  const c = result.follow
  const cpu = (value: number | null) => (value === null ? 'n/a' : fmt(value, 2))
  const row = (name: string, s: Summary, extra = '') => `| ${name} | ${fmt(s.n)} | ${ms(s.p50)} | ${ms(s.p90)} | ${ms(s.p99)} | ${extra} |`
  const cannonRow = (name: string, s: CannonSummary) =>
    `| ${name} | ${fmt(s.requests)} | ${ms(s.p50, 1)} | ${ms(s.p90, 1)} | ${ms(s.p99, 1)} | ${fmt(s.requestsPerSecond)} req/s${s.non2xx || s.errors ? `, ${s.non2xx} non-2xx, ${s.errors} errors` : ''}; ` +
    `CPU/request: ${s.serviceCpuMsPerRequest === null ? '' : `service ${cpu(s.serviceCpuMsPerRequest)} ms, `}upstream ${cpu(s.upstreamCpuMsPerRequest)} ms |`
  const t = targetsOf(result)
  const lines = [
    `### ${result.mode === 'postgres' ? 'PostgreSQL' : 'PGlite (embedded)'}`,
    '',
    '| row | n | p50 ms | p90 ms | p99 ms | notes |',
    '| --- | ---: | ---: | ---: | ---: | --- |',
    row(
      '(ref) `GET /api/v1/ping`, sequential',
      result.ping.latency,
      `service CPU ${cpu(result.ping.serviceCpuMs)} ms/request (0.17 on a quiet machine: docs/benchmarks.md)`,
    ),
    ...(result.postgresYardstick
      ? [
          row('(ref) PostgreSQL `select 1` through `pg`', result.postgresYardstick.select, 'one round trip'),
          row(
            '(ref) PostgreSQL one-row insert, autocommit',
            result.postgresYardstick.commit,
            'a commit waits for the WAL flush (synchronous_commit on): the price of each committed write of a run',
          ),
        ]
      : []),
    row('(a) upstream direct, sequential: first chunk', a.first),
    row('(a) upstream direct, sequential: full answer', a.full),
    cannonRow(`(a) upstream direct, autocannon ${ac.connections} connections`, ac),
    row('(b) `POST agents/{x}/run`, sequential: answered when done', b, `service CPU ${cpu(result.serviceCpuMsPerRun.answered)} ms/run`),
    row(
      "(b) of which the model call (the run's `latency_ms`: from the execution's start to the model's last chunk)",
      result.runTimings.execution,
      `its \`first_event_ms\` p50 ${ms(result.runTimings.firstEvent.p50, 0)}; whole ms`,
    ),
    row(
      '(b) of which the rest (before: HTTP, checks, loads, launch transaction; after: answer and last events stored, answer read back)',
      result.runTimings.outsideExecution,
    ),
    cannonRow(`(b) \`POST agents/{x}/run\`, autocannon ${bc.connections} connections`, bc),
    row('(c) background run: 202 answered', c.accepted),
    row('(c) background run: first `text.delta` over SSE', c.firstDelta),
    row(
      '(c) background run: end of the stream (`run.succeeded`)',
      c.end,
      `${fmt(c.eventsPerRun, 1)} events/run; service CPU ${cpu(result.serviceCpuMsPerRun.followed)} ms/run` +
        (c.errors.count
          ? `; **${c.errors.count} of ${settings.sequential} failed**: ${Object.entries(c.errors.kinds)
              .map(([kind, count]) => `${kind} ${count}`)
              .join(', ')}`
          : '; no errors'),
    ),
    '',
    '| added by the service at p50 | service ms | upstream ms | added ms | target | |',
    '| --- | ---: | ---: | ---: | ---: | --- |',
    `| run answered when done: (b) - (a) full answer | ${ms(b.p50)} | ${ms(a.full.p50)} | ${ms(result.added.runP50Ms)} | ≤ ${ADDED_TARGET_MS} | ${verdict(t.run)} |`,
    `| first streamed event: (c) first \`text.delta\` - (a) first chunk | ${ms(c.firstDelta.p50)} | ${ms(a.first.p50)} | ${ms(result.added.firstEventP50Ms)} | ≤ ${ADDED_TARGET_MS} | ${verdict(t.firstEvent)} |`,
    `| (informative) end of the followed stream - (a) full answer | ${ms(c.end.p50)} | ${ms(a.full.p50)} | ${ms(result.added.endP50Ms)} | | |`,
    `| (informative) autocannon ${bc.connections} connections: (b) - (a) | ${ms(bc.p50, 1)} | ${ms(ac.p50, 1)} | ${ms(result.added.cannonP50Ms, 1)} | | |`,
    '',
  ]
  const base = result.memory.baseline
  lines.push(
    `(d) ${fmt(settings.streams)} concurrent streaming runs (background POST + SSE follow each), ${result.memory.rounds.length} rounds; memory of the service process in MB ` +
      `(baseline after warm-up and (a)-(c) and ${settings.settleSeconds} s of rest; "after" = ${settings.settleSeconds} s after the round; "GC" = then after a full GC):`,
    '',
    '| | runs | errors | wall s | first event p50 / p99 ms | end p50 / p99 ms | RSS | RSS after GC | heap used | heap used after GC |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    `| baseline | | | | | | ${mb(base.rss)} | ${mb(base.rssAfterGc)} | ${mb(base.heapUsed)} | ${mb(base.heapUsedAfterGc)} |`,
  )
  result.memory.rounds.forEach((round, index) => {
    const errors = round.errors + round.notSucceeded
    const kinds = Object.entries(round.errorKinds).map(([kind, count]) => `${kind}: ${count}`)
    if (round.notSucceeded) kinds.push(`stored not succeeded: ${round.notSucceeded}`)
    lines.push(
      `| round ${index + 1} peak | ${fmt(round.runs)} | ${errors}${kinds.length ? ` (${kinds.join(', ')})` : ''} | ${fmt(round.wallMs / 1000, 2)} | ` +
        `${ms(round.firstDelta.p50, 0)} / ${ms(round.firstDelta.p99, 0)} | ${ms(round.end.p50, 0)} / ${ms(round.end.p99, 0)} | ${mb(round.peakRss)} | | ${mb(round.peakHeapUsed)} | |`,
      `| round ${index + 1} after | | | | | | ${mb(round.after.rss)} (${ms(ratio(round.after.rss, base.rss), 2)}×) | ${mb(round.after.rssAfterGc)} (${ms(ratio(round.after.rssAfterGc, base.rssAfterGc), 2)}×) | ` +
        `${mb(round.after.heapUsed)} (${ms(ratio(round.after.heapUsed, base.heapUsed), 2)}×) | ${mb(round.after.heapUsedAfterGc)} (${ms(ratio(round.after.heapUsedAfterGc, base.heapUsedAfterGc), 2)}×) |`,
    )
  })
  const samples = { ...c.errors.samples, ...Object.assign({}, ...result.memory.rounds.map((round) => round.errorSamples)) } as Record<
    string,
    string
  >
  if (Object.keys(samples).length > 0) {
    lines.push(
      '',
      'Errors, the first of each kind:',
      '',
      ...Object.entries(samples).map(([kind, message]) => `- ${kind}: \`${message.replace(/`/g, "'")}\``),
    )
  }
  lines.push(
    '',
    `Targets: added at p50 ≤ ${ADDED_TARGET_MS} ms to a run ${verdict(t.run)} (${ms(result.added.runP50Ms)} ms), to the first event ${verdict(t.firstEvent)} (${ms(result.added.firstEventP50Ms)} ms); ` +
      `${fmt(settings.streams)} concurrent streaming runs (and the sequential ones of (c)) without error ${verdict(t.noErrors)}; memory back to baseline after a GC (heap used and RSS ≤ ${MEMORY_TARGET_RATIO}× baseline) ` +
      `${t.memory === null ? 'n/a (no readings)' : verdict(t.memory)}.`,
    '',
  )
  if (result.sql) {
    const s = result.sql
    const shapes = (p: SqlPerRun) =>
      p.byShape.slice(0, 12).map((row) => `| ${fmt(row.perRun, 2)} | \`${row.shape.replace(/\|/g, '\\|')}\` |`)
    lines.push(
      `SQL of one run (a second service whose PostgreSQL connections go through a counting proxy; ${s.runs} runs of each kind; server ms = from a statement cycle's first message to ReadyForQuery, summed, proxy hop included):`,
      '',
      '| run | statements | round trips | server ms | `insert into run_events` statements |',
      '| --- | ---: | ---: | ---: | ---: |',
      `| answered when done (b) | ${fmt(s.answered.statements, 1)} | ${fmt(s.answered.roundTrips, 1)} | ${fmt(s.answered.serverMs, 2)} | ${fmt(s.answered.eventInserts, 1)} |`,
      `| background + SSE follow (c) | ${fmt(s.followed.statements, 1)} | ${fmt(s.followed.roundTrips, 1)} | ${fmt(s.followed.serverMs, 2)} | ${fmt(s.followed.eventInserts, 1)} |`,
      '',
      ...(s.truncatedStreams
        ? [
            `⚠ ${s.truncatedStreams} of ${s.runs} followed streams through the proxy ended without \`run.succeeded\`: the run's status was final before its last events were stored ` +
              '(src/runs/run-executor.ts settles the run, then appends `message` and `run.succeeded`), and a follower whose read of the log came in between stopped (src/runs/run-log.ts `followRun`).',
            '',
          ]
        : []),
      "One run answered when done through the proxy (the median of 5), in ms from the POST; a statement = one round trip, from its first message to ReadyForQuery; the gaps are the service's own work:",
      '',
      '| at ms | ms | what |',
      '| ---: | ---: | --- |',
      ...s.timelines.answered.map((row) => `| ${fmt(row.atMs, 2)} | ${row.ms ? fmt(row.ms, 2) : ''} | ${row.what.replace(/\|/g, '\\|')} |`),
      '',
      'One background run followed over SSE through the proxy (the median of 5):',
      '',
      '| at ms | ms | what |',
      '| ---: | ---: | --- |',
      ...s.timelines.followed.map((row) => `| ${fmt(row.atMs, 2)} | ${row.ms ? fmt(row.ms, 2) : ''} | ${row.what.replace(/\|/g, '\\|')} |`),
      '',
      'Statements per run answered when done, by shape:',
      '',
      '| per run | statement |',
      '| ---: | --- |',
      ...shapes(s.answered),
      '',
      'Statements per background run followed over SSE, by shape:',
      '',
      '| per run | statement |',
      '| ---: | --- |',
      ...shapes(s.followed),
      '',
    )
  }
  return lines
}

// ---------------------------------------------------------------------------------------------

async function main(bench: Bench) {
  const loadBefore = os.loadavg()
  const started = now()
  const upstream = await startUpstreamChild()
  bench.children.push(upstream)
  console.log(`upstream ${upstream.url}`)
  const results: ModeResult[] = []
  for (const mode of settings.modes) results.push(await measureMode(bench, mode, upstream))

  const date = new Date().toISOString()
  const machine = machineOf(bench.postgres)
  const md = [
    `Runs benchmark of ${date}: ${machine.line}; PostgreSQL ${bench.postgres}; load average ${loadBefore.map((load) => load.toFixed(2)).join(', ')} before, ` +
      `${machine.json.loadAverage.map((load) => load.toFixed(2)).join(', ')} after; ${fmt((now() - started) / 1000)} s in all.`,
    `Upstream: test/helpers/upstream.ts in its own process, answering \`Echo: <input>\` at once (streamed, one write). ` +
      `N = ${settings.sequential} sequential after ${settings.warmup} warm-up requests of each kind; autocannon ${settings.connections} connections, ${settings.durationSeconds} s after a 1 s warm-up.`,
    '',
    ...results.flatMap(modeMarkdown),
  ].join('\n')
  console.log(`\n${md}`)
  const json = {
    date,
    machine: machine.json,
    loadAverageBefore: loadBefore,
    settings,
    targets: Object.fromEntries(
      results.map((result) => [
        result.mode,
        { addedTargetMs: ADDED_TARGET_MS, memoryTargetRatio: MEMORY_TARGET_RATIO, ...targetsOf(result) },
      ]),
    ),
    results: results.map((result) => ({
      ...result,
      sql: result.sql && {
        ...result.sql,
        answered: { ...result.sql.answered },
        followed: { ...result.sql.followed },
      },
    })),
    rows: windows,
  }
  writeResults(['runs-latest'], json, md + '\n')
}

// Only when run as the script: bench/tracing.ts imports the requests above.
if (process.argv[1] && path.resolve(process.argv[1]) === import.meta.filename) await runBench('aw_bench_runs', main)
