/**
 * Real service processes for the tests of shutdown and crash recovery (test/shutdown.test.ts,
 * test/crash-recovery.test.ts): `npm start` and `npm run worker` as Node itself with tsx as a
 * loader (not the tsx CLI, which runs the script in a child process that a signal to the CLI would
 * not reach), the same way as test/workflow-crash.test.ts.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createServer } from 'node:http'
import { afterAll, beforeAll, onTestFailed } from 'vitest'
import { NODE_FLAGS } from '../../src/node-flags.ts'
import { freePort } from './ports.ts'
import { httpClient, TEST_APP_KEY, type TestApp } from './app.ts'
import { freshDatabase } from './database.ts'

/**
 * The storage of the processes of one test, in the mode the suite runs in: a fresh PostgreSQL
 * database (`DATABASE_URL` set; `drop` removes it), else a new PGlite data folder named after
 * `prefix`. Answers the environment variable that points a process at it.
 */
export async function processStorage(prefix: string): Promise<{ env: Record<string, string>; drop: () => Promise<void> }> {
  if (!process.env.DATABASE_URL) return { env: { DATA_DIR: mkdtempSync(path.join(tmpdir(), `${prefix}-`)) }, drop: async () => {} }
  const database = await freshDatabase()
  await database.orm.close()
  return { env: { DATABASE_URL: database.url! }, drop: database.drop }
}

/**
 * The environment every process of one test shares: the test defaults (`NODE_ENV=test`, info
 * logs, the tests' APP_KEY) and {@link processStorage}'s storage of its own.
 */
export async function processEnv(prefix: string): Promise<{ env: Record<string, string>; drop: () => Promise<void> }> {
  const storage = await processStorage(prefix)
  return { env: { NODE_ENV: 'test', LOG_LEVEL: 'info', APP_KEY: TEST_APP_KEY, ...storage.env }, drop: storage.drop }
}

/** What {@link processSuite} gives a describe block. */
export interface ProcessSuite {
  /** The processes' environment ({@link processEnv} plus the suite's own), set in `beforeAll`. */
  env: Record<string, string>
  /** Processes the tests started: stopped after the suite. */
  processes: ServiceProcess[]
  /** Prints the last output of every process if the running test fails (call it first in the test). */
  dumpOnFailure: () => void
}

/**
 * Registers the `beforeAll` and `afterAll` of a describe block whose tests start service
 * processes: fresh storage ({@link processEnv}, `prefix` names it) with `extraEnv()` added (read
 * after the block's earlier `beforeAll`s, so it may name a server they started), and after the
 * block every process stopped and the storage dropped.
 */
export function processSuite(prefix: string, extraEnv: () => Record<string, string> = () => ({})): ProcessSuite {
  const suite: ProcessSuite = {
    env: {},
    processes: [],
    dumpOnFailure: () => onTestFailed(() => console.error(suite.processes.map((proc) => proc.output().slice(-6000)).join('\n---- next process ----\n'))),
  }
  let drop: (() => Promise<void>) | undefined
  beforeAll(async () => {
    const base = await processEnv(prefix)
    drop = base.drop
    suite.env = { ...base.env, ...extraEnv() }
  }, 60_000)
  afterAll(async () => {
    for (const proc of suite.processes) await stopProcess(proc)
    await drop?.()
  })
  return suite
}

/** A started process, what it printed so far, and how it ended. */
export interface ServiceProcess {
  child: ChildProcess
  /** Everything it wrote to stdout and stderr. */
  output: () => string
  /** Settles with the exit code (null after a signal) once it has exited. */
  exited: Promise<number | null>
}

/** A started `npm start`, with an HTTP client for it. */
export interface ServerProcess extends ServiceProcess {
  url: string
  http: TestApp['http']
}

/**
 * Starts `script` (src/server.ts or src/worker.ts) with `env` over the test process's
 * environment, without its `REDIS_URL` unless `env` names one: the run bus's Redis channels are
 * not scoped by database, so processes of other test files (or other checkouts) on the same Redis
 * would cancel these processes' runs by id. Resolves once its output matches `readyLine`.
 * `nodeArgs` go to Node before the script (a benchmark's `--cpu-prof`).
 * @throws when it exits first or is not ready within 60 s.
 */
export async function startProcess(
  script: string,
  env: Record<string, string>,
  readyLine: RegExp,
  nodeArgs: string[] = [],
): Promise<ServiceProcess> {
  const { REDIS_URL: _redis, ...inherited } = process.env
  void _redis
  const child = spawn(process.execPath, [...NODE_FLAGS, ...nodeArgs, '--import', 'tsx', script], {
    env: { ...inherited, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => resolve(code))
    child.once('error', (error) => {
      output += `\n${error.message}`
      resolve(-1)
    })
  })
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} did not start: ${output.slice(-2000)}`)), 60_000)
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      if (readyLine.test(output)) {
        clearTimeout(timer)
        resolve()
      }
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    void exited.then((code) => reject(new Error(`${script} exited with ${code}: ${output.slice(-2000)}`)))
  })
  return { child, output: () => output, exited }
}

/** Starts `npm start` on a free loopback port. */
export async function startServer(env: Record<string, string>): Promise<ServerProcess> {
  const port = await freePort()
  const started = await startProcess('src/server.ts', { ...env, HOST: '127.0.0.1', PORT: String(port) }, /listening on/)
  const url = `http://127.0.0.1:${port}`
  return { ...started, url, http: httpClient(url) }
}

/** Sends `signal` unless the process has exited; resolves with its exit code once it has. */
export async function stopProcess(proc: ServiceProcess | undefined, signal: NodeJS.Signals = 'SIGKILL'): Promise<number | null> {
  if (!proc) return null
  if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill(signal)
  return proc.exited
}

/**
 * Polls `read` every 100 ms until `done` holds for its answer; throws with the last answer (or what
 * `describe` makes of it) after `timeoutMs`.
 */
export async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number, describe: (value: T) => unknown = (value) => value): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > deadline) throw new Error(`not reached within ${timeoutMs} ms: ${JSON.stringify(describe(value)).slice(0, 2000)}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** A loopback HTTP server counting `GET /hit/<key>` by key (workflow HTTP request nodes call it to say they ran). */
export interface HitCounter {
  url: string
  /** Hits so far, by key. */
  hits: Map<string, number>
  close: () => Promise<void>
}

/** Starts a {@link HitCounter}; it answers `{"ok": true}`. */
export async function startHitCounter(): Promise<HitCounter> {
  const hits = new Map<string, number>()
  const server = createServer((req, res) => {
    const key = (req.url ?? '').replace(/^\/hit\//, '')
    hits.set(key, (hits.get(key) ?? 0) + 1)
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
