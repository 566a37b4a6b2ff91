/**
 * `npm run bench` (issues 2 and 3): throughput of the service against baselines measured in the same
 * run, on PostgreSQL, all over 127.0.0.1.
 *
 *   (a) bare node:http route answering the bytes of `GET /api/v1/ping`  (Node's HTTP ceiling)
 *   (b) bare node:http route doing one primary-key SELECT through `pg`  (one DB round trip)
 *   (c) `GET /api/v1/ping`: a procedure without database, through the REST layer (stack ceiling)
 *   (d) `GET /health`: a plain Fastify route of the service
 *   (e) `GET /api/v1/user` with a bearer token: the token resolved through the per-process token
 *       cache (src/services/auth-cache.ts: one authentication query per token per 5 s) + procedure
 *   (f) `GET /api/v1/agents/{uuid}`: one agent with 3 tools (bound account), 2 workflows, 1 share
 *   (g) `GET /api/v1/agents?per_page=15&with=tools,workflows`: a page of 15 agents with relations
 *
 * Rows (f) and (g) read agents seeded through the REST API (bench/seed-agents.ts).
 * Each server is a child process (a fresh database `aw_bench_*` is created and dropped); autocannon
 * runs here with the same settings for every row: 50 connections, pipelining 1, a 2 s warm-up,
 * then BENCH_DURATION seconds (default 10). Results are ratios to (c); the target is (e) >= 80% of
 * (c) and (f) >= 60% of (c). The exit code is 0 whether or not the target is met: this is a measurement, not a test.
 *
 * Besides throughput and latency, each row reports the CPU one request cost the server process
 * and the PostgreSQL backends of the benchmark database (read from /proc, Linux only), and how
 * busy the rest of the machine was meanwhile ("other load", in cores): a noisy neighbour shows
 * there instead of silently lowering a ratio.
 *
 * Environment:
 *   BENCH_DATABASE_URL  admin connection of the PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres)
 *   BENCH_DURATION      seconds per measured run (default 10)
 *   BENCH_WARMUP        seconds of warm-up before each run (default 2)
 *   BENCH_CONNECTIONS   autocannon connections (default 50)
 *   BENCH_ONLY          rows to run, e.g. "c,e" (default all)
 *   BENCH_PROFILE       a folder: run the service under `node --cpu-prof` writing there; each row's
 *                       measured window is in the results JSON (see bench/profile-summary.ts)
 */
import { randomBytes } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import autocannon from 'autocannon'
import pg from 'pg'
import { cpuSeconds, cpuSince, cpuSnapshot, machineBusySeconds } from './cpu.ts'
import { type Child, startChild, stopChild } from './processes.ts'
import { seedAgents } from './seed-agents.ts'

type Key = 'a' | 'b' | 'c' | 'd' | 'e' | 'f' | 'g'

interface Target {
  key: Key
  name: string
  request: string
  url: string
  headers?: Record<string, string>
  /** The server process answering it. */
  pid: number
}

/** One measured row. */
interface Row {
  key: Key
  name: string
  request: string
  /** Mean of autocannon's per-second samples. */
  requestsPerSecond: number
  latencyP50Ms: number
  latencyP99Ms: number
  latencyMeanMs: number
  requests: number
  non2xx: number
  errors: number
  timeouts: number
  /** requestsPerSecond / (c)'s; null when (c) was not run. */
  vsPing: number | null
  /** CPU microseconds per request of the server process and of the benchmark database's backends. */
  serverCpuUsPerRequest: number | null
  postgresCpuUsPerRequest: number | null
  /** CPU microseconds per request of autocannon (this process). */
  loadGeneratorCpuUsPerRequest: number
  /** Cores kept busy by everything else on the machine during the run (other processes, interrupts). */
  otherLoadCores: number | null
  /** The measured run on the monotonic clock in microseconds (V8's profiles use the same clock on Linux). */
  window: { startUs: number; endUs: number }
}

