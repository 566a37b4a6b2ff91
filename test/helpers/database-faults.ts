/**
 * PostgreSQL connections ended on purpose, as a failover or a pooler restart ends them
 * (docs/operations.md, "Database deadlines"), and what must read back intact afterwards: for
 * test/faults-database.test.ts and the connection-loss phases of `npm run bench:faults`
 * (bench/database-outage.ts). Everything here talks to PostgreSQL through plain `pg` clients of
 * the caller's, never through the service, so that it keeps working while the service's
 * connections are the ones being ended.
 */
import pg from 'pg'
import { TEST_APP_KEY } from './app.ts'
import { freshDatabase } from './database.ts'

/** A fresh database for a test that ends its connections, and the test's own client on it. */
export interface FaultDatabase {
  url: string
  /** Its name, as `pg_stat_activity.datname` shows it. */
  database: string
  /** The test's own connection: it ends the others and reads the outcome, and is never ended. */
  admin: pg.Client
  /** The environment of the service processes on it (test defaults, short connect deadline, 1 s workflow heartbeat). */
  env: Record<string, string>
  /** Closes the client and drops the database. */
  close: () => Promise<void>
}

/** Creates a {@link FaultDatabase} on the server of `DATABASE_URL` (test/helpers/database.ts). */
export async function faultDatabase(): Promise<FaultDatabase> {
  const fresh = await freshDatabase()
  await fresh.orm.close()
  const url = fresh.url!
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  const env = { NODE_ENV: 'test', LOG_LEVEL: 'info', APP_KEY: TEST_APP_KEY, DATABASE_URL: url, TOOL_ALLOW_PRIVATE_NETWORK: 'true', DATABASE_CONNECT_TIMEOUT_MS: '2000', WORKFLOW_HEARTBEAT_MS: '1000' }
  return {
    url,
    database: new URL(url).pathname.slice(1),
    admin,
    env,
    close: async () => {
      await admin.end()
      await fresh.drop()
    },
  }
}

/**
 * What the database driver says about a lost connection (the `pg` messages, SQLSTATEs and socket
 * errors that `databaseUnavailable` recognises, MikroORM's wrapper, a connection string): none of
 * it may reach a user, in an HTTP body or in a stored error.
 */
export const DRIVER_TEXT =
  /terminating connection|administrator command|connection terminated|connection failure|not queryable|trying to connect|too many clients|ECONNREFUSED|ECONNRESET|57P0\d|DriverException|postgres(ql)?:\/\//i

/**
 * Ends every connection to `database` except the caller's own (the service's pools, the job
 * queue's pool and its LISTEN connection) with `pg_terminate_backend`. `admin` may be connected to
 * that database or to another one of the same server; it needs the right to signal those backends
 * (a superuser, the same role, or `pg_signal_backend`). Answers how many it ended.
 */
export async function endConnections(admin: pg.Client, database: string): Promise<number> {
  const result = await admin.query<{ ended: boolean }>(
    'select pg_terminate_backend(pid) as ended from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
    [database],
  )
  return result.rows.filter((row) => row.ended).length
}

/** A running {@link startTerminator}. */
export interface Terminator {
  /** Rounds of {@link endConnections} so far, and the connections they ended. */
  readonly rounds: number
  readonly ended: number
  /** Settles once `forMs` has passed (or {@link Terminator.stop} was called) and the last round is done. */
  readonly done: Promise<void>
  /** Stops before `forMs` has passed. */
  stop: () => Promise<void>
}

/**
 * Ends every connection to `database` ({@link endConnections}) again and again for `forMs`, a
 * random pause of `everyMs[0]`..`everyMs[1]` milliseconds before each round: connections drop at
 * moments that do not line up with the load's own rhythm.
 * @param admin its own connection, which is never ended; a round that fails (the admin connection
 *   itself in trouble) rejects `done`.
 */
export function startTerminator(admin: pg.Client, database: string, options: { everyMs: [number, number]; forMs: number }): Terminator {
  const deadline = Date.now() + options.forMs
  let stopped = false
  let wake: (() => void) | undefined
  const state = { rounds: 0, ended: 0 }
  const done = (async () => {
    for (;;) {
      const [min, max] = options.everyMs
      const pause = Math.min(min + Math.random() * (max - min), deadline - Date.now())
      if (stopped || pause <= 0) return
      await new Promise<void>((resolve) => {
        wake = resolve
        setTimeout(resolve, pause)
      })
      if (stopped) return
      state.ended += await endConnections(admin, database)
      state.rounds++
    }
  })()
  return {
    get rounds() {
      return state.rounds
    },
    get ended() {
      return state.ended
    },
    done,
    stop: async () => {
      stopped = true
      wake?.()
      await done
    },
  }
}

/** A run whose event log is not `seq` 1..`events_count` ending with its final event. */
export interface RunLogGap {
  uuid: string
  status: string
  events_count: number
  events: number
  first_seq: number | null
  last_seq: number | null
  last_type: string | null
}

/**
 * The runs of `client`'s database whose event log has a gap: its `run_events` are not exactly
 * `seq` 1..`runs.events_count` (the pair is the key, so count, first and last tell), or, for a run
 * that ended, its last event is not the one its status says (`run.succeeded` for `succeeded`...).
 */
