/**
 * `npm run bench:metrics` (issue 4, item 7): the five metrics endpoints at a million rows, on PostgreSQL.
 *
 * 1. Creates a fresh database `aw_bench_metrics_*` (dropped at the end, also on errors and signals),
 *    starts the real service as a child process (migrations run), signs up one user and creates 2
 *    more workspaces through the API (3 workspaces, the user owns all of them).
 * 2. Seeds with set-based SQL through `pg`: 100,000 agents, workflows, workflow executions and
 *    threads spread over the 3 workspaces and 365 days, and BENCH_MESSAGES (default 1,000,000)
 *    messages over 365 days in 2,000 of those threads. Then ANALYZE.
 * 3. For each endpoint and calculation, over the last 90 days of the user's primary workspace: the
 *    endpoint uncached (`Cache-Control: no-cache`) against the bare SQL of the same aggregation
 *    through `pg` (median of BENCH_REPEAT, default 5, after one warm-up). Targets: endpoint / SQL
 *    <= 1.3; the messages daily series < 150 ms.
 * 4. A cached metrics answer (the messages daily series and the messages accumulated count, without no-cache) against `GET /api/v1/ping` (c) with
 *    autocannon (50 connections, 2 s warm-up, BENCH_DURATION s, default 10). Target: >= 80% of (c).
 * 5. Prints a markdown table and writes bench/results/metrics-latest.{json,md}; also the EXPLAIN
 *    ANALYZE of the service's statement for the messages daily count (built by the service's own
 *    code with a capturing entity manager, run here through `pg`).
 *
 * Environment: BENCH_DATABASE_URL (admin URL, default postgres://postgres@127.0.0.1:5432/postgres),
 * BENCH_MESSAGES, BENCH_REPEAT, BENCH_DURATION, BENCH_WARMUP, BENCH_CONNECTIONS.
 * The exit code is 0 whether or not the targets are met: this is a measurement, not a test.
 */
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import type { ResourceCtx } from '../src/access/resource-access.ts'
import { type Calculation, CALCULATIONS, type TMetricsResponse } from '../src/schemas/metrics.schema.ts'
import * as metricsService from '../src/services/metrics.service.ts'
import {
  type Bench,
  cannon,
  cannonSettings,
  envNumber,
  expectOk,
  failures,
  fmt,
  machineOf,
  runBench,
  signUp,
  startService,
  writeResults,
} from './harness.ts'

const settings = {
  messages: Math.floor(envNumber('BENCH_MESSAGES', 1_000_000)),
  rowsPerTable: 100_000,
  messageThreads: 2_000,
  repeat: Math.floor(envNumber('BENCH_REPEAT', 5)),
  days: 90,
  ...cannonSettings,
}
const RATIO_TARGET = 1.3
const MESSAGES_DAILY_TARGET_MS = 150
const CACHED_TARGET = 0.8

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

/** Median duration (ms) of `repeat` runs of `fn` after one warm-up. */
async function timeIt(fn: () => Promise<unknown>): Promise<{ medianMs: number; runsMs: number[] }> {
  await fn()
  const runsMs: number[] = []
  for (let i = 0; i < settings.repeat; i++) {
    const start = performance.now()
    await fn()
    runsMs.push(performance.now() - start)
  }
  return { medianMs: median(runsMs), runsMs }
}

const ENDPOINTS = [
  { path: 'agents/metrics', table: 'agents', column: 'usage_count', service: 'agents' },
  { path: 'workflows/metrics', table: 'workflows', column: 'trigger_count', service: 'workflows' },
  { path: 'workflow-executions/metrics', table: 'workflow_executions', column: 'duration_ms', service: 'executions' },
  { path: 'threads/metrics', table: 'threads', column: 'messages_count', service: 'threads' },
  { path: 'messages/metrics', table: 'messages', column: 'total_tokens', service: 'messages' },
] as const

