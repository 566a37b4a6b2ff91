/**
 * What the benchmarks share (`npm run bench`: bench/run.ts, `npm run bench:metrics`:
 * bench/metrics.ts, `npm run bench:workflows`: bench/workflows.ts): settings read from the
 * environment, a fresh PostgreSQL database created for the run and dropped at the end (also on
 * errors, SIGINT and SIGTERM), the service started as a child process, signing up, autocannon runs
 * with the same settings, one measured row (warm-up, then a measured run with the CPU it cost the
 * server and PostgreSQL) and the foundation benchmark's baseline rows, the machine's description
 * and the result files.
 *
 * Environment: BENCH_DATABASE_URL (admin connection, default
 * postgres://postgres@127.0.0.1:5432/postgres), BENCH_DURATION (seconds per measured run, default
 * 10), BENCH_WARMUP (seconds of warm-up, default 2), BENCH_CONNECTIONS (default 50),
 * BENCH_KEEP_DATABASE=1 (keep the run's database at the end and print its name),
 * BENCH_REUSE_DATABASE=<name> (run on that existing database and keep it; `main` sees `reused`).
 */
import { randomBytes } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import autocannon from 'autocannon'
import pg from 'pg'
import { cpuSeconds, cpuSince, cpuSnapshot, machineBusySeconds } from './cpu.ts'
import { type Child, startChild, stopChild } from './processes.ts'

/** A positive number from the environment, else `fallback`. */
export function envNumber(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback)
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`)
  return value
}

/** A comma-separated list from the environment (`BENCH_ONLY=c,e`), trimmed, else `fallback`'s items. */
export function envList(name: string, fallback: string): Set<string> {
  return new Set((process.env[name] ?? fallback).split(',').map((item) => item.trim()))
}

/** autocannon's settings, the same for every run of every benchmark. */
export const cannonSettings = {
  connections: envNumber('BENCH_CONNECTIONS', 50),
  pipelining: 1,
  durationSeconds: envNumber('BENCH_DURATION', 10),
  warmupSeconds: envNumber('BENCH_WARMUP', 2),
}

const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const resultsDir = path.resolve(import.meta.dirname, 'results')

/** A benchmark run: its database and the processes and connections to close at the end. */
export interface Bench {
  /** Admin connection of the PostgreSQL server: created the database, drops it at the end. */
  admin: pg.Client
  /** Name of the run's database. */
  database: string
  /** URL of the run's database. */
  databaseUrl: string
  /** PostgreSQL's `server_version`. */
  postgres: string
  /** Started children: stopped at the end. */
  children: Child[]
  /** Closers run at the end, before the database is dropped (connections to it). */
  closers: Array<() => Promise<unknown>>
  /** True when the run works on an existing database (BENCH_REUSE_DATABASE), which it keeps. */
  reused: boolean
}

/** BENCH_REUSE_DATABASE: an existing database to run on instead of a fresh one. */
const reuseDatabase = process.env.BENCH_REUSE_DATABASE || undefined
/** BENCH_KEEP_DATABASE=1: keep the run's database (to reuse it, or to look at it). */
const keepDatabase = process.env.BENCH_KEEP_DATABASE === '1' || reuseDatabase !== undefined

/**
 * Runs `main` on a fresh database `<prefix>_<random>` (or BENCH_REUSE_DATABASE); stops the
 * children, runs the closers and drops the database whatever happens, unless it is to be kept
 * (an error sets the exit code to 1, a signal exits with 130).
 */
export async function runBench(prefix: string, main: (bench: Bench) => Promise<void>): Promise<void> {
  let bench: Bench | undefined
  let admin: pg.Client | undefined
  let cleaning: Promise<void> | undefined
  const cleanup = (): Promise<void> =>
    (cleaning ??= (async () => {
      if (bench) {
        await Promise.allSettled(bench.children.map((child) => stopChild(child)))
        await Promise.allSettled(bench.closers.map((close) => close()))
        if (keepDatabase) console.log(`kept database ${bench.database} (BENCH_REUSE_DATABASE=${bench.database} runs on it again)`)
        else {
          try {
            await bench.admin.query(`drop database if exists "${bench.database}" with (force)`)
          } catch (error) {
            console.error(`could not drop database ${bench.database}:`, error)
          }
        }
      }
      await admin?.end().catch(() => {})
    })())
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      console.error(`\n${signal}: cleaning up`)
      void cleanup().then(() => process.exit(130))
    })
  }
  try {
    admin = new pg.Client({ connectionString: adminUrl })
    await admin.connect()
    const postgres = String((await admin.query('show server_version')).rows[0].server_version)
    const database = reuseDatabase ?? `${prefix}_${randomBytes(4).toString('hex')}`
    if (!reuseDatabase) await admin.query(`create database "${database}"`)
    const databaseUrl = new URL(adminUrl)
    databaseUrl.pathname = `/${database}`
    bench = { admin, database, databaseUrl: databaseUrl.href, postgres, children: [], closers: [], reused: reuseDatabase !== undefined }
    console.log(`database ${database} (PostgreSQL ${postgres})`)
    await main(bench)
  } catch (error) {
    console.error(error)
    process.exitCode = 1
  } finally {
    await cleanup()
  }
}

/** A second fresh database `<run's database>_<suffix>` on the bench's server, dropped at the end: its URL. */
export async function extraDatabase(bench: Bench, suffix: string): Promise<string> {
  const name = `${bench.database}_${suffix}`
  await bench.admin.query(`create database "${name}"`)
  bench.closers.push(() => bench.admin.query(`drop database if exists "${name}" with (force)`))
  const url = new URL(bench.databaseUrl)
  url.pathname = `/${name}`
  return url.href
}

