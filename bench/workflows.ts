/**
 * `npm run bench:workflows`: workflow executions triggered by webhooks, on
 * PostgreSQL, against the foundation benchmark's baselines (bench/run.ts) measured in the same run,
 * all over 127.0.0.1.
 *
 *   (c)   `GET /api/v1/ping`: a procedure without database, through the REST layer (stack ceiling)
 *   (d)   `GET /health`: a plain Fastify route of the service
 *   (w3)  `POST /api/v1/hooks/{webhook_token}` with `{"name":"Bench"}` of an active workflow
 *         webhook_trigger -> set (`{greeting: "='Hello ' & body.name"}`, mode replace) ->
 *         respond_to_webhook: the caller gets `{"greeting":"Hello Bench"}`
 *   (w20) the same request to an active workflow webhook_trigger -> 18 set nodes in a line ->
 *         respond_to_webhook (20 nodes): the first set builds the greeting and `step: 1`, each next
 *         one copies the greeting and adds 1 to `step`; the caller gets `{"greeting":"Hello Bench","step":18}`
 *
 * Parts:
 * 1. A fresh database `aw_bench_workflows_*` on BENCH_DATABASE_URL (dropped at the end, also on
 *    errors and signals; bench/harness.ts), the real service as a child process (`WORKER=true`,
 *    `NODE_ENV=production`, `LOG_LEVEL=warn`; migrations run), one user signed up.
 * 2. Through the REST API: the node types checked in `GET /api/v1/workflow-node-types`, both
 *    workflows created active with `POST /api/v1/workflows`; each webhook URL is the response's
 *    `webhook_url` (built from APP_URL, which defaults to the child's own address) and is called
 *    once to check its answer, which every answer of the load must then equal (autocannon's
 *    `expectBody`: another body counts as a mismatch).
 * 3. Each row with the foundation benchmark's measurement (`measure` in bench/harness.ts):
 *    autocannon at BENCH_CONNECTIONS (default 50), pipelining 1, BENCH_WARMUP seconds of warm-up
 *    (default 2) then BENCH_DURATION seconds (default 10): requests/s (mean of the per-second
 *    samples), p50, p97.5 and p99 latency, non-2xx, errors, the CPU one request cost the service
 *    process and the PostgreSQL backends of the benchmark database, and the cores the rest of the
 *    machine kept busy meanwhile. Ratios to (c) and (d). During a webhook row (warm-up included),
 *    `pg_stat_activity` is sampled every 100 ms: what the service's connections to the benchmark
 *    database were doing (running, waiting on a lock or the WAL, idle).
 * 4. After each webhook row, once no execution of its workflow is `queued` or `running` any more
 *    (a webhook is answered when respond_to_webhook runs; the execution is stored right after), the
 *    database check: the `workflow_executions` rows of the workflow against the 2xx answers
 *    (smoke call + warm-up + measured run) and the requests sent; every row `succeeded`, in mode
 *    `webhook`, with 3 (resp. 20) `workflow_execution_data` rows, all `succeeded`. autocannon stops
 *    at the end of a run with requests in flight: the service may still run those without anyone
 *    counting the answer, so the rows may exceed the 2xx answers by at most the requests sent and
 *    never answered. Fewer rows than 2xx answers are lost executions.
 * 5. A markdown table printed and written with the JSON to bench/results/workflows-latest.{json,md}
 *    (and a dated copy).
 *
 * Targets: (w3) at least 1,000 executions/s and p99 under
 * 50 ms at 50 concurrent callers. The exit code is 0 whether or not they are met (a measurement,
 * not a test), 1 on an error.
 *
 * Environment: BENCH_DATABASE_URL, BENCH_DURATION, BENCH_WARMUP, BENCH_CONNECTIONS,
 * BENCH_KEEP_DATABASE=1 (bench/harness.ts); BENCH_ONLY (rows to run, e.g. "c,w3"; default
 * "c,d,w3,w20"); BENCH_PROFILE (a folder: the service runs under `node --cpu-prof` writing there).
 */
import { randomBytes } from 'node:crypto'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { isDeepStrictEqual } from 'node:util'
import pg from 'pg'
import {
  type Bench,
  cannonSettings as settings,
  envList,
  expectOk,
  fmt,
  machineOf,
  measure,
  ms,
  pct,
  type Row,
  runBench,
  serviceBaselines,
  signUp,
  startService,
  type Target,
  us,
  writeResults,
} from './harness.ts'

