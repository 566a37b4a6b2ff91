/**
 * `npm run bench:metrics`: the five metrics endpoints at a million rows, on PostgreSQL.
 *
 * 1. Creates a fresh database `aw_bench_metrics_*` (dropped at the end, also on errors and signals),
 *    starts the real service as a child process (migrations run), signs up one user and creates 2
 *    more workspaces through the API (3 workspaces, the user owns all of them).
 * 2. Seeds with set-based SQL through `pg`: 100,000 agents, workflows, workflow executions and
 *    threads spread over the 3 workspaces and 365 days, and BENCH_MESSAGES (default 1,000,000)
 *    messages over 365 days in 2,000 of those threads. Then VACUUM ANALYZE (what autovacuum would
 *    do to the loaded tables, done before the measurements rather than during them).
 * 3. For each endpoint and calculation, over the last 90 days of the user's primary workspace
 *    (after three warm-up requests of each; median of BENCH_REPEAT rounds, default 5, after one
 *    more warm-up round; each round runs every column once, interleaved): the endpoint uncached
 *    (`Cache-Control: no-cache`) against the bare SQL of the same aggregation (the plain
 *    `GROUP BY date_trunc(...)` with the same workspace, date range and `deleted_at` filters,
 *    no scope, no gap filling) through `pg`; beside them the same request from the cache, the
 *    service's own statement through `pg` and the HTTP floor (`GET /api/v1/ping` with the same
 *    client). Targets: endpoint / bare SQL <= 1.3; the messages daily series < 150 ms.
 * 4. A cached metrics answer (the messages daily series and the messages accumulated count) against
 *    `GET /api/v1/ping` (c) with autocannon (50 connections, 2 s warm-up, BENCH_DURATION s, default
 *    10, in BENCH_SLICES turns that alternate the three rows), in the same run. Target: >= 80% of (c).
 * 5. Prints a markdown table and writes bench/results/metrics-latest.{json,md}, with the EXPLAIN
 *    ANALYZE of the service's statement (built by src/metrics/metrics.*.ts, run here through `pg`
 *    with the same `$n` parameters) for each endpoint's daily count, and of the bare SQL.
 *
 * HTTP requests go through `node:http` with a keep-alive agent (one connection, as `pg` uses one),
 * so the endpoint column measures the service rather than the overhead of `fetch`.
 *
 * Environment: BENCH_DATABASE_URL (admin URL, default postgres://postgres@127.0.0.1:5432/postgres),
 * BENCH_MESSAGES, BENCH_REPEAT, BENCH_DURATION, BENCH_SLICES, BENCH_WARMUP, BENCH_CONNECTIONS,
 * BENCH_PARTS (`table`, `cannon` or both, default both), BENCH_PROFILE (a folder: the service runs
 * under `node --cpu-prof` writing there), BENCH_KEEP_DATABASE=1 / BENCH_REUSE_DATABASE=<name>
 * (bench/harness.ts: keep the seeded database, run again on it without seeding).
 * The exit code is 0 whether or not the targets are met: this is a measurement, not a test.
 */
import { randomBytes } from 'node:crypto'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { type Calculation, CALCULATIONS, type TMetricCommon } from '../src/metrics/metrics.schema.ts'
import { metricStatement } from '../src/metrics/metrics.query.ts'
import { METRIC_SOURCES } from '../src/metrics/metrics.service.ts'
import { cpuSeconds } from './cpu.ts'
import { agent, median, ok, request, seed, timeInterleaved, timeIt } from './metrics-support.ts'
import {
  type Bench,
  cannon,
  cannonSettings,
  envList,
  envNumber,
  expectOk,
  failures,
  fmt,
  machineOf,
  runBench,
  signIn,
  signUp,
  startService,
  writeResults,
} from './harness.ts'
import type { ResourceCtx } from '../src/context.ts'