const TARGET_RATIO = 0.8
/** Issue 3: the single agent read (f) at least 60% of (c). */
const AGENT_TARGET_RATIO = 0.6
const envNumber = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback)
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`)
  return value
}
const settings = {
  connections: envNumber('BENCH_CONNECTIONS', 50),
  pipelining: 1,
  durationSeconds: envNumber('BENCH_DURATION', 10),
  warmupSeconds: envNumber('BENCH_WARMUP', 2),
}
const only = new Set((process.env.BENCH_ONLY ?? 'a,b,c,d,e,f,g').split(',').map((key) => key.trim()))
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const profileDir = process.env.BENCH_PROFILE ? path.resolve(process.env.BENCH_PROFILE) : undefined
const resultsDir = path.resolve(import.meta.dirname, 'results')

const children: Child[] = []
let database: string | undefined
/** Admin connection: creates and drops the database, lists its backends. */
let admin: pg.Client | undefined
let cleaning: Promise<void> | undefined

/** Stops every child and drops the database; safe to call more than once. */
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    await Promise.allSettled(children.map((child) => stopChild(child)))
    if (database && admin) {
      try {
        await admin.query(`drop database if exists "${database}" with (force)`)
      } catch (error) {
        console.error(`could not drop database ${database}:`, error)
      }
    }
    await admin?.end().catch(() => {})
  })()
  return cleaning
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: cleaning up`)
    void cleanup().then(() => process.exit(130))
  })
}

async function expectOk(response: Response, what: string): Promise<Buffer> {
  const body = Buffer.from(await response.arrayBuffer())
  if (!response.ok) throw new Error(`${what}: HTTP ${response.status} ${body.toString('utf8').slice(0, 300)}`)
  return body
}

async function run(target: Target, durationSeconds: number) {
  return autocannon({
    url: target.url,
    headers: target.headers,
    connections: settings.connections,
    pipelining: settings.pipelining,
    duration: durationSeconds,
  })
}

/** PIDs of the PostgreSQL backends connected to the benchmark database (after the warm-up, the pool is full). */
async function backendPids(): Promise<number[]> {
  const result = await admin!.query<{ pid: number }>(
    "select pid from pg_stat_activity where datname = $1 and backend_type = 'client backend'",
    [database],
  )
  return result.rows.map((row) => row.pid)
}

const monotonicUs = () => Number(process.hrtime.bigint() / 1000n)
const delta = (before: number | null, after: number | null) => (before === null || after === null ? null : after - before)
const perRequest = (seconds: number | null, requests: number) => (seconds === null || requests === 0 ? null : (seconds * 1e6) / requests)

async function measure(target: Target): Promise<Row> {
  process.stdout.write(
    `(${target.key}) ${target.request}: warm-up ${settings.warmupSeconds} s, measuring ${settings.durationSeconds} s ... `,
  )
  await run(target, settings.warmupSeconds)
  const backends = await backendPids()
  const server0 = cpuSeconds(target.pid)
  const postgres0 = cpuSnapshot(backends)
  const machine0 = machineBusySeconds()
  const self0 = process.cpuUsage()
  const startUs = monotonicUs()
  const result = await run(target, settings.durationSeconds)
  const endUs = monotonicUs()
  const self = process.cpuUsage(self0)
  const server = delta(server0, cpuSeconds(target.pid))
  const postgres = cpuSince(postgres0, cpuSnapshot(backends))
  const machine = delta(machine0, machineBusySeconds())
  const selfSeconds = (self.user + self.system) / 1e6
  const requests = result.requests.total
  const row: Row = {
    key: target.key,
    name: target.name,
    request: target.request,
    requestsPerSecond: result.requests.average,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    latencyMeanMs: result.latency.average,
    requests,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    vsPing: null,
    serverCpuUsPerRequest: perRequest(server, requests),
    postgresCpuUsPerRequest: perRequest(postgres, requests),
    loadGeneratorCpuUsPerRequest: perRequest(selfSeconds, requests) ?? 0,
    otherLoadCores:
      machine === null ? null : Math.max(0, (machine - (server ?? 0) - (postgres ?? 0) - selfSeconds) / ((endUs - startUs) / 1e6)),
    window: { startUs, endUs },
  }
  console.log(
    `${Math.round(row.requestsPerSecond)} req/s${row.non2xx || row.errors ? ` (${row.non2xx} non-2xx, ${row.errors} errors)` : ''}`,
  )
  return row
}

const fmt = (value: number, digits = 0) => value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
const pct = (ratio: number | null) => (ratio === null ? 'n/a' : `${fmt(ratio * 100)}%`)
const ms = (value: number) => (value < 1 ? '< 1' : fmt(value))
const us = (value: number | null) => (value === null ? '—' : fmt(value))