/** Target (docs/benchmarks.md, "Workflows benchmark"): the 3-node webhook workflow's executions per second ... */
const TARGET_EXECUTIONS_PER_SECOND = 1_000
/** ... and its p99 latency, at ... */
const TARGET_P99_MS = 50
/** ... concurrent callers. */
const TARGET_CONNECTIONS = 50
/** Set nodes of the long workflow: with its trigger and its respond node, 20 nodes. */
const LONG_SET_NODES = 18
/** Interval of the `pg_stat_activity` samples taken during a webhook row. */
const WAIT_SAMPLE_MS = 100
/** Longest wait for the executions of a row to be stored after its load. */
const SETTLE_TIMEOUT_MS = 60_000

const only = envList('BENCH_ONLY', 'c,d,w3,w20')
/** BENCH_PROFILE: a folder; the service runs under `node --cpu-prof` writing there (rows' windows are in the results JSON). */
const profileDir = process.env.BENCH_PROFILE ? path.resolve(process.env.BENCH_PROFILE) : undefined
const REQUEST_BODY = JSON.stringify({ name: 'Bench' })

type Graph = { nodes: Record<string, unknown>[]; edges: { source: string; target: string }[] }

/** The nodes in a line, each one's output the next one's input. */
function line(nodes: Record<string, unknown>[]): Graph {
  return { nodes, edges: nodes.slice(1).map((node, i) => ({ source: String(nodes[i].id), target: String(node.id) })) }
}

const trigger = { id: 'start', type: 'webhook_trigger', parameters: {} }
const reply = { id: 'reply', type: 'respond_to_webhook', parameters: {} }

/** (w3): webhook_trigger -> set -> respond_to_webhook. */
const shortGraph = line([
  trigger,
  { id: 'greet', type: 'set', parameters: { values: { greeting: "='Hello ' & body.name" }, mode: 'replace' } },
  reply,
])

/** (w20): webhook_trigger -> 18 set nodes -> respond_to_webhook. */
const longGraph = line([
  trigger,
  ...Array.from({ length: LONG_SET_NODES }, (_, i) => ({
    id: `set_${i + 1}`,
    type: 'set',
    parameters:
      i === 0
        ? { values: { greeting: "='Hello ' & body.name", step: 1 }, mode: 'replace' }
        : { values: { greeting: '=greeting', step: '=step + 1' }, mode: 'replace' },
  })),
  reply,
])

/** A workflow under load: its row's target and what its executions must look like. */
interface Hook {
  key: 'w3' | 'w20'
  uuid: string
  url: string
  nodes: number
  /** The answer of the smoke call, which every answer under load must equal. */
  answer: string
}

/** The database check of one webhook row (part 4 of the module comment). */
interface Check {
  key: string
  nodes: number
  /** 2xx answers counted: the smoke call, the warm-up and the measured run. */
  answered2xx: number
  /** Requests written: the same three. */
  sent: number
  /** Sent and never answered (in flight when autocannon stopped, or errors). */
  unanswered: number
  executions: number
  /** Executions by status. */
  statuses: Record<string, number>
  succeeded: number
  webhookMode: number
  /** Executions with exactly `nodes` data rows, all `succeeded`. */
  complete: number
  /** Executions not settled when the check gave up waiting. */
  unsettled: number
  /** Executions queued or running when the load stopped (answered, not stored yet, or in flight). */
  unsettledAtStop: number
  /** Milliseconds from the stop until none was queued or running (20 ms resolution). */
  drainMs: number
  /** 2xx answers without an execution row (executions < answered2xx). */
  lost: number
  /** The stored `duration_ms` of the executions (start to end, as the running process measured it), p50 and p99. */
  durationP50Ms: number | null
  durationP99Ms: number | null
  /** Failed executions' errors, by code and message (up to 5). */
  errors: { code: string | null; message: string | null; count: number }[]
  pass: boolean
}

/** A row with both ratios, and for a webhook row what the database's connections were doing. */
type WorkflowRow = Row & { vsHealth: number | null; waits: Waits | null }

/** Mean number of the benchmark database's client connections in each state over the samples. */
interface Waits {
  samples: number
  /** `active` with no wait event: running (on a CPU or waiting for one). */
  running: number
  /** `active`, by `wait_event_type:wait_event` (e.g. `Lock:transactionid`, `IO:WALSync`). */
  waiting: Record<string, number>
  /** `idle` (waiting for the service's next statement) and `idle in transaction`. */
  idle: number
  idleInTransaction: number
}