const settings = {
  messages: Math.floor(envNumber('BENCH_MESSAGES', 1_000_000)),
  rowsPerTable: 100_000,
  messageThreads: 2_000,
  repeat: Math.floor(envNumber('BENCH_REPEAT', 5)),
  days: 90,
  ...cannonSettings,
}
/** BENCH_PARTS: which measurements to run, `table` (per endpoint) and/or `cannon` (cached vs (c)). */
const parts = envList('BENCH_PARTS', 'table,cannon')
/** BENCH_PROFILE: a folder; the service runs under `node --cpu-prof` writing there. */
const profileDir = process.env.BENCH_PROFILE ? path.resolve(process.env.BENCH_PROFILE) : undefined
const RATIO_TARGET = 1.3
const MESSAGES_DAILY_TARGET_MS = 150
const CACHED_TARGET = 0.8

const ENDPOINTS = [
  { path: 'agents/metrics', table: 'agents', column: 'usage_count', service: 'agents' },
  { path: 'workflows/metrics', table: 'workflows', column: 'trigger_count', service: 'workflows' },
  { path: 'workflow-executions/metrics', table: 'workflow_executions', column: 'duration_ms', service: 'executions' },
  { path: 'threads/metrics', table: 'threads', column: 'messages_count', service: 'threads' },
  { path: 'messages/metrics', table: 'messages', column: 'total_tokens', service: 'messages' },
] as const
type Endpoint = (typeof ENDPOINTS)[number]

interface Row {
  endpoint: string
  calculation: Calculation
  rowsInRange: number
  endpointMs: number
  /** The same request served from the metrics cache (serial, median): the fixed cost without SQL. */
  cachedMs: number
  /** The service's own statement for the request, through `pg` with its `$n` parameters (median). */
  serviceSqlMs: number
  sqlMs: number
  ratio: number
  endpointRunsMs: number[]
  sqlRunsMs: number[]
  /** The endpoint's total equals the bare SQL's (count or average rounded to 4 decimals). */
  sameTotal: boolean
}

/** The plain aggregation: `GROUP BY date_trunc(...)` for series, one aggregate otherwise; same filters, no scope. */
function bareSql(table: string, column: string, calculation: Calculation): string {
  const aggregate = calculation.endsWith('average') ? `avg(${column})` : 'count(*)'
  const where = 'workspace_id = $1 and created_at >= $2 and created_at < $3 and deleted_at is null'
  return calculation.startsWith('time_series')
    ? `select date_trunc('day', created_at at time zone 'UTC') as d, ${aggregate} as v from ${table} where ${where} group by 1`
    : `select ${aggregate} as v, count(*) as n from ${table} where ${where}`
}

/** The service's statement for `input` (`$n` placeholders), built by its own code for the workspace owner. */
function serviceSqlOf(which: Endpoint['service'], workspaceId: number, userId: number, input: TMetricCommon): { sql: string; params: unknown[] } {
  const ctx = { auth: { user: { id: userId } }, workspace: { workspace: { id: workspaceId }, role: 'owner' }, serviceId: null }
  const source = METRIC_SOURCES[which] as (ctx: ResourceCtx, input: TMetricCommon) => ReturnType<(typeof METRIC_SOURCES)['agents']>
  const statement = metricStatement(source(ctx as unknown as ResourceCtx, input), input)
  let n = 0
  return { sql: statement.sql.replace(/\?/g, () => `$${++n}`), params: statement.params }
}

interface Context {
  bench: Bench
  serviceUrl: string
  /** The service's process id, for its CPU time (bench/cpu.ts). */
  servicePid: number | undefined
  db: pg.Client
  userId: number
  workspace: { id: number; uuid: string }
  headers: Record<string, string>
  dateFrom: string
  dateTo: string
  lower: string
  upper: string
}

const inputOf = (endpoint: Endpoint, calculation: Calculation, ctx: Context): TMetricCommon => ({
  calculation,
  ...(calculation.startsWith('time_series') ? { granularity: 'daily' as const } : {}),
  column: calculation.endsWith('average') ? endpoint.column : '*',
  date_from: ctx.dateFrom,
  date_to: ctx.dateTo,
})