function markdown(rows: Row[], meta: { date: string; machine: string; postgres: string }, verdict: string): string {
  const lines = [
    `Benchmark of ${meta.date}: ${meta.machine}; ${meta.postgres}.`,
    `autocannon: ${settings.connections} connections, pipelining ${settings.pipelining}, ${settings.warmupSeconds} s warm-up then ${settings.durationSeconds} s per row; request logging off (LOG_LEVEL=warn).`,
    '',
    '| row | request | req/s | p50 ms | p99 ms | vs (c) | server CPU µs/req | PostgreSQL CPU µs/req | other load |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (row) =>
        `| (${row.key}) ${row.name} | \`${row.request}\` | ${fmt(row.requestsPerSecond)} | ${ms(row.latencyP50Ms)} | ${ms(row.latencyP99Ms)} | ` +
        `${pct(row.vsPing)} | ${us(row.serverCpuUsPerRequest)} | ${us(row.postgresCpuUsPerRequest)} | ` +
        `${row.otherLoadCores === null ? 'n/a' : fmt(row.otherLoadCores, 2)} |` +
        (row.non2xx || row.errors ? ` ⚠ ${row.non2xx} non-2xx, ${row.errors} errors` : ''),
    ),
    '',
    'Latency has 1 ms resolution. CPU per request: of the server process, and of the PostgreSQL backends connected to the',
    'benchmark database; "other load": cores that everything else on the machine kept busy during the row (noise).',
    '',
    verdict,
    '',
  ]
  return lines.join('\n')
}

