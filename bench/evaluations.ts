/**
 * `npm run bench:evaluations`: an evaluation (docs/api/evaluations.md, "Evaluations") of a dataset
 * of N items against an agent whose model is the local OpenAI-compatible upstream of the tests
 * (bench/runs-upstream.ts, in its own process, answering `Echo: <last user message>` at once), on
 * PostgreSQL (a fresh database `aw_bench_evaluations_*`) or PGlite (a temporary DATA_DIR), with
 * one service process that also works the job queue (`WORKER` on, its default; or, with
 * BENCH_EVALUATION_WORKER=separate, an API process and a worker process):
 *
 *   - the dataset's N items are added through the API (`POST datasets/{x}/items`, up to 1,000 per
 *     request), each `{input: "Question <i> ...", expected_output: "Echo: <input>"}`, so every
 *     scorer passes;
 *   - `GET /api/v1/agents/{agent_uuid}` is sent at a steady BENCH_EVALUATION_RATE per second (open
 *     loop, like bench/command-room.ts: one every 1/rate s, whether or not the previous ones were
 *     answered): BENCH_EVALUATION_IDLE seconds before the evaluation ("idle"), then from
 *     `POST evaluations` until it has succeeded ("during");
 *   - `POST /api/v1/evaluations` (202) with the scorers exact_match, contains and max_latency_ms at
 *     BENCH_EVALUATION_CONCURRENCY, then `GET evaluations/{x}` every 200 ms until it has ended:
 *     the wall time from the POST to the first answer saying `succeeded`, and items per second;
 *     the CPU seconds the service and the database's backends used meanwhile (per item);
 *   - the checks: the evaluation succeeded, progress done = total = N and failed = 0, every result
 *     `succeeded` with a run_uuid of its own (all distinct), every scorer's pass rate 1, and the
 *     agent's `usage_count` the same as before.
 *
 * Targets (docs/benchmarks.md): 500 items at concurrency 4 finish in under 30 s; the p99 of
 * `GET agents/{x}` while the evaluation runs under 50 ms. The exit code is 0 whether or not a
 * target is met (a measurement, not a test), 1 on an error or a failed check.
 *
 * Environment:
 *   BENCH_DATABASE_URL             admin connection of the PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres)
 *   BENCH_EVALUATION_MODES         "postgres", "pglite" or both, comma-separated (default postgres)
 *   BENCH_EVALUATION_ITEMS         N, items of the dataset (default 500, at most 10,000)
 *   BENCH_EVALUATION_CONCURRENCY   the evaluation's concurrency, 1..10 (default 4)
 *   BENCH_EVALUATION_RATE          `GET agents/{x}` per second (default 20)
 *   BENCH_EVALUATION_IDLE          seconds of idle sampling before the evaluation (default 5)
 *   BENCH_EVALUATION_TIMEOUT       seconds to wait for the evaluation to end (default 600)
 *   BENCH_EVALUATION_WORKER        "separate": on PostgreSQL, the API process does not work the queue (`WORKER=false`) and
 *                                  one `npm run worker` process runs the evaluation (to tell the event loop's share of
 *                                  the API's latency from the machine's); default "same"
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { cpuSeconds, cpuSince, cpuSnapshot } from './cpu.ts'
import { type Bench, CHILD_ENV, expectOk, fmt, machineOf, runBench, signUp, summarise, writeResults } from './harness.ts'
import { type Child, startChild, startUpstreamChild, stopChild } from './processes.ts'
import { startProcess } from '../test/helpers/processes.ts'
import { startSampler } from './sampler.ts'

/** A positive whole number from the environment, else `fallback`. */
function envCount(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback)
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a whole number >= 1`)
  return value
}

type Mode = 'postgres' | 'pglite'
const settings = {
  modes: (process.env.BENCH_EVALUATION_MODES ?? 'postgres')
    .split(',')
    .map((mode) => mode.trim())
    .filter(Boolean) as Mode[],
  items: envCount('BENCH_EVALUATION_ITEMS', 500),
  concurrency: envCount('BENCH_EVALUATION_CONCURRENCY', 4),
  rate: envCount('BENCH_EVALUATION_RATE', 20),
  idleSeconds: envCount('BENCH_EVALUATION_IDLE', 5),
  timeoutSeconds: envCount('BENCH_EVALUATION_TIMEOUT', 600),
  worker: (process.env.BENCH_EVALUATION_WORKER ?? 'same') as 'same' | 'separate',
}
if (settings.worker !== 'same' && settings.worker !== 'separate') throw new Error('BENCH_EVALUATION_WORKER: "same" or "separate"')
for (const mode of settings.modes)
  if (mode !== 'postgres' && mode !== 'pglite') throw new Error(`BENCH_EVALUATION_MODES: unknown mode ${mode}`)
if (settings.items > 10_000) throw new Error('BENCH_EVALUATION_ITEMS: at most 10,000 (an evaluation takes up to 10,000 items)')
if (settings.concurrency > 10) throw new Error('BENCH_EVALUATION_CONCURRENCY: 1..10')

/** 500 items at concurrency 4 within this wall time. */
const WALL_TARGET_MS = 30_000
/** `GET agents/{x}` p99 during the evaluation within this. */
const API_P99_TARGET_MS = 50
const POLL_MS = 200
const ITEMS_PER_REQUEST = 1_000
const SCORERS = [{ type: 'exact_match' }, { type: 'contains' }, { type: 'max_latency_ms', value: 5_000 }]

/** What one mode measured. */
interface Outcome {
  mode: Mode
  /** Whether the API process worked the queue itself or a worker process did. */
  worker: 'same' | 'separate'
  items: number
  concurrency: number
  /** Adding the items: ms for all the `POST datasets/{x}/items` requests. */
  addItemsMs: number
  /** From `POST evaluations` until an answer said it had ended. */
  wallMs: number
  /** From the evaluation's `started_at` to its `finished_at` (the service's clock). */
  startedToFinishedMs: number | null
  /** From the POST's answer to `started_at`: how long the job waited in the queue. */
  queuedMs: number | null
  itemsPerSecond: number
  status: string
  progress: { total: number; done: number; failed: number }
  summary: unknown
  latencyMs: unknown
  results: { count: number; succeeded: number; distinctRunUuids: number }
  usageCount: { before: number; after: number }
  apiIdle: ReturnType<typeof summarise> & { failed: number }
  apiDuring: ReturnType<typeof summarise> & { failed: number }
  /** CPU seconds during the evaluation: the service, PostgreSQL's backends of the database (null on PGlite), the upstream. */
  cpu: { service: number | null; postgres: number | null; upstream: number | null }
  /** Seconds the API process's main thread ran on a CPU and waited on a run queue for one, during the evaluation. */
  apiSched: { running: number; waiting: number } | null
  /** CPU ms per item of the service and of PostgreSQL. */
  cpuMsPerItem: { service: number | null; postgres: number | null }
  loadAverage: { before: number[]; after: number[] }
  checks: string[]
}

async function api<T>(url: string, token: string, what: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  const response = await fetch(url, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${token}`, ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  })
  return (JSON.parse((await expectOk(response, what)).toString('utf8')) as { data: T }).data
}