/** The per-endpoint table: endpoint, cached, service SQL and bare SQL for every calculation. */
async function measureTable(ctx: Context): Promise<{ rows: Row[]; httpFloorMs: number }> {
  // Warm-up: every request of the table three times, so no column of the first rows pays the
  // service's JIT compilation or cold pages.
  for (let round = 0; round < 3; round++) {
    for (const endpoint of ENDPOINTS) {
      for (const calculation of CALCULATIONS) {
        const body = JSON.stringify(inputOf(endpoint, calculation, ctx))
        await ok('warm-up', request(`${ctx.serviceUrl}/api/v1/${endpoint.path}`, { method: 'POST', headers: { ...ctx.headers, 'cache-control': 'no-cache' }, body }))
        await ctx.db.query(bareSql(endpoint.table, endpoint.column, calculation), [ctx.workspace.id, ctx.lower, ctx.upper])
      }
    }
  }
  const floor = await timeIt(settings.repeat, () => ok('GET /api/v1/ping', request(`${ctx.serviceUrl}/api/v1/ping`)))
  console.log(`HTTP floor (GET /api/v1/ping, same client): ${floor.medianMs.toFixed(2)} ms`)
  const rows: Row[] = []
  for (const endpoint of ENDPOINTS) {
    for (const calculation of CALCULATIONS) {
      const url = `${ctx.serviceUrl}/api/v1/${endpoint.path}`
      const input = inputOf(endpoint, calculation, ctx)
      const requestBody = JSON.stringify(input)
      const what = `POST /api/v1/${endpoint.path}`
      let answer: { total: number | null } | undefined
      const own = serviceSqlOf(endpoint.service, ctx.workspace.id, ctx.userId, input)
      const sqlText = bareSql(endpoint.table, endpoint.column, calculation)
      const params = [ctx.workspace.id, ctx.lower, ctx.upper]
      let result: pg.QueryResult | undefined
      const timed = await timeInterleaved(settings.repeat, {
        uncached: async () => {
          const body = await ok(what, request(url, { method: 'POST', headers: { ...ctx.headers, 'cache-control': 'no-cache' }, body: requestBody }))
          answer = JSON.parse(body) as { total: number | null }
        },
        // The same request answered from the cache (the uncached runs store it): HTTP + REST layer + cache, no SQL.
        cached: () => ok(`${what} (cached)`, request(url, { method: 'POST', headers: ctx.headers, body: requestBody })),
        serviceSql: () => ctx.db.query(own.sql, own.params),
        bare: async () => (result = await ctx.db.query(sqlText, params)),
      })
      const { uncached, cached, serviceSql, bare } = timed
      const rowsInRange = Number(
        (
          await ctx.db.query(
            `select count(*) as n from ${endpoint.table} where workspace_id = $1 and created_at >= $2 and created_at < $3 and deleted_at is null`,
            params,
          )
        ).rows[0].n,
      )
      const round4 = (value: unknown) => (value === null ? null : Math.round(Number(value) * 10_000) / 10_000)
      let expected: number | null
      if (calculation === 'accumulated_count') expected = Number(result!.rows[0].v)
      else if (calculation === 'accumulated_average') expected = round4(result!.rows[0].v)
      else if (calculation === 'time_series_count') expected = result!.rows.reduce((sum, row) => sum + Number(row.v), 0)
      else expected = round4((await ctx.db.query(bareSql(endpoint.table, endpoint.column, 'accumulated_average'), params)).rows[0].v)
      const got = answer?.total ?? null
      const sameTotal = expected === got || (expected !== null && got !== null && Math.abs(expected - got) <= 1e-4)
      const row: Row = {
        endpoint: what,
        calculation,
        rowsInRange,
        endpointMs: uncached.medianMs,
        cachedMs: cached.medianMs,
        serviceSqlMs: serviceSql.medianMs,
        sqlMs: bare.medianMs,
        ratio: uncached.medianMs / bare.medianMs,
        endpointRunsMs: uncached.runsMs,
        sqlRunsMs: bare.runsMs,
        sameTotal,
      }
      rows.push(row)
      console.log(
        `${row.endpoint} ${calculation}: endpoint ${row.endpointMs.toFixed(1)} ms, cached ${row.cachedMs.toFixed(1)} ms, service SQL ${row.serviceSqlMs.toFixed(1)} ms, SQL ${row.sqlMs.toFixed(1)} ms, ratio ${row.ratio.toFixed(2)}` +
          (sameTotal ? '' : ` ⚠ total ${got} vs SQL ${expected}`),
      )
    }
  }
  return { rows, httpFloorMs: floor.medianMs }
}