interface Row {
  endpoint: string
  calculation: Calculation
  rowsInRange: number
  endpointMs: number
  /** The same request served from the metrics cache (serial, median): the fixed cost without SQL. */
  cachedMs: number
  /** The service's own statement for the request, through `pg` (median). */
  serviceSqlMs: number
  sqlMs: number
  ratio: number
  endpointRunsMs: number[]
  sqlRunsMs: number[]
  /** The endpoint's total equals the bare SQL's (count or average rounded to 4 decimals). */
  sameTotal: boolean
}

function bareSql(table: string, column: string, calculation: Calculation): string {
  const aggregate = calculation.endsWith('average') ? `avg(${column})` : 'count(*)'
  const where = 'workspace_id = $1 and created_at >= $2 and created_at < $3 and deleted_at is null'
  return calculation.startsWith('time_series')
    ? `select date_trunc('day', created_at at time zone 'UTC') as d, ${aggregate} as v from ${table} where ${where} group by 1`
    : `select ${aggregate} as v, count(*) as n from ${table} where ${where}`
}

/** The service's statement for `input`, built by its own code (`which`) with a capturing entity manager. */
async function serviceSqlOf(
  which: 'agents' | 'workflows' | 'executions' | 'threads' | 'messages',
  workspaceId: number,
  userId: number,
  input: Record<string, unknown>,
): Promise<{ sql: string; params: unknown[] }> {
  let captured: { sql: string; params: unknown[] } | undefined
  const em = {
    execute: (sql: string, params: unknown[]) => {
      captured = { sql, params }
      return Promise.resolve([])
    },
  }
  const ctx = { em, auth: { user: { id: userId } }, workspace: { workspace: { id: workspaceId }, role: 'owner' }, serviceId: null }
  const run = metricsService[which] as (ctx: ResourceCtx, input: never) => Promise<TMetricsResponse>
  await run(ctx as unknown as ResourceCtx, input as never)
  if (!captured) throw new Error('no statement captured')
  let n = 0
  return { sql: captured.sql.replace(/\?/g, () => `$${++n}`), params: captured.params }
}

async function seed(db: pg.Client, userId: number, workspaceIds: number[]): Promise<Record<string, number>> {
  const timings: Record<string, number> = {}
  const step = async (name: string, sql: string, params: unknown[] = []) => {
    const start = performance.now()
    await db.query(sql, params)
    timings[name] = (performance.now() - start) / 1000
    console.log(`  ${name}: ${timings[name]!.toFixed(1)} s`)
  }
  const n = settings.rowsPerTable
  // Spread over 365 days before now; `ws[1 + i % 3]` spreads rows over the 3 workspaces.
  const spread = `now() - random() * interval '365 days'`
  // Agents and workflows: the same columns but the counter.
  for (const [table, counter] of [
    ['agents', 'usage_count'],
    ['workflows', 'trigger_count'],
  ] as const) {
    const label = table === 'agents' ? 'Agent' : 'Workflow'
    await step(
      table,
      `insert into ${table} (uuid, name, visibility, ${counter}, user_id, workspace_id, created_at, updated_at)
       select gen_random_uuid(), '${label} ' || i, 'workspace', (random() * 1000)::int, $1, ($2::bigint[])[1 + i % 3], t, t
       from (select i, ${spread} as t from generate_series(1, ${n}) i) s`,
      [userId, workspaceIds],
    )
  }
  await step(
    'workflow_executions',
    `with w as (select id, workspace_id, row_number() over (order by id) as rn from workflows)
     insert into workflow_executions (uuid, workflow_id, user_id, workspace_id, status, duration_ms, created_at, updated_at)
     select gen_random_uuid(), w.id, $1, w.workspace_id, 'succeeded', (random() * 60000)::int, s.t, s.t
     from (select i, ${spread} as t from generate_series(0, ${n - 1}) i) s join w on w.rn = 1 + s.i`,
    [userId],
  )
  await step(
    'threads',
    `with a as (select id, workspace_id, row_number() over (order by id) as rn from agents)
     insert into threads (uuid, name, agent_id, messages_count, user_id, workspace_id, created_at, updated_at)
     select gen_random_uuid(), 'Thread ' || s.i, a.id, (random() * 1000)::int, $1, a.workspace_id, s.t, s.t
     from (select i, ${spread} as t from generate_series(0, ${n - 1}) i) s join a on a.rn = 1 + s.i`,
    [userId],
  )
  await step(
    'messages',
    `with t as (select id, workspace_id, row_number() over (order by id) - 1 as rn from threads order by id limit ${settings.messageThreads})
     insert into messages (uuid, thread_id, user_id, workspace_id, role, prompt_tokens, completion_tokens, total_tokens, latency_ms, created_at, updated_at)
     select gen_random_uuid(), t.id, $1, t.workspace_id, 'assistant', s.p, s.c, s.p + s.c, (random() * 5000)::int, s.t, s.t
     from (select i, (random() * 2000)::int as p, (random() * 1000)::int as c, ${spread} as t
           from generate_series(0, ${settings.messages - 1}) i) s
     join t on t.rn = s.i % ${settings.messageThreads}`,
    [userId],
  )
  await step('analyze', 'analyze')
  return timings
}