/** Environment of every server child: production mode, request logging off. */
export const CHILD_ENV = { NODE_ENV: 'production', LOG_LEVEL: 'warn' }

/**
 * Starts the service on the run's database (migrations run), in-memory caches, sign-in limits
 * lifted; `env` adds to or overrides its environment.
 */
export async function startService(bench: Bench, nodeArgs: string[] = [], env: Record<string, string> = {}): Promise<Child> {
  const service = await startChild(
    'service',
    'src/server.ts',
    {
      ...CHILD_ENV,
      DATABASE_URL: bench.databaseUrl,
      APP_KEY: `base64:${randomBytes(32).toString('base64')}`,
      APP_URL: '',
      REDIS_URL: '',
      SIGN_IN_MAX_PER_ADDRESS: '1000000',
      SIGN_IN_MAX_PER_EMAIL: '1000000',
      ...env,
    },
    { readyPath: '/ready', nodeArgs },
  )
  bench.children.push(service)
  return service
}

/** The body of `response`; throws naming `what` on a non-2xx answer. */
export async function expectOk(response: Response, what: string): Promise<Buffer> {
  const body = Buffer.from(await response.arrayBuffer())
  if (!response.ok) throw new Error(`${what}: HTTP ${response.status} ${body.toString('utf8').slice(0, 300)}`)
  return body
}

/** The password of every user the benchmarks sign up. */
const BENCH_PASSWORD = 'bench-password-1234'

/** Signs a new user up through the API: its token and id. */
export async function signUp(serviceUrl: string, name: string, email: string): Promise<{ token: string; userId: number }> {
  const response = await fetch(`${serviceUrl}/api/v1/auth/sign-up`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name, email, password: BENCH_PASSWORD }),
  })
  const { data } = JSON.parse((await expectOk(response, `sign-up ${email}`)).toString('utf8')) as {
    data: { access_token: string; user: { id: number } }
  }
  return { token: data.access_token, userId: data.user.id }
}