/** The service on PostgreSQL or PGlite, its default model the upstream. */
async function startEvaluationService(
  bench: Bench,
  target: { databaseUrl: string } | { dataDir: string },
  upstreamUrl: string,
  separateWorker: boolean,
): Promise<{ service: Child; worker: Child | undefined }> {
  const env = {
    ...CHILD_ENV,
    ...('databaseUrl' in target ? { DATABASE_URL: target.databaseUrl, DATA_DIR: '' } : { DATABASE_URL: '', DATA_DIR: target.dataDir }),
    APP_KEY: `base64:${randomBytes(32).toString('base64')}`,
    APP_URL: '',
    REDIS_URL: '',
    SIGN_IN_MAX_PER_ADDRESS: '1000000',
    SIGN_IN_MAX_PER_EMAIL: '1000000',
    OPENAI_API_KEY: 'sk-bench-evaluations',
    OPENAI_BASE_URL: upstreamUrl,
  }
  const service = await startChild(
    'service',
    'src/server.ts',
    { ...env, ...(separateWorker ? { WORKER: 'false' } : {}) },
    { readyPath: '/ready', timeoutMs: 120_000 },
  )
  bench.children.push(service)
  let worker: Child | undefined
  if (separateWorker) {
    // A worker prints `worker started` at info; it has no HTTP port to poll.
    const proc = await startProcess('src/worker.ts', { ...env, LOG_LEVEL: 'info' }, /worker started/)
    proc.child.stdout!.resume()
    proc.child.stderr!.resume()
    worker = { name: 'worker', url: '', process: proc.child }
    bench.children.push(worker)
  }
  return { service, worker }
}

/**
 * Seconds a process's main thread (its event loop) has spent on a CPU and waiting on a run queue
 * for one so far (Linux's /proc/<pid>/task/<pid>/schedstat), or null: on a busy machine, the wait
 * is time the event loop had work ready and no core to run it on.
 */