/**
 * Samples `pg_stat_activity` every {@link WAIT_SAMPLE_MS} ms until `stop` is called: what the
 * service's connections to the benchmark database (its pool, pg-boss's) were doing.
 */
function sampleWaits(db: pg.Client): { stop: () => Promise<Waits> } {
  const totals = { samples: 0, running: 0, idle: 0, idleInTransaction: 0, waiting: new Map<string, number>() }
  let stopped = false
  const loop = (async () => {
    while (!stopped) {
      const { rows } = await db.query<{ state: string | null; wait: string | null; n: number }>(
        `select state, wait_event_type || ':' || wait_event as wait, count(*)::int as n from pg_stat_activity
         where datname = current_database() and backend_type = 'client backend' and pid <> pg_backend_pid()
         group by 1, 2`,
      )
      totals.samples++
      for (const row of rows) {
        if (row.state === 'active' && !row.wait) totals.running += row.n
        else if (row.state === 'active') totals.waiting.set(row.wait!, (totals.waiting.get(row.wait!) ?? 0) + row.n)
        else if (row.state === 'idle') totals.idle += row.n
        else if (row.state?.startsWith('idle in transaction')) totals.idleInTransaction += row.n
      }
      await sleep(WAIT_SAMPLE_MS)
    }
  })()
  return {
    stop: async () => {
      stopped = true
      await loop
      const mean = (n: number) => Math.round((n / Math.max(1, totals.samples)) * 100) / 100
      return {
        samples: totals.samples,
        running: mean(totals.running),
        waiting: Object.fromEntries([...totals.waiting].sort((a, b) => b[1] - a[1]).map(([wait, n]) => [wait, mean(n)])),
        idle: mean(totals.idle),
        idleInTransaction: mean(totals.idleInTransaction),
      }
    },
  }
}

/** Creates an active workflow through the API; its uuid and webhook URL (on the child's own address). */
async function createWorkflow(serviceUrl: string, token: string, name: string, graph: Graph): Promise<{ uuid: string; url: string }> {
  const response = await fetch(`${serviceUrl}/api/v1/workflows`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name, is_active: true, ...graph }),
  })
  const { data } = JSON.parse((await expectOk(response, `create workflow ${name}`)).toString('utf8')) as {
    data: { uuid: string; is_active: boolean; webhook_url: string | null }
  }
  if (!data.is_active || !data.webhook_url) throw new Error(`workflow ${name}: not active or no webhook_url`)
  // The URL is built from APP_URL (by default the child's HOST:PORT); keep its path on the child's address.
  return { uuid: data.uuid, url: `${serviceUrl}${new URL(data.webhook_url).pathname}` }
}

/** Calls a webhook once; its answer (bytes as sent), which must be 200 with `expected`'s JSON (any member order). */
async function smoke(url: string, expected: unknown): Promise<string> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: REQUEST_BODY })
  const text = (await expectOk(response, `POST ${url}`)).toString('utf8')
  if (response.status !== 200 || !isDeepStrictEqual(JSON.parse(text), expected)) {
    throw new Error(`webhook answered ${response.status} ${text}, expected 200 ${JSON.stringify(expected)}`)
  }
  return text
}

/** Waits until no execution of the workflow is `queued` or `running`; how many still are when it gives up. */
async function settle(db: pg.Client, uuid: string): Promise<{ left: number; atStop: number; drainMs: number }> {
  const began = Date.now()
  const deadline = began + SETTLE_TIMEOUT_MS
  let atStop: number | undefined
  for (;;) {
    const { rows } = await db.query<{ n: number }>(
      `select count(*)::int as n from workflow_executions
       where workflow_id = (select id from workflows where uuid = $1) and status in ('queued', 'running')`,
      [uuid],
    )
    atStop ??= rows[0].n
    if (rows[0].n === 0 || Date.now() > deadline) return { left: rows[0].n, atStop, drainMs: Date.now() - began }
    await sleep(20)
  }
}