/** Signs an existing user in through the API: a new basic token. */
export async function signIn(serviceUrl: string, email: string): Promise<string> {
  const response = await fetch(`${serviceUrl}/api/v1/auth/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: BENCH_PASSWORD }),
  })
  const { data } = JSON.parse((await expectOk(response, `sign-in ${email}`)).toString('utf8')) as { data: { access_token: string } }
  return data.access_token
}

/** Nearest-rank count, p50 and p90 of `values` (ms): the OpenAI-compatible and A2A comparisons report these. */
export function summariseP90(values: number[]): { n: number; p50: number; p90: number } {
  const sorted = [...values].sort((a, b) => a - b)
  const rank = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN
  return { n: sorted.length, p50: rank(0.5), p90: rank(0.9) }
}

/** Nearest-rank percentiles of `values` (milliseconds), with their count and maximum. */
export function summarise(values: number[]): { n: number; p50: number; p99: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b)
  const rank = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN
  return { n: sorted.length, p50: rank(0.5), p99: rank(0.99), max: sorted.at(-1) ?? NaN }
}

/** One autocannon run of `seconds` with {@link cannonSettings}. */
export function cannon(options: autocannon.Options, seconds: number): Promise<autocannon.Result> {
  return autocannon({ ...options, connections: cannonSettings.connections, pipelining: cannonSettings.pipelining, duration: seconds })
}

/** One row's target: a request to a server child, measured with {@link measure}. */
export interface Target {
  key: string
  name: string
  request: string
  url: string
  /** Default GET. */
  method?: 'GET' | 'POST'
  headers?: Record<string, string>
  body?: string
  /** An answer with another body counts as a mismatch (autocannon's `expectBody`). */
  expectBody?: string
  /** The server process answering it. */
  pid: number
}

/** What an autocannon run sent and got back, beyond its throughput and latency. */
export interface Traffic {
  /** Requests written to the sockets (answered or not: the last ones are in flight when the run stops). */
  sent: number
  /** Answers received. */
  requests: number
  ok2xx: number
  non2xx: number
  errors: number
  timeouts: number
  mismatches: number
  /** Answers by HTTP status. */
  statusCodes: Record<string, number>
}

/** One measured row. */
export interface Row extends Traffic {
  key: string
  name: string
  request: string
  /** Mean of autocannon's per-second samples. */
  requestsPerSecond: number
  latencyP50Ms: number
  latencyP975Ms: number
  latencyP99Ms: number
  latencyMeanMs: number
  /** The warm-up run before the measured one (same target, same settings). */
  warmup: Traffic
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

/** PIDs of the PostgreSQL backends connected to the benchmark database (after the warm-up, the pool is full). */
async function backendPids(admin: pg.Client, database: string): Promise<number[]> {
  const result = await admin.query<{ pid: number }>(
    "select pid from pg_stat_activity where datname = $1 and backend_type = 'client backend'",
    [database],
  )
  return result.rows.map((row) => row.pid)
}

const monotonicUs = () => Number(process.hrtime.bigint() / 1000n)
const delta = (before: number | null, after: number | null) => (before === null || after === null ? null : after - before)
const perRequest = (seconds: number | null, requests: number) => (seconds === null || requests === 0 ? null : (seconds * 1e6) / requests)

/** One autocannon run of `target` for `seconds`, counting the requests it sent. */
async function run(target: Target, seconds: number): Promise<{ result: autocannon.Result; traffic: Traffic }> {
  let sent = 0
  const result = await cannon(
    {
      url: target.url,
      method: target.method ?? 'GET',
      // autocannon takes a member that is present but undefined as set (`undefined HTTP method`).
      ...(target.headers ? { headers: target.headers } : {}),
      ...(target.body !== undefined ? { body: target.body } : {}),
      ...(target.expectBody !== undefined ? { expectBody: target.expectBody } : {}),
      // Each client emits `request` as it writes one (not in @types/autocannon's event list).
      setupClient: (client) => void (client as NodeJS.EventEmitter).on('request', () => sent++),
    },
    seconds,
  )
  const statusCodes: Record<string, number> = {}
  for (const [code, stats] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = stats?.count ?? 0
  return {
    result,
    traffic: {
      sent,
      requests: result.requests.total,
      ok2xx: result['2xx'],
      non2xx: result.non2xx,
      errors: result.errors,
      timeouts: result.timeouts,
      mismatches: result.mismatches,
      statusCodes,
    },
  }
}

/**
 * One row: a warm-up of {@link cannonSettings}.warmupSeconds, then a measured run of
 * durationSeconds with the CPU it cost the target's process, the benchmark database's
 * PostgreSQL backends and this process, and how busy the rest of the machine was.
 */
export async function measure(bench: Bench, target: Target): Promise<Row> {
  process.stdout.write(
    `(${target.key}) ${target.request}: warm-up ${cannonSettings.warmupSeconds} s, measuring ${cannonSettings.durationSeconds} s ... `,
  )
  const warmup = await run(target, cannonSettings.warmupSeconds)
  const backends = await backendPids(bench.admin, bench.database)
  const server0 = cpuSeconds(target.pid)
  const postgres0 = cpuSnapshot(backends)
  const machine0 = machineBusySeconds()
  const self0 = process.cpuUsage()
  const startUs = monotonicUs()
  const { result, traffic } = await run(target, cannonSettings.durationSeconds)
  const endUs = monotonicUs()
  const self = process.cpuUsage(self0)
  const server = delta(server0, cpuSeconds(target.pid))
  const postgres = cpuSince(postgres0, cpuSnapshot(backends))
  const machine = delta(machine0, machineBusySeconds())
  const selfSeconds = (self.user + self.system) / 1e6
  const requests = traffic.requests
  const row: Row = {
    key: target.key,
    name: target.name,
    request: target.request,
    requestsPerSecond: result.requests.average,
    latencyP50Ms: result.latency.p50,
    latencyP975Ms: result.latency.p97_5,
    latencyP99Ms: result.latency.p99,
    latencyMeanMs: result.latency.average,
    ...traffic,
    warmup: warmup.traffic,
    vsPing: null,
    serverCpuUsPerRequest: perRequest(server, requests),
    postgresCpuUsPerRequest: perRequest(postgres, requests),
    loadGeneratorCpuUsPerRequest: perRequest(selfSeconds, requests) ?? 0,
    otherLoadCores:
      machine === null ? null : Math.max(0, (machine - (server ?? 0) - (postgres ?? 0) - selfSeconds) / ((endUs - startUs) / 1e6)),
    window: { startUs, endUs },
  }
  console.log(`${Math.round(row.requestsPerSecond)} req/s${failures(row)}`)
  return row
}

/** The foundation benchmark's baselines on the service: (c) a procedure without database, (d) a plain Fastify route. */
export function serviceBaselines(service: Child): { ping: Target; health: Target } {
  const pid = service.process.pid!
  return {
    ping: { key: 'c', name: 'procedure, no database (REST layer)', request: 'GET /api/v1/ping', url: `${service.url}/api/v1/ping`, pid },
    health: { key: 'd', name: 'Fastify route', request: 'GET /health', url: `${service.url}/health`, pid },
  }
}

/** ` (n non-2xx, m errors)` when a run had any, else empty. */
export const failures = (result: { non2xx: number; errors: number }): string =>
  result.non2xx || result.errors ? ` (${result.non2xx} non-2xx, ${result.errors} errors)` : ''

/** A number with thousands separators and `digits` decimals. */
export const fmt = (value: number, digits = 0): string =>
  value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })

/** A ratio as a whole percentage, `n/a` for null. */
export const pct = (ratio: number | null): string => (ratio === null ? 'n/a' : `${fmt(ratio * 100)}%`)
/** Milliseconds of autocannon's latency (1 ms resolution): `< 1` below 1. */
export const ms = (value: number): string => (value < 1 ? '< 1' : fmt(value))
/** Microseconds, `—` for null (not readable). */
export const us = (value: number | null): string => (value === null ? '—' : fmt(value))

/** The machine, for the results' heading (`line`) and JSON (`json`). */
export function machineOf(postgres: string) {
  const cpus = os.cpus()
  const cpu = cpus[0]?.model.trim()
  return {
    line: `${cpu ?? 'unknown CPU'}, ${cpus.length} cores, Node ${process.version}`,
    json: { cpu, cores: cpus.length, node: process.version, postgres, loadAverage: os.loadavg() },
  }
}

/** Writes `<name>.json` and `<name>.md` under bench/results for each of `names`, and prints where the first went. */
export function writeResults(names: string[], json: unknown, md: string): void {
  mkdirSync(resultsDir, { recursive: true })
  const text = JSON.stringify(json, null, 2) + '\n'
  for (const name of names) {
    writeFileSync(path.join(resultsDir, `${name}.json`), text)
    writeFileSync(path.join(resultsDir, `${name}.md`), md)
  }
  console.log(`results: ${path.relative(process.cwd(), path.join(resultsDir, `${names[0]}.{json,md}`))}`)
}