function schedSeconds(pid: number): { running: number; waiting: number } | null {
  try {
    const [running, waiting] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').trim().split(' ').map(Number)
    return { running: running / 1e9, waiting: waiting / 1e9 }
  } catch {
    return null
  }
}

async function backendPids(admin: pg.Client, database: string): Promise<number[]> {
  const result = await admin.query<{ pid: number }>(
    "select pid from pg_stat_activity where datname = $1 and backend_type = 'client backend'",
    [database],
  )
  return result.rows.map((row) => row.pid)
}

async function measureMode(bench: Bench, mode: Mode, upstream: Child): Promise<Outcome> {
  let dataDir: string | undefined
  if (mode === 'pglite') dataDir = mkdtempSync(path.join(os.tmpdir(), 'aw-bench-evaluations-'))
  const separate = settings.worker === 'separate' && mode === 'postgres'
  const { service, worker } = await startEvaluationService(
    bench,
    dataDir ? { dataDir } : { databaseUrl: bench.databaseUrl },
    upstream.url,
    separate,
  )
  /** CPU seconds so far of the processes that serve and run the evaluation (the API process, and the worker). */
  const serviceCpu = () => {
    const api = cpuSeconds(service.process.pid!)
    const work = worker ? cpuSeconds(worker.process.pid!) : 0
    return api === null || work === null ? null : api + work
  }
  try {
    const base = `${service.url}/api/v1`
    const { token } = await signUp(
      service.url,
      'Bench Evaluator',
      `bench-evaluations-${mode}-${randomBytes(4).toString('hex')}@example.com`,
    )
    const agent = await api<{ uuid: string }>(`${base}/agents`, token, 'POST agents', {
      method: 'POST',
      body: { name: 'Bench evaluated agent', instruction: 'Answer briefly.' },
    })
    const dataset = await api<{ uuid: string }>(`${base}/datasets`, token, 'POST datasets', {
      method: 'POST',
      body: { name: 'Bench questions' },
    })
    const addStart = performance.now()
    for (let from = 0; from < settings.items; from += ITEMS_PER_REQUEST) {
      const items = Array.from({ length: Math.min(ITEMS_PER_REQUEST, settings.items - from) }, (_, k) => {
        const input = `Question ${from + k + 1}: what is the capital of country number ${from + k + 1}?`
        return { input, expected_output: `Echo: ${input}`, metadata: { n: from + k + 1 } }
      })
      await api(`${base}/datasets/${dataset.uuid}/items`, token, 'POST datasets/{x}/items', { method: 'POST', body: { items } })
    }
    const addItemsMs = performance.now() - addStart
    console.log(`(${mode}) ${fmt(settings.items)} items added in ${fmt(addItemsMs)} ms`)

    // Warm the sampled path and the run path (one run of the agent outside the evaluation), outside the windows.
    const agentUrl = `${base}/agents/${agent.uuid}`
    for (let i = 0; i < 50; i++) await api(agentUrl, token, 'GET agents/{x}')
    await api(`${agentUrl}/run`, token, 'POST agents/{x}/run', { method: 'POST', body: { input: 'warm-up' } })
    const usageBefore = (await api<{ usage_count: number }>(agentUrl, token, 'GET agents/{x}')).usage_count

    const loadBefore = os.loadavg()
    const sampler = startSampler(agentUrl, token, settings.rate)
    await sleep(settings.idleSeconds * 1000)
    const pgPids = mode === 'postgres' ? await backendPids(bench.admin, bench.database) : []
    const pg0 = cpuSnapshot(pgPids)
    const service0 = serviceCpu()
    const sched0 = schedSeconds(service.process.pid!)
    const upstream0 = cpuSeconds(upstream.process.pid!)
    const postedAt = Date.now()
    const start = performance.now()
    const created = await api<{ uuid: string }>(`${base}/evaluations`, token, 'POST evaluations', {
      method: 'POST',
      body: {
        name: 'Bench evaluation',
        dataset_uuid: dataset.uuid,
        agent_uuid: agent.uuid,
        scorers: SCORERS,
        concurrency: settings.concurrency,
      },
    })
    const answeredAt = Date.now()
    type Evaluation = {
      status: string
      progress: { total: number; done: number; failed: number }
      summary: unknown
      latency_ms: unknown
      started_at: string | null
      finished_at: string | null
    }
    let evaluation: Evaluation
    let reported = performance.now()
    for (;;) {
      await sleep(POLL_MS)
      evaluation = await api<Evaluation>(`${base}/evaluations/${created.uuid}`, token, 'GET evaluations/{x}')
      if (!['queued', 'running'].includes(evaluation.status)) break
      if (performance.now() - reported >= 5_000) {
        reported = performance.now()
        console.log(`(${mode}) ${evaluation.status}: ${evaluation.progress.done} of ${evaluation.progress.total} done`)
      }
      if (performance.now() - start > settings.timeoutSeconds * 1000)
        throw new Error(`(${mode}) the evaluation did not end within ${settings.timeoutSeconds} s`)
    }
    const wallMs = performance.now() - start
    const endedAt = Date.now()
    const service1 = serviceCpu()
    const sched1 = schedSeconds(service.process.pid!)
    const upstream1 = cpuSeconds(upstream.process.pid!)
    const pgSeconds = mode === 'postgres' ? cpuSince(pg0, cpuSnapshot(pgPids)) : null
    const samples = await sampler.stop()
    const loadAfter = os.loadavg()

    // Every result, through the API.
    const runUuids: string[] = []
    let resultCount = 0
    let succeeded = 0
    for (let page = 1; ; page++) {
      const response = await fetch(`${base}/evaluations/${created.uuid}/results?page=${page}&per_page=100`, {
        headers: { authorization: `Bearer ${token}` },
      })
      const body = JSON.parse((await expectOk(response, 'GET evaluations/{x}/results')).toString('utf8')) as {
        data: { status: string; run_uuid: string | null }[]
      }
      for (const result of body.data) {
        resultCount++
        if (result.status === 'succeeded') succeeded++
        if (result.run_uuid) runUuids.push(result.run_uuid)
      }
      if (body.data.length < 100) break
    }
    const usageAfter = (await api<{ usage_count: number }>(agentUrl, token, 'GET agents/{x}')).usage_count

    const window = (from: number, to: number) => {
      const inside = samples.filter((sample) => sample.at >= from && sample.at < to)
      return {
        ...summarise(inside.filter((sample) => sample.ok).map((sample) => sample.ms)),
        failed: inside.filter((sample) => !sample.ok).length,
      }
    }
    const n = settings.items
    const serviceSeconds = service0 === null || service1 === null ? null : service1 - service0
    const checks: string[] = []
    if (evaluation.status !== 'succeeded') checks.push(`status ${evaluation.status}, not succeeded`)
    if (evaluation.progress.total !== n || evaluation.progress.done !== n)
      checks.push(`progress ${JSON.stringify(evaluation.progress)}, not ${n} of ${n}`)
    if (evaluation.progress.failed !== 0) checks.push(`${evaluation.progress.failed} items failed`)
    if (resultCount !== n || succeeded !== n) checks.push(`${resultCount} results, ${succeeded} succeeded, not ${n}`)
    if (runUuids.length !== n || new Set(runUuids).size !== n)
      checks.push(`${runUuids.length} run uuids, ${new Set(runUuids).size} distinct, not ${n}`)
    const summary = evaluation.summary as { pass_rate: number }[] | null
    if (!summary || summary.length !== SCORERS.length || summary.some((entry) => entry.pass_rate !== 1))
      checks.push(`summary ${JSON.stringify(summary)}: not every scorer passed every item`)
    if (usageAfter !== usageBefore) checks.push(`the agent's usage_count went from ${usageBefore} to ${usageAfter}`)
    const ms = (at: string | null) => (at === null ? null : new Date(at).getTime())
    const startedAt = ms(evaluation.started_at)
    const finishedAt = ms(evaluation.finished_at)
    return {
      mode,
      worker: separate ? 'separate' : 'same',
      items: n,
      concurrency: settings.concurrency,
      addItemsMs,
      wallMs,
      startedToFinishedMs: startedAt !== null && finishedAt !== null ? finishedAt - startedAt : null,
      queuedMs: startedAt !== null ? startedAt - answeredAt : null,
      itemsPerSecond: n / (wallMs / 1000),
      status: evaluation.status,
      progress: evaluation.progress,
      summary: evaluation.summary,
      latencyMs: evaluation.latency_ms,
      results: { count: resultCount, succeeded, distinctRunUuids: new Set(runUuids).size },
      usageCount: { before: usageBefore, after: usageAfter },
      apiIdle: window(0, postedAt),
      apiDuring: window(postedAt, endedAt),
      cpu: {
        service: serviceSeconds,
        postgres: pgSeconds,
        upstream: upstream0 === null || upstream1 === null ? null : upstream1 - upstream0,
      },
      apiSched: sched0 && sched1 ? { running: sched1.running - sched0.running, waiting: sched1.waiting - sched0.waiting } : null,
      cpuMsPerItem: {
        service: serviceSeconds === null ? null : (serviceSeconds * 1000) / n,
        postgres: pgSeconds === null ? null : (pgSeconds * 1000) / n,
      },
      loadAverage: { before: loadBefore, after: loadAfter },
      checks,
    }
  } finally {
    for (const child of [worker, service]) {
      if (!child) continue
      await stopChild(child)
      bench.children.splice(bench.children.indexOf(child), 1)
    }
    if (dataDir) rmSync(dataDir, { recursive: true, force: true })
  }
}