/** The database check of a webhook row (module comment, part 4). */
async function check(db: pg.Client, hook: Hook, row: Row): Promise<Check> {
  const { left: unsettled, atStop, drainMs } = await settle(db, hook.uuid)
  const [summary] = (
    await db.query<{
      executions: number
      succeeded: number
      webhook_mode: number
      complete: number
      p50: number | null
      p99: number | null
    }>(
      `select count(*)::int as executions,
         count(*) filter (where e.status = 'succeeded')::int as succeeded,
         count(*) filter (where e.mode = 'webhook')::int as webhook_mode,
         count(*) filter (where d.nodes = $2 and d.succeeded = $2)::int as complete,
         percentile_disc(0.5) within group (order by e.duration_ms) as p50,
         percentile_disc(0.99) within group (order by e.duration_ms) as p99
       from workflow_executions e
       cross join lateral (
         select count(*)::int as nodes, count(*) filter (where x.status = 'succeeded')::int as succeeded
         from workflow_execution_data x where x.execution_id = e.id) d
       where e.workflow_id = (select id from workflows where uuid = $1)`,
      [hook.uuid, hook.nodes],
    )
  ).rows
  const statuses = Object.fromEntries(
    (
      await db.query<{ status: string; n: number }>(
        `select status, count(*)::int as n from workflow_executions
         where workflow_id = (select id from workflows where uuid = $1) group by status order by status`,
        [hook.uuid],
      )
    ).rows.map((r) => [r.status, r.n]),
  )
  const errors = (
    await db.query<{ code: string | null; message: string | null; count: number }>(
      `select error_code as code, error as message, count(*)::int as count from workflow_executions
       where workflow_id = (select id from workflows where uuid = $1) and status <> 'succeeded'
       group by 1, 2 order by 3 desc limit 5`,
      [hook.uuid],
    )
  ).rows
  const answered2xx = 1 + row.warmup.ok2xx + row.ok2xx
  const sent = 1 + row.warmup.sent + row.sent
  const unanswered = row.warmup.sent - row.warmup.requests + (row.sent - row.requests)
  const lost = Math.max(0, answered2xx - summary.executions)
  const pass =
    lost === 0 &&
    unsettled === 0 &&
    summary.executions <= sent &&
    summary.succeeded === summary.executions &&
    summary.webhook_mode === summary.executions &&
    summary.complete === summary.executions
  return {
    key: hook.key,
    nodes: hook.nodes,
    answered2xx,
    sent,
    unanswered,
    executions: summary.executions,
    statuses,
    succeeded: summary.succeeded,
    webhookMode: summary.webhook_mode,
    complete: summary.complete,
    unsettled,
    unsettledAtStop: atStop,
    drainMs,
    lost,
    durationP50Ms: summary.p50,
    durationP99Ms: summary.p99,
    errors,
    pass,
  }
}