/** EXPLAIN ANALYZE of the service's statement for each endpoint's daily count, and of the bare SQL. */
async function explainPlans(ctx: Context): Promise<Record<string, { sql: string; plan: string }>> {
  const explain = async (sql: string, params: unknown[]) =>
    (await ctx.db.query(`explain (analyze, buffers) ${sql}`, params)).rows.map((row) => String(row['QUERY PLAN'])).join('\n')
  const plans: Record<string, { sql: string; plan: string }> = {}
  for (const endpoint of ENDPOINTS) {
    const own = serviceSqlOf(endpoint.service, ctx.workspace.id, ctx.userId, inputOf(endpoint, 'time_series_count', ctx))
    plans[endpoint.service] = { sql: own.sql, plan: await explain(own.sql, own.params) }
  }
  const bare = bareSql('messages', 'total_tokens', 'time_series_count')
  plans.bareMessages = { sql: bare, plan: await explain(bare, [ctx.workspace.id, ctx.lower, ctx.upper]) }
  console.log(`\nEXPLAIN ANALYZE, service statement (messages, time_series_count daily):\n${plans.messages!.sql}\n${plans.messages!.plan}`)
  console.log(`\nEXPLAIN ANALYZE, bare SQL (messages):\n${plans.bareMessages.plan}`)
  return plans
}

interface CannonRow {
  requestsPerSecond: number
  latencyP50Ms: number
  latencyP99Ms: number
  non2xx: number
  errors: number
  /** The service's CPU time per request (µs), from /proc; null where it cannot be read. */
  serverCpuUs: number | null
}

/**
 * autocannon: (c) `GET /api/v1/ping` against two cached metrics answers, in this run. After a
 * warm-up of each, the three take turns in BENCH_SLICES slices of BENCH_DURATION / BENCH_SLICES
 * seconds each (default 5), so a drift of a shared machine's speed reaches all three alike; a row
 * sums its slices (requests and the service's CPU over the time measured), its p50 is the median
 * of the slices' and its p99 the highest.
 */