async function main(bench: Bench) {
  const service = await startService(bench)
  const db = new pg.Client({ connectionString: bench.databaseUrl })
  await db.connect()
  bench.closers.push(() => db.end())

  const email = `bench-${randomBytes(4).toString('hex')}@example.com`
  const { token } = await signUp(service.url, 'Bench User', email)
  const authorization = { authorization: `Bearer ${token}` }
  for (const name of ['Bench Two', 'Bench Three']) {
    await expectOk(
      await fetch(`${service.url}/api/v1/workspaces`, {
        method: 'POST',
        headers: { ...authorization, 'content-type': 'application/json' },
        body: JSON.stringify({ name }),
      }),
      'POST /api/v1/workspaces',
    )
  }
  const user = (await db.query<{ id: number }>('select id from users where email = $1', [email])).rows[0]!
  const workspaces = (
    await db.query<{ id: string; uuid: string }>(
      'select w.id, w.uuid from workspaces w join workspace_members m on m.workspace_id = w.id where m.user_id = $1 order by w.id',
      [user.id],
    )
  ).rows
  if (workspaces.length !== 3) throw new Error(`expected 3 workspaces of the user, found ${workspaces.length}`)
  const workspaceIds = workspaces.map((row) => Number(row.id))
  // The primary workspace is the one created at sign-up: the first.
  const measured = workspaces[0]!

  console.log(`seeding (${fmt(settings.rowsPerTable)} agents, workflows, executions, threads; ${fmt(settings.messages)} messages):`)
  const seedStart = performance.now()
  const seedTimings = await seed(db, user.id, workspaceIds)
  const seedSeconds = (performance.now() - seedStart) / 1000
  console.log(`seeding took ${seedSeconds.toFixed(1)} s`)

  const today = new Date(new Date().toISOString().slice(0, 10) + 'T00:00:00Z')
  const dateTo = today.toISOString().slice(0, 10)
  const dateFrom = new Date(today.getTime() - (settings.days - 1) * 86_400_000).toISOString().slice(0, 10)
  const lower = `${dateFrom}T00:00:00Z`
  const upper = new Date(today.getTime() + 86_400_000).toISOString()
  const headers = {
    ...authorization,
    'content-type': 'application/json',
    'x-workspace-uuid': measured.uuid,
  }
  const body = (endpoint: (typeof ENDPOINTS)[number], calculation: Calculation) =>
    JSON.stringify({
      calculation,
      ...(calculation.startsWith('time_series') ? { granularity: 'daily' } : {}),
      column: calculation.endsWith('average') ? endpoint.column : '*',
      date_from: dateFrom,
      date_to: dateTo,
    })

  const rows: Row[] = []
  for (const endpoint of ENDPOINTS) {
    for (const calculation of CALCULATIONS) {
      const url = `${service.url}/api/v1/${endpoint.path}`
      const requestBody = body(endpoint, calculation)
      let answer: { total: number | null } | undefined
      const http = await timeIt(async () => {
        const response = await fetch(url, { method: 'POST', headers: { ...headers, 'cache-control': 'no-cache' }, body: requestBody })
        answer = JSON.parse((await expectOk(response, `POST /api/v1/${endpoint.path}`)).toString('utf8')) as { total: number | null }
      })
      // The same request answered from the cache (the warm-up primes it): HTTP + REST layer + cache, no SQL.
      const cachedHttp = await timeIt(async () => {
        const response = await fetch(url, { method: 'POST', headers, body: requestBody })
        await expectOk(response, `POST /api/v1/${endpoint.path} (cached)`)
      })
      // The service's own statement for this request, run through `pg` (not prepared, like em.execute).
      const own = await serviceSqlOf(endpoint.service, Number(measured.id), user.id, JSON.parse(requestBody) as Record<string, unknown>)
      const serviceSqlTime = await timeIt(() => db.query(own.sql, own.params))
      const sqlText = bareSql(endpoint.table, endpoint.column, calculation)
      const params = [measured.id, lower, upper]
      let result: pg.QueryResult | undefined
      const sql = await timeIt(async () => (result = await db.query(sqlText, params)))
      const rowsInRange = Number(
        (await db.query(`select count(*) as n from ${endpoint.table} where workspace_id = $1 and created_at >= $2 and created_at < $3 and deleted_at is null`, params))
          .rows[0].n,
      )
      let expected: number | null
      if (calculation === 'accumulated_count') expected = Number(result!.rows[0].v)
      else if (calculation === 'accumulated_average') expected = result!.rows[0].v === null ? null : Math.round(Number(result!.rows[0].v) * 10_000) / 10_000
      else if (calculation === 'time_series_count') expected = result!.rows.reduce((sum, row) => sum + Number(row.v), 0)
      else {
        const avg = (await db.query(bareSql(endpoint.table, endpoint.column, 'accumulated_average'), params)).rows[0].v
        expected = avg === null ? null : Math.round(Number(avg) * 10_000) / 10_000
      }
      const got = answer?.total ?? null
      const sameTotal = expected === got || (expected !== null && got !== null && Math.abs(expected - got) <= 1e-4)
      const row: Row = {
        endpoint: `POST /api/v1/${endpoint.path}`,
        calculation,
        rowsInRange,
        endpointMs: http.medianMs,
        cachedMs: cachedHttp.medianMs,
        serviceSqlMs: serviceSqlTime.medianMs,
        sqlMs: sql.medianMs,
        ratio: http.medianMs / sql.medianMs,
        endpointRunsMs: http.runsMs,
        sqlRunsMs: sql.runsMs,
        sameTotal,
      }
      rows.push(row)
      console.log(
        `${row.endpoint} ${calculation}: endpoint ${row.endpointMs.toFixed(1)} ms, cached ${row.cachedMs.toFixed(1)} ms, service SQL ${row.serviceSqlMs.toFixed(1)} ms, SQL ${row.sqlMs.toFixed(1)} ms, ratio ${row.ratio.toFixed(2)}` +
          (sameTotal ? '' : ` ⚠ total ${got} vs SQL ${expected}`),
      )
    }
  }

  // EXPLAIN ANALYZE of the service's statement for the messages daily count, and of the bare SQL.
  const seriesInput = { calculation: 'time_series_count', granularity: 'daily', column: '*', date_from: dateFrom, date_to: dateTo }
  const serviceSql = await serviceSqlOf('messages', Number(measured.id), user.id, seriesInput)
  const agentsSql = await serviceSqlOf('agents', Number(measured.id), user.id, { ...seriesInput, calculation: 'accumulated_count' })
  const explain = async (sql: string, params: unknown[]) =>
    (await db.query(`explain (analyze, buffers) ${sql}`, params)).rows.map((row) => String(row['QUERY PLAN'])).join('\n')
  const serviceExplain = await explain(serviceSql.sql, serviceSql.params)
  const bareExplain = await explain(bareSql('messages', 'total_tokens', 'time_series_count'), [measured.id, lower, upper])
  console.log(`\nEXPLAIN ANALYZE, service statement (messages, time_series_count daily):\n${serviceSql.sql}\n${serviceExplain}`)
  console.log(`\nEXPLAIN ANALYZE, bare SQL:\n${bareExplain}`)
  const agentsExplain = await explain(agentsSql.sql, agentsSql.params)
  console.log(`\nEXPLAIN ANALYZE, service statement (agents, accumulated_count):\n${agentsSql.sql}\n${agentsExplain}`)

  // Cached answer vs (c).
  const cachedEndpoint = ENDPOINTS[4]
  const cachedBody = body(cachedEndpoint, 'time_series_count')
  await expectOk(await fetch(`${service.url}/api/v1/${cachedEndpoint.path}`, { method: 'POST', headers, body: cachedBody }), 'prime cache')
  const measureCannon = async (options: { url: string; method?: 'POST'; headers?: Record<string, string>; body?: string }) => {
    process.stdout.write(`${options.method ?? 'GET'} ${options.url}: warm-up ${settings.warmupSeconds} s, measuring ${settings.durationSeconds} s ... `)
    await cannon(options, settings.warmupSeconds)
    const result = await cannon(options, settings.durationSeconds)
    console.log(`${Math.round(result.requests.average)} req/s${failures(result)}`)
    return {
      requestsPerSecond: result.requests.average,
      latencyP50Ms: result.latency.p50,
      latencyP99Ms: result.latency.p99,
      non2xx: result.non2xx,
      errors: result.errors,
    }
  }
  const ping = await measureCannon({ url: `${service.url}/api/v1/ping` })
  const cached = await measureCannon({ url: `${service.url}/api/v1/${cachedEndpoint.path}`, method: 'POST', headers, body: cachedBody })
  const smallBody = body(cachedEndpoint, 'accumulated_count')
  await expectOk(await fetch(`${service.url}/api/v1/${cachedEndpoint.path}`, { method: 'POST', headers, body: smallBody }), 'prime cache')
  const cachedSmall = await measureCannon({ url: `${service.url}/api/v1/${cachedEndpoint.path}`, method: 'POST', headers, body: smallBody })
  const cachedRatio = cached.requestsPerSecond / ping.requestsPerSecond
  const cachedSmallRatio = cachedSmall.requestsPerSecond / ping.requestsPerSecond

  // Verdicts and table.
  const worst = rows.reduce((a, b) => (b.ratio > a.ratio ? b : a))
  const ratioPass = rows.every((row) => row.ratio <= RATIO_TARGET)
  const messagesDaily = rows.find((row) => row.endpoint.endsWith('messages/metrics') && row.calculation === 'time_series_count')!
  const messagesDailyAvg = rows.find((row) => row.endpoint.endsWith('messages/metrics') && row.calculation === 'time_series_average')!
  const dailyPass = messagesDaily.endpointMs < MESSAGES_DAILY_TARGET_MS && messagesDailyAvg.endpointMs < MESSAGES_DAILY_TARGET_MS
  const cachedPass = cachedRatio >= CACHED_TARGET && cachedSmallRatio >= CACHED_TARGET
  const date = new Date().toISOString()
  const machine = machineOf(bench.postgres)
  const md = [
    `Metrics benchmark of ${date}: ${machine.line}; PostgreSQL ${bench.postgres}.`,
    `Seeded ${fmt(settings.rowsPerTable)} agents, workflows, executions and threads over 3 workspaces and 365 days, ` +
      `${fmt(settings.messages)} messages in ${fmt(settings.messageThreads)} threads, in ${seedSeconds.toFixed(1)} s. ` +
      `Measured: the primary workspace, ${dateFrom}..${dateTo} (${settings.days} days), daily buckets; median of ${settings.repeat} after one warm-up; ` +
      'endpoint = HTTP round trip with `Cache-Control: no-cache`; cached = the same request answered from the cache (serial); ' +
      "service SQL = the service's own statement for the request (built by src/services/metrics.service.ts) through `pg`; " +
      'bare SQL = the plain aggregation through `pg`.',
    '',
    '| endpoint | calculation | rows in range | endpoint ms | cached ms | service SQL ms | bare SQL ms | endpoint / bare SQL | same total |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | :---: |',
    ...rows.map(
      (row) =>
        `| \`${row.endpoint}\` | ${row.calculation} | ${fmt(row.rowsInRange)} | ${fmt(row.endpointMs, 1)} | ${fmt(row.cachedMs, 1)} | ${fmt(row.serviceSqlMs, 1)} | ${fmt(row.sqlMs, 1)} | ` +
        `${fmt(row.ratio, 2)}${row.ratio > RATIO_TARGET ? ' ⚠' : ''} | ${row.sameTotal ? 'yes' : '**no**'} |`,
    ),
    '',
    '| autocannon row | req/s | p50 ms | p99 ms | vs (c) |',
    '| --- | ---: | ---: | ---: | ---: |',
    `| (c) \`GET /api/v1/ping\` | ${fmt(ping.requestsPerSecond)} | ${ping.latencyP50Ms} | ${ping.latencyP99Ms} | 100% |`,
    `| cached \`POST /api/v1/${cachedEndpoint.path}\` (time_series_count daily, 90 days) | ${fmt(cached.requestsPerSecond)} | ${cached.latencyP50Ms} | ${cached.latencyP99Ms} | ${fmt(cachedRatio * 100)}% |`,
    `| cached \`POST /api/v1/${cachedEndpoint.path}\` (accumulated_count, 90 days) | ${fmt(cachedSmall.requestsPerSecond)} | ${cachedSmall.latencyP50Ms} | ${cachedSmall.latencyP99Ms} | ${fmt(cachedSmallRatio * 100)}% |`,
    '',
    `Target endpoint / SQL <= ${RATIO_TARGET}: worst ${fmt(worst.ratio, 2)} (${worst.endpoint} ${worst.calculation}) -> **${ratioPass ? 'PASS' : 'FAIL'}**`,
    '',
    `Target messages daily series over 90 days < ${MESSAGES_DAILY_TARGET_MS} ms: count ${fmt(messagesDaily.endpointMs, 1)} ms, average ${fmt(messagesDailyAvg.endpointMs, 1)} ms -> **${dailyPass ? 'PASS' : 'FAIL'}**`,
    '',
    `Target cached >= ${CACHED_TARGET * 100}% of (c): daily series ${fmt(cachedRatio * 100)}%, accumulated count ${fmt(cachedSmallRatio * 100)}% -> **${cachedPass ? 'PASS' : 'FAIL'}**`,
    '',
  ].join('\n')
  console.log(`\n${md}`)

  const json = {
    date,
    machine: machine.json,
    settings,
    seed: { seconds: seedSeconds, steps: seedTimings },
    range: { dateFrom, dateTo },
    rows,
    autocannon: { ping, cached, cachedRatio, cachedSmall, cachedSmallRatio },
    targets: {
      ratio: { threshold: RATIO_TARGET, worst: worst.ratio, pass: ratioPass },
      messagesDaily: { thresholdMs: MESSAGES_DAILY_TARGET_MS, countMs: messagesDaily.endpointMs, averageMs: messagesDailyAvg.endpointMs, pass: dailyPass },
      cached: { threshold: CACHED_TARGET, ratio: cachedRatio, smallRatio: cachedSmallRatio, pass: cachedPass },
    },
    explain: { serviceSql: serviceSql.sql, service: serviceExplain, bare: bareExplain, agentsSql: agentsSql.sql, agents: agentsExplain },
  }
  writeResults(['metrics-latest'], json, md)
}

await runBench('aw_bench_metrics', main)