function markdown(rows: WorkflowRow[], checks: Check[], meta: { date: string; machine: string; load: string }, verdicts: string[]): string {
  const codes = (row: Row) =>
    Object.entries(row.statusCodes)
      .filter(([code]) => !code.startsWith('2'))
      .map(([code, n]) => `${n}×${code}`)
      .join(', ')
  const lines = [
    `Workflows benchmark of ${meta.date}: ${meta.machine}. ${meta.load}`,
    `autocannon: ${settings.connections} connections, pipelining ${settings.pipelining}, ${settings.warmupSeconds} s warm-up then ` +
      `${settings.durationSeconds} s per row; the service with WORKER=true, LOG_LEVEL=warn.`,
    '',
    '| row | request | req/s | p50 ms | p97.5 ms | p99 ms | vs (c) | vs (d) | non-2xx | errors | server CPU µs/req | PostgreSQL CPU µs/req | other load |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (row) =>
        `| (${row.key}) ${row.name} | \`${row.request}\` | ${fmt(row.requestsPerSecond)} | ${ms(row.latencyP50Ms)} | ` +
        `${ms(row.latencyP975Ms)} | ${ms(row.latencyP99Ms)} | ${pct(row.vsPing)} | ${pct(row.vsHealth)} | ` +
        `${fmt(row.non2xx)}${codes(row) ? ` (${codes(row)})` : ''} | ${fmt(row.errors)}${row.timeouts ? ` (${row.timeouts} timeouts)` : ''}` +
        `${row.mismatches ? `, ${row.mismatches} wrong bodies` : ''} | ` +
        `${us(row.serverCpuUsPerRequest)} | ${us(row.postgresCpuUsPerRequest)} | ` +
        `${row.otherLoadCores === null ? 'n/a' : fmt(row.otherLoadCores, 2)} |`,
    ),
    '',
    'req/s of a webhook row = executions answered per second. Latency has 1 ms resolution. CPU per request: of the service',
    'process, and of the PostgreSQL backends connected to the benchmark database; "other load": cores that everything else',
    'on the machine kept busy during the row (noise).',
  ]
  if (checks.length) {
    lines.push(
      '',
      'Executions stored (after the load, once none was queued or running):',
      '',
      '| row | 2xx answers (smoke + warm-up + measured) | sent, unanswered at the stop | `workflow_executions` rows | by status | with all node rows succeeded | lost | stored duration p50 / p99 ms | unsettled at the stop, drained in ms | check |',
      '| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | --- |',
      ...checks.map(
        (c) =>
          `| (${c.key}) | ${fmt(c.answered2xx)} | ${fmt(c.sent)}, ${fmt(c.unanswered)} | ${fmt(c.executions)} | ` +
          `${Object.entries(c.statuses)
            .map(([status, n]) => `${status} ${fmt(n)}`)
            .join(', ')} | ${fmt(c.complete)} (${c.nodes} each) | ${fmt(c.lost)} | ` +
          `${c.durationP50Ms ?? '—'} / ${c.durationP99Ms ?? '—'} | ${fmt(c.unsettledAtStop)}, ${fmt(c.drainMs)} | ${c.pass ? 'ok' : '**MISMATCH**'} |`,
      ),
      '',
      'A row passes the check when no 2xx answer lacks its execution, no execution is left queued or running, there are no more',
      `executions than requests sent, and every execution is \`succeeded\`, in mode \`webhook\`, with one \`succeeded\` row of`,
      '`workflow_execution_data` per node. Executions beyond the 2xx answers are requests in flight when autocannon stopped.',
    )
    for (const c of checks) {
      for (const error of c.errors) lines.push(`- (${c.key}) ${error.count}× ${error.code ?? 'no code'}: ${error.message ?? ''}`)
    }
  }
  const sampled = rows.filter((row) => row.waits)
  if (sampled.length) {
    lines.push(
      '',
      `The service's connections to the benchmark database during the webhook rows (\`pg_stat_activity\` every ${WAIT_SAMPLE_MS} ms, ` +
        'warm-up included; mean number of connections in each state; "running": active without a wait event):',
      '',
    )
    for (const row of sampled) {
      const w = row.waits!
      const total = w.running + w.idle + w.idleInTransaction + Object.values(w.waiting).reduce((sum, n) => sum + n, 0)
      const parts = [
        `running ${fmt(w.running, 1)}`,
        ...Object.entries(w.waiting).map(([wait, n]) => `${wait} ${fmt(n, 1)}`),
        `idle ${fmt(w.idle, 1)}`,
        ...(w.idleInTransaction ? [`idle in transaction ${fmt(w.idleInTransaction, 1)}`] : []),
      ]
      lines.push(`- (${row.key}) ${fmt(total, 1)} connections, ${w.samples} samples: ${parts.join(', ')}`)
    }
  }
  lines.push('', ...verdicts, '')
  return lines.join('\n')
}