async function measureCached(ctx: Context) {
  const endpoint = ENDPOINTS[4]
  const url = `${ctx.serviceUrl}/api/v1/${endpoint.path}`
  type Options = { url: string; method?: 'POST'; headers?: Record<string, string>; body?: string }
  const slices = Math.max(1, Math.floor(envNumber('BENCH_SLICES', 5)))
  const sliceSeconds = Math.max(1, Math.round(settings.durationSeconds / slices))
  const slice = async (options: Options) => {
    const cpuBefore = ctx.servicePid === undefined ? null : cpuSeconds(ctx.servicePid)
    const result = await cannon(options, sliceSeconds)
    const cpuAfter = ctx.servicePid === undefined ? null : cpuSeconds(ctx.servicePid)
    return { result, cpuSeconds: cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore }
  }
  const cachedRequest = async (calculation: Calculation) => {
    const body = JSON.stringify(inputOf(endpoint, calculation, ctx))
    await ok('prime cache', request(url, { method: 'POST', headers: ctx.headers, body }))
    return { url, method: 'POST' as const, headers: ctx.headers, body }
  }
  const rows = { ping: { url: `${ctx.serviceUrl}/api/v1/ping` } as Options, series: await cachedRequest('time_series_count'), single: await cachedRequest('accumulated_count') }
  const taken: Record<keyof typeof rows, Awaited<ReturnType<typeof slice>>[]> = { ping: [], series: [], single: [] }
  for (const options of Object.values(rows)) {
    process.stdout.write(`${options.method ?? 'GET'} ${options.url}: warm-up ${settings.warmupSeconds} s\n`)
    await cannon(options, settings.warmupSeconds)
  }
  for (let round = 0; round < slices; round++) {
    for (const [name, options] of Object.entries(rows) as [keyof typeof rows, Options][]) {
      const done = await slice(options)
      taken[name].push(done)
      process.stdout.write(`slice ${round + 1}/${slices} ${name}: ${Math.round(done.result.requests.average)} req/s${failures(done.result)}\n`)
    }
  }
  const summed = (parts: Awaited<ReturnType<typeof slice>>[]): CannonRow => {
    const requests = parts.reduce((sum, part) => sum + part.result.requests.total, 0)
    const seconds = parts.reduce((sum, part) => sum + part.result.duration, 0)
    const cpu = parts.every((part) => part.cpuSeconds !== null) ? parts.reduce((sum, part) => sum + (part.cpuSeconds ?? 0), 0) : null
    return {
      requestsPerSecond: seconds > 0 ? requests / seconds : 0,
      latencyP50Ms: median(parts.map((part) => part.result.latency.p50)),
      latencyP99Ms: Math.max(...parts.map((part) => part.result.latency.p99)),
      non2xx: parts.reduce((sum, part) => sum + part.result.non2xx, 0),
      errors: parts.reduce((sum, part) => sum + part.result.errors, 0),
      serverCpuUs: cpu === null || !requests ? null : (cpu * 1e6) / requests,
    }
  }
  const [ping, series, single] = (['ping', 'series', 'single'] as const).map((name) => {
    const row = summed(taken[name])
    console.log(`${name}: ${Math.round(row.requestsPerSecond)} req/s, server CPU ${row.serverCpuUs === null ? 'n/a' : `${row.serverCpuUs.toFixed(0)} µs`}/request`)
    return row
  })
  return { ping, series, seriesRatio: series.requestsPerSecond / ping.requestsPerSecond, single, singleRatio: single.requestsPerSecond / ping.requestsPerSecond }
}

/** A markdown row of an autocannon run, compared with (c) by throughput and by the service's CPU per request. */
function cannonLine(label: string, row: CannonRow, ping: CannonRow): string {
  const cpu = row.serverCpuUs === null ? 'n/a' : fmt(row.serverCpuUs)
  const cpuShare = row.serverCpuUs === null || ping.serverCpuUs === null ? 'n/a' : `${fmt((ping.serverCpuUs / row.serverCpuUs) * 100)}%`
  return `| ${label} | ${fmt(row.requestsPerSecond)} | ${row.latencyP50Ms} | ${row.latencyP99Ms} | ${fmt((row.requestsPerSecond / ping.requestsPerSecond) * 100)}% | ${cpu} | ${cpuShare} |`
}

