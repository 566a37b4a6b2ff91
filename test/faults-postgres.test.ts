/**
 * PostgreSQL faults (docs/operations.md, "Database deadlines"): a statement whose connection the
 * server ends, or that cannot get a connection, answers 503 with Retry-After and never a 500 or
 * the connection's details; `/ready` answers within its deadline when the database does not.
 *
 * The first two groups run in either mode of the suite (the errors are those `pg` and MikroORM
 * throw, made by hand). The last starts real processes (test/helpers/processes.ts) on a fresh
 * PostgreSQL database, only when DATABASE_URL is set, and ends every connection they hold to it,
 * several times, while requests and background executions are in flight: every request is
 * answered, nothing is stored twice or lost, every execution ends `succeeded` once.
 */
import { DriverException } from '@mikro-orm/core'
import { PostgreSqlConnection } from '@mikro-orm/postgresql'
import Fastify from 'fastify'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it, onTestFailed, vi } from 'vitest'
import { handleRouteError } from '../src/http/errors.ts'
import { READY_DATABASE_DEADLINE_MS } from '../src/http/probes.plugin.ts'
import { openOrm } from '../src/platform/db.ts'
import { databaseUnavailable, ServiceUnavailableError } from '../src/platform/errors.ts'
import { toTRPCError } from '../src/trpc/errors.ts'
import { createTestApp, type TestApp } from './helpers/app.ts'
import { faultDatabase } from './helpers/database-faults.ts'
import {
  startHitCounter,
  startProcess,
  startServer,
  stopProcess,
  until,
  type HitCounter,
  type ServiceProcess,
} from './helpers/processes.ts'

/** An error as `pg` makes it from a server's ErrorResponse with SQLSTATE `code`. */
function serverError(code: string, message: string): Error {
  const error = new pg.DatabaseError(message, message.length, 'error')
  error.code = code
  return error
}

/** An error of a socket as Node makes it (`connect ECONNREFUSED 127.0.0.1:5432`). */
function socketError(code: string): Error {
  return Object.assign(new Error(`connect ${code} 127.0.0.1:5432`), {
    code,
    errno: -111,
    syscall: 'connect',
    address: '127.0.0.1',
    port: 5432,
  })
}

describe('a lost database connection is a 503 with Retry-After', () => {
  it('recognises the errors of a connection that ended, was refused or was not had in time, bare and as MikroORM wraps them', () => {
    const lost = [
      serverError('57P01', 'terminating connection due to administrator command'),
      serverError('57P02', 'terminating connection due to crash of another server process'),
      serverError('57P03', 'the database system is starting up'),
      serverError('08006', 'connection failure'),
      serverError('53300', 'sorry, too many clients already'),
      new Error('Connection terminated unexpectedly'),
      new Error('Connection terminated due to connection timeout'),
      new Error('timeout exceeded when trying to connect'),
      new Error('Client has encountered a connection error and is not queryable'),
      socketError('ECONNREFUSED'),
      socketError('ECONNRESET'),
    ]
    for (const error of lost) {
      for (const thrown of [error, new DriverException(error)]) {
        const mapped = databaseUnavailable(thrown)
        expect(mapped, thrown.message).toBeInstanceOf(ServiceUnavailableError)
        expect(mapped).toMatchObject({ status: 503, retryAfterSeconds: 1, message: 'The database is unavailable; retry shortly' })
      }
    }
    const others = [
      serverError('23505', 'duplicate key value violates unique constraint "agents_uuid_unique"'),
      serverError('57014', 'canceling statement due to statement timeout'),
      serverError('22P02', 'invalid input syntax for type uuid'),
      new TypeError('fetch failed', { cause: socketError('ECONNREFUSED') }),
      new Error('Something else'),
      'Connection terminated unexpectedly',
    ]
    for (const error of others) expect(databaseUnavailable(error), String(error)).toBeUndefined()
  })

  it('maps it to SERVICE_UNAVAILABLE with Retry-After on procedures, and answers it on plain routes without the connection details', async () => {
    const headers: Record<string, string> = {}
    const mapped = toTRPCError(new DriverException(socketError('ECONNREFUSED')), (name, value) => (headers[name] = value))
    expect(mapped).toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: 'The database is unavailable; retry shortly' })
    expect(headers).toEqual({ 'Retry-After': '1' })

    const app = Fastify()
    app.setErrorHandler(handleRouteError)
    app.get('/terminated', () => Promise.reject(serverError('57P01', 'terminating connection due to administrator command')))
    app.get('/refused', () => Promise.reject(socketError('ECONNREFUSED')))
    app.get('/other', () => Promise.reject(new Error('a fault')))
    for (const path of ['/terminated', '/refused']) {
      const res = await app.inject({ method: 'GET', url: path })
      expect(res.statusCode, path).toBe(503)
      expect(res.headers['retry-after']).toBe('1')
      expect(res.json()).toMatchObject({ message: 'The database is unavailable; retry shortly', code: 'SERVICE_UNAVAILABLE' })
      expect(res.body).not.toMatch(/127\.0\.0\.1|5432|terminating/)
    }
    expect((await app.inject({ method: 'GET', url: '/other' })).statusCode).toBe(500)
    await app.close()
  })
})