async function main(bench: Bench) {
  const service = await startService(bench, profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [], { WORKER: 'true' })
  const db = new pg.Client({ connectionString: bench.databaseUrl })
  await db.connect()
  bench.closers.push(() => db.end())
  const waitsDb = new pg.Client({ connectionString: bench.databaseUrl })
  await waitsDb.connect()
  bench.closers.push(() => waitsDb.end())

  const me = await signUp(service.url, 'Bench User', `bench-${randomBytes(4).toString('hex')}@example.com`)
  const authorization = { authorization: `Bearer ${me.token}` }
  const types = JSON.parse(
    (
      await expectOk(
        await fetch(`${service.url}/api/v1/workflow-node-types`, { headers: authorization }),
        'GET /api/v1/workflow-node-types',
      )
    ).toString('utf8'),
  ) as { data: { type: string }[] }
  for (const type of ['webhook_trigger', 'set', 'respond_to_webhook']) {
    if (!types.data.some((t) => t.type === type)) throw new Error(`node type ${type} is not in GET /api/v1/workflow-node-types`)
  }

  const hooks: Hook[] = []
  for (const [key, graph, expected] of [
    ['w3', shortGraph, { greeting: 'Hello Bench' }],
    ['w20', longGraph, { greeting: 'Hello Bench', step: LONG_SET_NODES }],
  ] as const) {
    if (!only.has(key)) continue
    const created = await createWorkflow(service.url, me.token, `bench ${graph.nodes.length} nodes`, graph)
    hooks.push({ key, ...created, nodes: graph.nodes.length, answer: await smoke(created.url, expected) })
  }

  const pid = service.process.pid!
  const baselines = serviceBaselines(service)
  const targets: Target[] = [baselines.ping, baselines.health]
  for (const hook of hooks) {
    targets.push({
      key: hook.key,
      name: hook.key === 'w3' ? 'webhook -> set -> respond (3 nodes)' : `webhook -> ${LONG_SET_NODES} set -> respond (20 nodes)`,
      request: 'POST /api/v1/hooks/{token}',
      url: hook.url,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: REQUEST_BODY,
      expectBody: hook.answer,
      pid,
    })
  }

  const load0 = os.loadavg()
  const rows: WorkflowRow[] = []
  const checks: Check[] = []
  for (const target of targets) {
    if (!only.has(target.key)) continue
    const hook = hooks.find((h) => h.key === target.key)
    const sampler = hook ? sampleWaits(waitsDb) : null
    const row = await measure(bench, target)
    const waits = sampler ? await sampler.stop() : null
    rows.push({ ...row, vsHealth: null, waits })
    if (hook) {
      const result = await check(db, hook, row)
      checks.push(result)
      console.log(
        `  executions: ${result.executions} stored for ${result.answered2xx} 2xx answers (${result.unanswered} unanswered at the stop), ` +
          `${result.succeeded} succeeded, ${result.complete} with ${hook.nodes} node rows -> ${result.pass ? 'ok' : 'MISMATCH'}`,
      )
    }
  }
  const load1 = os.loadavg()

  const ping = rows.find((row) => row.key === 'c')
  const health = rows.find((row) => row.key === 'd')
  for (const row of rows) {
    row.vsPing = ping ? row.requestsPerSecond / ping.requestsPerSecond : null
    row.vsHealth = health ? row.requestsPerSecond / health.requestsPerSecond : null
  }

  const short = rows.find((row) => row.key === 'w3')
  const at =
    settings.connections === TARGET_CONNECTIONS
      ? ''
      : ` (measured at ${settings.connections} connections; the target is at ${TARGET_CONNECTIONS})`
  const throughputPass = short ? short.requestsPerSecond >= TARGET_EXECUTIONS_PER_SECOND : null
  const latencyPass = short ? short.latencyP99Ms < TARGET_P99_MS : null
  const verdicts = short
    ? [
        `Target (w3) >= ${fmt(TARGET_EXECUTIONS_PER_SECOND)} executions/s: ${fmt(short.requestsPerSecond)}/s -> **${throughputPass ? 'PASS' : 'FAIL'}**${at}`,
        '',
        `Target (w3) p99 < ${TARGET_P99_MS} ms at ${TARGET_CONNECTIONS} callers: p99 ${fmt(short.latencyP99Ms)} ms -> **${latencyPass ? 'PASS' : 'FAIL'}**${at}`,
      ]
    : ['Targets of (w3): not measured (run row w3).']
  if (checks.some((c) => !c.pass)) verdicts.push('', '**Executions check: MISMATCH** (see the executions table).')
  else if (checks.length) verdicts.push('', 'Executions check: every 2xx answer has its execution, all succeeded with all their nodes.')

  const date = new Date().toISOString()
  const machine = machineOf(bench.postgres)
  const load = `Load average (1 min) ${fmt(load0[0], 2)} before the rows, ${fmt(load1[0], 2)} after.`
  const md = markdown(rows, checks, { date, machine: `${machine.line}, PostgreSQL ${bench.postgres}`, load }, verdicts)
  console.log(`\n${md}`)

  const json = {
    date,
    machine: machine.json,
    loadAverage: { before: load0, after: load1 },
    settings,
    rows,
    checks,
    targets: {
      executionsPerSecond: { value: short?.requestsPerSecond ?? null, threshold: TARGET_EXECUTIONS_PER_SECOND, pass: throughputPass },
      p99Ms: { value: short?.latencyP99Ms ?? null, threshold: TARGET_P99_MS, connections: settings.connections, pass: latencyPass },
      executionsCheck: checks.length ? checks.every((c) => c.pass) : null,
    },
  }
  writeResults([`workflows-${date.replace(/[:.]/g, '-')}`, 'workflows-latest'], json, md)
}

await runBench('aw_bench_workflows', main)