async function main(bench: Bench) {
  const loadBefore = os.loadavg()
  const service = await startService(bench, profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [])
  const db = new pg.Client({ connectionString: bench.databaseUrl })
  await db.connect()
  bench.closers.push(() => db.end())
  bench.closers.push(async () => agent.destroy())

  let email: string
  let token: string
  if (bench.reused) {
    // A database a kept run seeded: its user signs in again.
    const found = (await db.query<{ email: string }>("select email from users where email like 'bench-%@example.com' order by id limit 1")).rows[0]
    if (!found) throw new Error(`no bench user in ${bench.database}: is it a kept metrics benchmark database?`)
    email = found.email
    token = await signIn(service.url, email)
  } else {
    email = `bench-${randomBytes(4).toString('hex')}@example.com`
    token = (await signUp(service.url, 'Bench User', email)).token
    for (const name of ['Bench Two', 'Bench Three']) {
      await expectOk(
        await fetch(`${service.url}/api/v1/workspaces`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name }),
        }),
        'POST /api/v1/workspaces',
      )
    }
  }
  const user = (await db.query<{ id: number }>('select id from users where email = $1', [email])).rows[0]!
  const workspaces = (
    await db.query<{ id: string; uuid: string }>(
      'select w.id, w.uuid from workspaces w join workspace_members m on m.workspace_id = w.id where m.user_id = $1 order by w.id',
      [user.id],
    )
  ).rows
  if (workspaces.length !== 3) throw new Error(`expected 3 workspaces of the user, found ${workspaces.length}`)
  // The primary workspace is the one created at sign-up: the first.
  const measured = { id: Number(workspaces[0]!.id), uuid: workspaces[0]!.uuid }

  let seedSeconds = 0
  let seedTimings: Record<string, number> = {}
  if (!bench.reused) {
    console.log(`seeding (${fmt(settings.rowsPerTable)} agents, workflows, executions, threads; ${fmt(settings.messages)} messages):`)
    const seedStart = performance.now()
    seedTimings = await seed(db, user.id, workspaces.map((row) => Number(row.id)), settings)
    seedSeconds = (performance.now() - seedStart) / 1000
    console.log(`seeding took ${seedSeconds.toFixed(1)} s`)
  }

  const today = new Date(new Date().toISOString().slice(0, 10) + 'T00:00:00Z')
  const dateFrom = new Date(today.getTime() - (settings.days - 1) * 86_400_000).toISOString().slice(0, 10)
  const ctx: Context = {
    bench,
    serviceUrl: service.url,
    servicePid: service.process.pid,
    db,
    userId: user.id,
    workspace: measured,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-workspace-uuid': measured.uuid },
    dateFrom,
    dateTo: today.toISOString().slice(0, 10),
    lower: `${dateFrom}T00:00:00Z`,
    upper: new Date(today.getTime() + 86_400_000).toISOString(),
  }

  const table = parts.has('table') ? await measureTable(ctx) : undefined
  const plans = parts.has('table') ? await explainPlans(ctx) : undefined
  const cached = parts.has('cannon') ? await measureCached(ctx) : undefined

  const date = new Date().toISOString()
  const machine = machineOf(bench.postgres)
  const md: string[] = [
    `Metrics benchmark of ${date}: ${machine.line}; PostgreSQL ${bench.postgres}; load average ${loadBefore.map((load) => load.toFixed(2)).join(', ')} before the run, ${machine.json.loadAverage.map((load) => load.toFixed(2)).join(', ')} after.`,
    bench.reused
      ? `Reused the seeded database ${bench.database}.`
      : `Seeded ${fmt(settings.rowsPerTable)} agents, workflows, executions and threads over 3 workspaces and 365 days, ` +
        `${fmt(settings.messages)} messages in ${fmt(settings.messageThreads)} threads, in ${seedSeconds.toFixed(1)} s.`,
    '',
  ]
  const targets: Record<string, unknown> = {}
  if (table) {
    const { rows, httpFloorMs } = table
    const worst = rows.reduce((a, b) => (b.ratio > a.ratio ? b : a))
    const ratioPass = rows.every((row) => row.ratio <= RATIO_TARGET)
    const messagesDaily = rows.find((row) => row.endpoint.endsWith('messages/metrics') && row.calculation === 'time_series_count')!
    const messagesDailyAvg = rows.find((row) => row.endpoint.endsWith('messages/metrics') && row.calculation === 'time_series_average')!
    const dailyPass = messagesDaily.endpointMs < MESSAGES_DAILY_TARGET_MS && messagesDailyAvg.endpointMs < MESSAGES_DAILY_TARGET_MS
    targets.ratio = { threshold: RATIO_TARGET, worst: worst.ratio, pass: ratioPass }
    targets.messagesDaily = { thresholdMs: MESSAGES_DAILY_TARGET_MS, countMs: messagesDaily.endpointMs, averageMs: messagesDailyAvg.endpointMs, pass: dailyPass }
    md.push(
      `Measured: the primary workspace, ${ctx.dateFrom}..${ctx.dateTo} (${settings.days} days), daily buckets; median of ${settings.repeat} after one warm-up; ` +
        'endpoint = HTTP round trip with `Cache-Control: no-cache`; cached = the same request answered from the cache; ' +
        "service SQL = the service's own statement for the request through `pg` with its `$n` parameters; " +
        'bare SQL = the plain aggregation through `pg`. ' +
        `HTTP floor (\`GET /api/v1/ping\`, same client): ${fmt(httpFloorMs, 2)} ms.`,
      '',
      '| endpoint | calculation | rows in range | endpoint ms | cached ms | service SQL ms | bare SQL ms | endpoint / bare SQL | same total |',
      '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | :---: |',
      ...rows.map(
        (row) =>
          `| \`${row.endpoint}\` | ${row.calculation} | ${fmt(row.rowsInRange)} | ${fmt(row.endpointMs, 1)} | ${fmt(row.cachedMs, 1)} | ${fmt(row.serviceSqlMs, 1)} | ${fmt(row.sqlMs, 1)} | ` +
          `${fmt(row.ratio, 2)}${row.ratio > RATIO_TARGET ? ' ⚠' : ''} | ${row.sameTotal ? 'yes' : '**no**'} |`,
      ),
      '',
      `Target endpoint / SQL <= ${RATIO_TARGET}: worst ${fmt(worst.ratio, 2)} (${worst.endpoint} ${worst.calculation}) -> **${ratioPass ? 'PASS' : 'FAIL'}**`,
      '',
      `Target messages daily series over 90 days < ${MESSAGES_DAILY_TARGET_MS} ms: count ${fmt(messagesDaily.endpointMs, 1)} ms, average ${fmt(messagesDailyAvg.endpointMs, 1)} ms -> **${dailyPass ? 'PASS' : 'FAIL'}**`,
      '',
    )
  }
  if (cached) {
    const cachedPass = cached.seriesRatio >= CACHED_TARGET && cached.singleRatio >= CACHED_TARGET
    targets.cached = { threshold: CACHED_TARGET, ratio: cached.seriesRatio, smallRatio: cached.singleRatio, pass: cachedPass }
    const path = `POST /api/v1/${ENDPOINTS[4].path}`
    md.push(
      '| autocannon row | req/s | p50 ms | p99 ms | vs (c) | server CPU µs/request | (c) CPU / row CPU |',
      '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
      cannonLine('(c) `GET /api/v1/ping`', cached.ping, cached.ping),
      cannonLine(`cached \`${path}\` (time_series_count daily, 90 days)`, cached.series, cached.ping),
      cannonLine(`cached \`${path}\` (accumulated_count, 90 days)`, cached.single, cached.ping),
      '',
      `Target cached >= ${CACHED_TARGET * 100}% of (c): daily series ${fmt(cached.seriesRatio * 100)}%, accumulated count ${fmt(cached.singleRatio * 100)}% -> **${cachedPass ? 'PASS' : 'FAIL'}**`,
      '',
    )
  }
  const text = md.join('\n')
  console.log(`\n${text}`)
  const json = {
    date,
    machine: machine.json,
    loadAverageBefore: loadBefore,
    settings: { ...settings, parts: [...parts] },
    database: bench.database,
    seed: { seconds: seedSeconds, steps: seedTimings },
    range: { dateFrom: ctx.dateFrom, dateTo: ctx.dateTo },
    httpFloorMs: table?.httpFloorMs,
    rows: table?.rows,
    autocannon: cached,
    targets,
    explain: plans,
  }
  writeResults(['metrics-latest'], json, text)
}

await runBench('aw_bench_metrics', main)