describe('the service on a database that fails under it', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp()
  })
  afterAll(async () => t?.close())

  it('/ready answers 503 naming the database within its deadline when select 1 gets no answer', async () => {
    // Every connection of the pool (PGlite: its one connection) held by an open transaction: the
    // probe's select 1 waits for one, as it would on a stalled database.
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    const holders = Array.from({ length: process.env.DATABASE_URL ? 5 : 1 }, () =>
      t.runtime.orm.em.fork().transactional(async (em) => {
        await em.execute('select 1')
        await held
      }),
    )
    await new Promise((resolve) => setTimeout(resolve, 200))
    const started = performance.now()
    const res = await t.http('GET', '/ready')
    const ms = performance.now() - started
    release()
    await Promise.all(holders)
    expect(res.status).toBe(503)
    expect(res.headers.get('retry-after')).toBe('1')
    expect(res.body).toMatchObject({ status: 'unavailable', database: 'unreachable' })
    expect(ms).toBeGreaterThanOrEqual(READY_DATABASE_DEADLINE_MS - 50)
    expect(ms).toBeLessThan(READY_DATABASE_DEADLINE_MS + 2_000)
    expect((await t.http('GET', '/ready')).status).toBe(200)
  })

  it('a request whose statement loses its connection answers 503 with Retry-After, REST and tRPC alike', async () => {
    const user = await t.make.user()
    const terminated = () => new DriverException(serverError('57P01', 'terminating connection due to administrator command'))
    // The token is read by a prepared statement: through the ORM's pg pool on PostgreSQL, through
    // a forked EntityManager on PGlite (src/platform/db.ts). Both fail as a terminated backend does.
    const connection = t.runtime.orm.em.getConnection()
    const fail = async () => {
      if (connection instanceof PostgreSqlConnection) {
        const pool = (await connection.getNativeClient()) as { query: (...args: unknown[]) => Promise<unknown> }
        return vi.spyOn(pool, 'query').mockImplementation(() => Promise.reject(terminated()))
      }
      const fork = t.runtime.orm.em.fork.bind(t.runtime.orm.em)
      return vi.spyOn(t.runtime.orm.em, 'fork').mockImplementation(() => {
        const em = fork()
        em.execute = (() => Promise.reject(terminated())) as typeof em.execute
        return em
      })
    }
    for (const path of ['/api/v1/user', '/trpc/user.me']) {
      const spy = await fail()
      const res = await t.http('GET', path, { token: user.token })
      spy.mockRestore()
      expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(503)
      expect(res.headers.get('retry-after')).toBe('1')
      expect(JSON.stringify(res.body)).toContain('The database is unavailable; retry shortly')
      expect(JSON.stringify(res.body)).not.toMatch(/terminating|postgres:\/\//)
    }
    expect((await t.http('GET', '/api/v1/user', { token: user.token })).status).toBe(200)
  })
})

/** One answer of the load and how long it took; status 0 when it was given up on. */
interface Answer {
  kind: 'create' | 'queue'
  n: number
  status: number
  ms: number
  retryAfter: string | null
  body: any
}

/**
 * The warnings and errors a process logged, one short line each (time, message, error, execution):
 * its raw lines carry whole `pg` clients.
 */