export async function runLogGaps(client: pg.Client): Promise<RunLogGap[]> {
  const result = await client.query<RunLogGap>(
    `select r.uuid, r.status, r.events_count, count(e.seq)::int as events, min(e.seq) as first_seq, max(e.seq) as last_seq,
       (select l.type from run_events l where l.run_id = r.id order by l.seq desc limit 1) as last_type
     from runs r left join run_events e on e.run_id = r.id
     group by r.id`,
  )
  return result.rows.filter(
    (row) =>
      row.events !== row.events_count ||
      (row.events > 0 && (row.first_seq !== 1 || row.last_seq !== row.events_count)) ||
      (['succeeded', 'failed', 'canceled'].includes(row.status) && row.last_type !== `run.${row.status}`),
  )
}

/** What is stored of the service's work, read on a connection of the caller's: see {@link storedWork}. */
export interface StoredWork {
  /** Every run, with the messages of its thread (`[role, content]`, oldest first; each run of these tests has a thread of its own). */
  runs: { uuid: string; status: string; error: string | null; messages: [string, string][] | null }[]
  /** The runs whose event log has a gap ({@link runLogGaps}). */
  gaps: RunLogGap[]
  /** Every command room firing, with its task's uuid. */
  firings: { uuid: string; task: string; status: string; error: string | null; run_uuid: string | null; execution_uuid: string | null }[]
  /** Every workflow execution, with its workflow's uuid. */
  executions: { uuid: string; workflow: string; status: string; error: string | null; output: Record<string, unknown> | null }[]
  /** Stored error texts users can read besides those above: node errors of executions, `run.failed` events. */
  otherErrors: string[]
}

/** Runs, executions and firings still `queued` or `running`. */
export async function openWork(client: pg.Client): Promise<{ runs: number; executions: number; firings: number }> {
  const { rows } = await client.query<{ runs: number; executions: number; firings: number }>(
    `select (select count(*)::int from runs where status in ('queued', 'running')) as runs,
       (select count(*)::int from workflow_executions where status in ('queued', 'running')) as executions,
       (select count(*)::int from command_room_task_firings where status in ('queued', 'running')) as firings`,
  )
  return rows[0]
}

/** Everything {@link StoredWork} lists, read from `client`'s database. */
export async function storedWork(client: pg.Client): Promise<StoredWork> {
  // One after the other: a pg.Client runs one query at a time.
  const runs = await client.query<StoredWork['runs'][number]>(
    `select r.uuid, r.status, r.error::text as error,
       (select json_agg(json_build_array(m.role, m.content) order by m.id) from messages m where m.thread_id = r.thread_id and m.deleted_at is null) as messages
     from runs r`,
  )
  const gaps = await runLogGaps(client)
  const firings = await client.query<StoredWork['firings'][number]>(
    `select f.uuid, t.uuid as task, f.status, f.error, f.run_uuid, f.execution_uuid
     from command_room_task_firings f join command_room_tasks t on t.id = f.task_id`,
  )
  const executions = await client.query<StoredWork['executions'][number]>(
    `select e.uuid, w.uuid as workflow, e.status, e.error, e.output from workflow_executions e join workflows w on w.id = e.workflow_id`,
  )
  const nodeErrors = await client.query<{ text: string }>(`select error::text as text from workflow_execution_data where error is not null`)
  const eventErrors = await client.query<{ text: string }>(`select data::text as text from run_events where type = 'run.failed'`)
  return {
    runs: runs.rows,
    gaps,
    firings: firings.rows,
    executions: executions.rows,
    otherErrors: [...nodeErrors.rows, ...eventErrors.rows].map((row) => row.text),
  }
}

/** Each stored error of `work` with {@link DRIVER_TEXT} in it, named. */
export function driverTextIn(work: StoredWork): string[] {
  return [
    ...work.runs.filter((run) => DRIVER_TEXT.test(run.error ?? '')).map((run) => `run ${run.uuid}: ${run.error}`),
    ...work.firings.filter((f) => DRIVER_TEXT.test(f.error ?? '')).map((f) => `firing ${f.uuid}: ${f.error}`),
    ...work.executions.filter((e) => DRIVER_TEXT.test(e.error ?? '')).map((e) => `execution ${e.uuid}: ${e.error}`),
    ...work.otherErrors.filter((text) => DRIVER_TEXT.test(text)).map((text) => `node or event: ${text}`),
  ]
}

/** The runs of `work` that did not end `succeeded` with their thread's user message answered `Echo: <it>` once (the test upstream's default reply). */
export function runsWithoutEcho(work: StoredWork): string[] {
  return work.runs
    .filter((run) => {
      const [user, assistant, ...more] = run.messages ?? []
      return (
        run.status !== 'succeeded' ||
        user?.[0] !== 'user' ||
        assistant?.[0] !== 'assistant' ||
        assistant[1] !== `Echo: ${user[1]}` ||
        more.length > 0
      )
    })
    .map((run) => `${run.uuid} ${run.status} ${run.error ?? ''} ${JSON.stringify(run.messages)}`)
}

/**
 * The warnings and errors a service process logged (pino JSON lines of level 40 and up), one
 * short line each: time, level, message, error message, execution. Its raw lines can carry whole
 * `pg` clients, too long to read in a failed test's output.
 */
export function processWarnings(output: string): string {
  return output
    .split('\n')
    .filter((line) => /^\{"level":[4-6]0/.test(line))
    .map((line) => {
      let entry: { time: number; level: number; msg: string; err?: { message?: string }; execution?: string; run?: string }
      try {
        entry = JSON.parse(line)
      } catch {
        // The last line, still being written.
        return line.slice(0, 300)
      }
      return `${new Date(entry.time).toISOString()} ${entry.level} ${entry.msg}: ${entry.err?.message ?? ''} ${entry.execution ?? entry.run ?? ''}`
    })
    .join('\n')
}