const one = (value: number | null, digits = 1) => (value === null ? '—' : fmt(value, digits))
const loads = (values: number[]) => values.map((value) => value.toFixed(2)).join(' ')

await runBench('aw_bench_evaluations', async (bench: Bench) => {
  const upstream = await startUpstreamChild()
  bench.children.push(upstream)
  const outcomes: Outcome[] = []
  for (const mode of settings.modes) {
    const o = await measureMode(bench, mode, upstream)
    outcomes.push(o)
    console.log(
      `(${mode}, queue worked by ${o.worker === 'same' ? 'the API process' : 'a worker process'}) ${o.status}: ${fmt(o.items)} items at concurrency ${o.concurrency} in ${fmt(o.wallMs)} ms (${fmt(o.itemsPerSecond, 1)} items/s; ` +
        `started -> finished ${one(o.startedToFinishedMs, 0)} ms, queued ${one(o.queuedMs, 0)} ms); ` +
        `GET agents/{x} p50/p99 idle ${fmt(o.apiIdle.p50, 1)}/${fmt(o.apiIdle.p99, 1)} ms, during ${fmt(o.apiDuring.p50, 1)}/${fmt(o.apiDuring.p99, 1)} ms; ` +
        `CPU ms per item: service ${one(o.cpuMsPerItem.service)}, PostgreSQL ${one(o.cpuMsPerItem.postgres)}; ` +
        `API main thread on a CPU ${one(o.apiSched?.running ?? null)} s, waiting for one ${one(o.apiSched?.waiting ?? null)} s; load ${loads(o.loadAverage.before)} -> ${loads(o.loadAverage.after)}` +
        (o.checks.length ? `; FAILED CHECKS: ${o.checks.join('; ')}` : '; checks passed'),
    )
    if (o.checks.length) process.exitCode = 1
  }

  const machine = machineOf(bench.postgres)
  const date = new Date().toISOString()
  const lines = [
    `# Evaluations benchmark, ${date}`,
    '',
    `${machine.line}, PostgreSQL ${bench.postgres}; GET /api/v1/agents/{x} at ${settings.rate}/s.`,
    '',
    '| mode (queue worked by) | items, concurrency | wall time | items/s | GET agents/{x} p50 / p99 idle | p50 / p99 during | CPU ms per item: service / PostgreSQL | API main thread s on a CPU / waiting for one | load average before -> after | checks |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |',
    ...outcomes.map(
      (o) =>
        `| ${o.mode} (${o.worker === 'same' ? 'the API process' : 'a worker process'}) | ${fmt(o.items)}, ${o.concurrency} | ${fmt(o.wallMs / 1000, 2)} s | ${fmt(o.itemsPerSecond, 1)} | ` +
        `${fmt(o.apiIdle.p50, 1)} / ${fmt(o.apiIdle.p99, 1)} ms | ${fmt(o.apiDuring.p50, 1)} / ${fmt(o.apiDuring.p99, 1)} ms | ` +
        `${one(o.cpuMsPerItem.service)} / ${one(o.cpuMsPerItem.postgres)} | ${one(o.apiSched?.running ?? null)} / ${one(o.apiSched?.waiting ?? null)} | ${loads(o.loadAverage.before)} -> ${loads(o.loadAverage.after)} | ` +
        `${o.checks.length ? `FAILED: ${o.checks.join('; ')}` : 'passed'} |`,
    ),
    '',
    `Targets: ${fmt(settings.items)} items at concurrency ${settings.concurrency} within ${WALL_TARGET_MS / 1000} s (for 500 at 4); GET agents/{x} p99 during under ${API_P99_TARGET_MS} ms.`,
  ]
  console.log('\n' + lines.join('\n'))
  writeResults(['evaluations-latest'], { date, machine: machine.json, settings, scorers: SCORERS, outcomes }, lines.join('\n') + '\n')
})