function warnings(proc: ServiceProcess): string {
  const lines = proc
    .output()
    .split('\n')
    .filter((line) => /^\{"level":([4-6]0)/.test(line))
  return lines
    .map((line) => {
      const entry = JSON.parse(line) as { time: number; level: number; msg: string; err?: { message?: string }; execution?: string }
      return `${new Date(entry.time).toISOString()} ${entry.level} ${entry.msg}: ${entry.err?.message ?? ''} ${entry.execution ?? ''}`
    })
    .join('\n')
}

/** A request unanswered after this fails the test: a lost connection must not hang it. */
const GIVE_UP_MS = 5_000

describe.runIf(Boolean(process.env.DATABASE_URL))('every connection to the database ended under load, several times', () => {
  const CREATES = 200
  const QUEUED = 60
  const CONCURRENCY = 20
  const TERMINATIONS = 5
  let counter: HitCounter
  let admin: pg.Client
  let env: Record<string, string>
  let database: string
  let close: (() => Promise<void>) | undefined
  const processes: ServiceProcess[] = []

  beforeAll(async () => {
    counter = await startHitCounter()
    const fresh = await faultDatabase()
    close = fresh.close
    ;({ admin, database, env } = fresh)
  }, 60_000)
  afterAll(async () => {
    for (const proc of processes) await stopProcess(proc)
    await counter?.close()
    await close?.()
  })

  it('a connection ended in the middle of a transaction goes back to the pool: the next statement of a pool of one runs', async () => {
    const orm = await openOrm({ kind: 'postgres', url: env.DATABASE_URL, poolMax: 1, connectTimeoutMs: 2_000 })
    try {
      const failed = await orm.em
        .fork()
        .transactional(async (em) => {
          const [{ pid }] = await em.execute<{ pid: number }[]>('select pg_backend_pid() as pid')
          await admin.query('select pg_terminate_backend($1)', [pid])
          await em.execute('select 1')
        })
        .then(
          () => null,
          (error: unknown) => error,
        )
      expect(databaseUnavailable(failed), String(failed)).toBeInstanceOf(ServiceUnavailableError)
      // Kysely gives back neither the connection nor its failed ROLLBACK: without the pool's own
      // release on the connection's end, this waited out the connect deadline.
      const started = performance.now()
      expect(await orm.em.fork().execute('select 1 as one')).toEqual([{ one: 1 }])
      expect(performance.now() - started).toBeLessThan(1_000)
    } finally {
      await orm.close()
    }
  })

  it('answers every request 2xx or 503 with Retry-After, stores each 2xx create once, ends every execution succeeded once, and stays ready', async () => {
    onTestFailed(() => console.error(processes.map(warnings).join('\n---- next process ----\n')))
    const api = await startServer({ ...env, WORKER: 'false' })
    processes.push(api)
    const worker = await startProcess('src/worker.ts', env, /worker started/)
    processes.push(worker)
    const signUp = await api.http('POST', '/api/v1/auth/sign-up', {
      body: { name: 'Faults', email: 'pg-faults@example.com', password: 'correct horse battery staple' },
    })
    expect(signUp.status, JSON.stringify(signUp.body)).toBe(201)
    const token = String(signUp.body.data.access_token)
    const workflow = await api.http('POST', '/api/v1/workflows', {
      token,
      body: {
        name: 'Counted',
        nodes: [
          { id: 'start', type: 'manual_trigger', parameters: {} },
          { id: 'hit', type: 'http_request', parameters: { method: 'GET', url: `="${counter.url}/hit/" & $execution.uuid` } },
        ],
        edges: [{ source: 'start', target: 'hit' }],
      },
    })
    expect(workflow.status, JSON.stringify(workflow.body)).toBe(201)
    const workflowUuid = String(workflow.body.data.uuid)

    const send = async (kind: Answer['kind'], n: number): Promise<Answer> => {
      const [path, body] =
        kind === 'create'
          ? ['/api/v1/agents', { name: `pg-fault-${n}`, instruction: 'Answer.' }]
          : [`/api/v1/workflows/${workflowUuid}/run`, { background: true }]
      const started = performance.now()
      try {
        const response = await fetch(api.url + path, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(GIVE_UP_MS),
        })
        const text = await response.text()
        return {
          kind,
          n,
          status: response.status,
          ms: performance.now() - started,
          retryAfter: response.headers.get('retry-after'),
          body: text ? JSON.parse(text) : null,
        }
      } catch (error) {
        return { kind, n, status: 0, ms: performance.now() - started, retryAfter: null, body: String(error) }
      }
    }
    // Creates and background runs interleaved, CONCURRENCY at a time.
    const tasks: [Answer['kind'], number][] = []
    for (let n = 0, q = 0; n < CREATES; n++) {
      tasks.push(['create', n])
      if (n % 3 === 2 && q < QUEUED) tasks.push(['queue', q++])
    }
    while (tasks.filter(([kind]) => kind === 'queue').length < QUEUED) tasks.push(['queue', tasks.length])
    const answers: Answer[] = []
    let next = 0
    let streaming = true
    const stream = Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < tasks.length) {
          const [kind, n] = tasks[next++]
          answers.push(await send(kind, n))
        }
      }),
    ).finally(() => (streaming = false))
    // Ends every other connection to the database (the processes' pools, pg-boss's pool and its
    // LISTEN connection), TERMINATIONS times while the stream runs, 150 ms apart.
    let ended = 0
    for (let round = 0; round < TERMINATIONS; round++) {
      await until(
        async () => answers.length,
        (count) => count >= (round + 1) * 10 || !streaming,
        10_000,
      )
      const result = await admin.query<{ ended: boolean }>(
        'select pg_terminate_backend(pid) as ended from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
        [database],
      )
      ended += result.rows.filter((row) => row.ended).length
      await new Promise((resolve) => setTimeout(resolve, 150))
    }
    const terminatedWhileStreaming = streaming
    await stream

    const byStatus = answers.reduce<Record<string, number>>(
      (counts, a) => ({ ...counts, [`${a.kind} ${a.status}`]: (counts[`${a.kind} ${a.status}`] ?? 0) + 1 }),
      {},
    )
    console.info(
      `ended ${ended} backends in ${TERMINATIONS} rounds${terminatedWhileStreaming ? ' during the stream' : ''}; answers ${JSON.stringify(byStatus)}; slowest ${Math.round(Math.max(...answers.map((a) => a.ms)))} ms`,
    )
    expect(answers).toHaveLength(tasks.length)
    expect(terminatedWhileStreaming).toBe(true)
    expect(ended).toBeGreaterThanOrEqual(TERMINATIONS)
    for (const a of answers) {
      const what = `${a.kind} ${a.n}: ${a.status} after ${Math.round(a.ms)} ms ${JSON.stringify(a.body)}`
      expect(a.status === 503 || (a.status >= 200 && a.status < 300), what).toBe(true)
      if (a.status === 503) {
        expect(a.retryAfter, what).toMatch(/^\d+$/)
        expect(a.body, what).toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: 'The database is unavailable; retry shortly' })
      }
    }

    // Every 2xx create is stored, once; a create answered 503 is stored at most once (its
    // commit may have landed before the connection ended).
    const stored = await admin.query<{ name: string; uuid: string }>(
      `select name, uuid from agents where name like 'pg-fault-%' and deleted_at is null`,
    )
    const rowsByName = Map.groupBy(stored.rows, (row) => row.name)
    for (const a of answers.filter((answer) => answer.kind === 'create')) {
      const rows = rowsByName.get(`pg-fault-${a.n}`) ?? []
      if (a.status === 201)
        expect(
          rows.map((row) => row.uuid),
          `create ${a.n}`,
        ).toEqual([a.body.data.uuid])
      else expect(rows.length, `create ${a.n}`).toBeLessThanOrEqual(1)
    }

    // Every execution recorded ends succeeded, each ran its node once, and every 202 is one of them.
    const executions = () =>
      admin.query<{ uuid: string; status: string; error_code: string | null; error: string | null; attempts: number }>(
        `select e.uuid, e.status, e.error_code, e.error, e.attempts from workflow_executions e join workflows w on w.id = e.workflow_id where w.uuid = $1`,
        [workflowUuid],
      )
    const finals = await until(
      executions,
      (result) => result.rows.every((row) => row.status !== 'queued' && row.status !== 'running'),
      40_000,
      (result) => result.rows.filter((row) => row.status === 'queued' || row.status === 'running'),
    )
    const accepted = answers.filter((a) => a.kind === 'queue' && a.status === 202).map((a) => String(a.body.data.uuid))
    const statuses = Object.fromEntries(finals.rows.map((row) => [row.uuid, row.status]))
    expect(finals.rows.filter((row) => row.status !== 'succeeded')).toEqual([])
    for (const uuid of accepted) expect(statuses[uuid], `execution ${uuid}`).toBe('succeeded')
    expect(finals.rows.length).toBeLessThanOrEqual(QUEUED)
    expect(Object.fromEntries(finals.rows.map((row) => [row.uuid, counter.hits.get(row.uuid) ?? 0]))).toEqual(
      Object.fromEntries(finals.rows.map((row) => [row.uuid, 1])),
    )

    // The service answers again: ready, and a burst of twice the pool's size is served whole (a
    // connection the pool lost track of would leave fewer to serve it, or none).
    await until(
      () => api.http('GET', '/ready'),
      (res) => res.status === 200,
      5_000,
      (res) => res.body,
    )
    const burst = await Promise.all(Array.from({ length: CONCURRENCY * 2 }, (_, n) => send('create', CREATES + n)))
    expect(burst.filter((a) => a.status !== 201).map((a) => `${a.status} ${JSON.stringify(a.body)}`)).toEqual([])
    expect(await stopProcess(worker, 'SIGTERM')).toBe(0)
    expect(await stopProcess(api, 'SIGTERM')).toBe(0)
  }, 60_000)
})
