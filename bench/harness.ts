/**
 * What the benchmarks share (`npm run bench`: bench/run.ts, `npm run bench:metrics`:
 * bench/metrics.ts): settings read from the environment, a fresh PostgreSQL database created for
 * the run and dropped at the end (also on errors, SIGINT and SIGTERM), the service started as a
 * child process, signing up, autocannon runs with the same settings, the machine's description
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
import { type Child, startChild, stopChild } from './processes.ts'

/** A positive number from the environment, else `fallback`. */
export function envNumber(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback)
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`)
  return value
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

/** Environment of every server child: production mode, request logging off. */
export const CHILD_ENV = { NODE_ENV: 'production', LOG_LEVEL: 'warn' }

/** Starts the service on the run's database (migrations run), in-memory caches, sign-in limits lifted. */
export async function startService(bench: Bench, nodeArgs: string[] = []): Promise<Child> {
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

/** One autocannon run of `seconds` with {@link cannonSettings}. */
export function cannon(options: autocannon.Options, seconds: number): Promise<autocannon.Result> {
  return autocannon({ ...options, connections: cannonSettings.connections, pipelining: cannonSettings.pipelining, duration: seconds })
}

/** ` (n non-2xx, m errors)` when a run had any, else empty. */
export const failures = (result: { non2xx: number; errors: number }): string =>
  result.non2xx || result.errors ? ` (${result.non2xx} non-2xx, ${result.errors} errors)` : ''

/** A number with thousands separators and `digits` decimals. */
export const fmt = (value: number, digits = 0): string =>
  value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })

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