async function main() {
  admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  const postgres = String((await admin.query('show server_version')).rows[0].server_version)
  database = `aw_bench_${randomBytes(4).toString('hex')}`
  await admin.query(`create database "${database}"`)
  const databaseUrl = new URL(adminUrl)
  databaseUrl.pathname = `/${database}`
  console.log(`database ${database} (PostgreSQL ${postgres})`)

  const common = { NODE_ENV: 'production', LOG_LEVEL: 'warn' }
  if (profileDir) mkdirSync(profileDir, { recursive: true })
  const service = await startChild(
    'service',
    'src/server.ts',
    {
      ...common,
      DATABASE_URL: databaseUrl.href,
      APP_KEY: `base64:${randomBytes(32).toString('base64')}`,
      APP_URL: '',
      REDIS_URL: '',
      SIGN_IN_MAX_PER_ADDRESS: '1000000',
      SIGN_IN_MAX_PER_EMAIL: '1000000',
    },
    { readyPath: '/ready', nodeArgs: profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [] },
  )
  children.push(service)

  const ping = await fetch(`${service.url}/api/v1/ping`)
  const pingBody = await expectOk(ping, 'GET /api/v1/ping')
  const contentType = ping.headers.get('content-type') ?? 'application/json; charset=utf-8'

  const email = `bench-${randomBytes(4).toString('hex')}@example.com`
  const signUp = await fetch(`${service.url}/api/v1/auth/sign-up`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Bench User', email, password: 'bench-password-1234' }),
  })
  const token = (JSON.parse((await expectOk(signUp, 'sign-up')).toString('utf8')) as { data: { access_token: string } }).data.access_token
  const authorization = { authorization: `Bearer ${token}` }
  const me = JSON.parse(
    (await expectOk(await fetch(`${service.url}/api/v1/user`, { headers: authorization }), 'GET /api/v1/user')).toString('utf8'),
  ) as { data: { id: number } }

  const friendSignUp = await fetch(`${service.url}/api/v1/auth/sign-up`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Bench Friend', email: `friend-${email}`, password: 'bench-password-1234' }),
  })
  const friend = JSON.parse((await expectOk(friendSignUp, 'sign-up')).toString('utf8')) as { data: { user: { id: number } } }
  const seeded = only.has('f') || only.has('g') ? await seedAgents(service.url, token, friend.data.user.id) : null

  const bare = await startChild('bare-http', 'bench/static-server.ts', {
    ...common,
    BENCH_BODY_BASE64: pingBody.toString('base64'),
    BENCH_CONTENT_TYPE: contentType,
  })
  children.push(bare)
  const barePg = await startChild('bare-pg', 'bench/pg-server.ts', {
    ...common,
    DATABASE_URL: databaseUrl.href,
    BENCH_USER_ID: String(me.data.id),
  })
  children.push(barePg)
  const bareBody = await expectOk(await fetch(bare.url), 'bare route')
  if (!bareBody.equals(pingBody)) throw new Error('the bare route does not answer the bytes of GET /api/v1/ping')

  const pid = (child: Child) => child.process.pid!
  const targets: Target[] = [
    { key: 'a', name: 'bare node:http, same bytes', request: 'GET / (bare)', url: `${bare.url}/`, pid: pid(bare) },
    { key: 'b', name: 'bare node:http + pg SELECT by id', request: 'GET / (bare pg)', url: `${barePg.url}/`, pid: pid(barePg) },
    {
      key: 'c',
      name: 'procedure, no database (REST layer)',
      request: 'GET /api/v1/ping',
      url: `${service.url}/api/v1/ping`,
      pid: pid(service),
    },
    { key: 'd', name: 'Fastify route', request: 'GET /health', url: `${service.url}/health`, pid: pid(service) },
    {
      key: 'e',
      name: 'authenticated procedure (token cache)',
      request: 'GET /api/v1/user',
      url: `${service.url}/api/v1/user`,
      headers: authorization,
      pid: pid(service),
    },
  ]
  if (seeded) {
    targets.push(
      {
        key: 'f',
        name: 'one agent with 3 tools, 2 workflows, 1 share',
        request: 'GET /api/v1/agents/{uuid}',
        url: `${service.url}/api/v1/agents/${seeded.agentUuid}`,
        headers: authorization,
        pid: pid(service),
      },
      {
        key: 'g',
        name: `a page of 15 of ${seeded.agents} agents with tools and workflows`,
        request: 'GET /api/v1/agents?per_page=15&with=tools,workflows',
        url: `${service.url}/api/v1/agents?per_page=15&with=tools,workflows`,
        headers: authorization,
        pid: pid(service),
      },
    )
  }
  const rows: Row[] = []
  for (const target of targets) if (only.has(target.key)) rows.push(await measure(target))

  const baseline = rows.find((row) => row.key === 'c')
  for (const row of rows) row.vsPing = baseline ? row.requestsPerSecond / baseline.requestsPerSecond : null
  const ratio = rows.find((row) => row.key === 'e')?.vsPing ?? null
  const pass = ratio === null ? null : ratio >= TARGET_RATIO
  const verdict =
    ratio === null
      ? 'Target (e) >= 80% of (c): not measured (run rows c and e).'
      : `Target (e) >= 80% of (c): (e)/(c) = ${pct(ratio)} -> **${pass ? 'PASS' : 'FAIL'}**`
  const agentRatio = rows.find((row) => row.key === 'f')?.vsPing ?? null
  const agentPass = agentRatio === null ? null : agentRatio >= AGENT_TARGET_RATIO
  const agentVerdict =
    agentRatio === null
      ? 'Target (f) >= 60% of (c): not measured (run rows c and f).'
      : `Target (f) >= 60% of (c): (f)/(c) = ${pct(agentRatio)} -> **${agentPass ? 'PASS' : 'FAIL'}**`

  const date = new Date().toISOString()
  const cpus = os.cpus()
  const machine = `${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${cpus.length} cores, Node ${process.version}`
  const md = markdown(rows, { date, machine, postgres: `PostgreSQL ${postgres}` }, `${verdict}\n\n${agentVerdict}`)
  console.log(`\n${md}`)

  mkdirSync(resultsDir, { recursive: true })
  const stamp = date.replace(/[:.]/g, '-')
  const json = JSON.stringify(
    {
      date,
      machine: { cpu: cpus[0]?.model.trim(), cores: cpus.length, node: process.version, postgres, loadAverage: os.loadavg() },
      settings,
      rows,
      target: { ratio, threshold: TARGET_RATIO, pass },
      agentTarget: { ratio: agentRatio, threshold: AGENT_TARGET_RATIO, pass: agentPass },
      profileDir: profileDir ?? null,
    },
    null,
    2,
  )
  for (const name of [`bench-${stamp}`, 'latest']) {
    writeFileSync(path.join(resultsDir, `${name}.json`), json + '\n')
    writeFileSync(path.join(resultsDir, `${name}.md`), md)
  }
  console.log(`results: ${path.relative(process.cwd(), path.join(resultsDir, `bench-${stamp}.{json,md}`))}`)
}

try {
  await main()
} catch (error) {
  console.error(error)
  process.exitCode = 1
} finally {
  await cleanup()
}
