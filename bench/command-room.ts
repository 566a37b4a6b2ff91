/**
 * `npm run bench:command-room`: command room tasks firing on time (docs/api/command-room.md,
 * "Timing guarantees") on PostgreSQL, with an API process (`WORKER=false`) and two worker processes
 * (`npm run worker`), none on Redis, on a fresh database `aw_bench_command_room_*`.
 *
 * For each round of N tasks (1,000, then 10,000 with BENCH_COMMAND_ROOM_TASKS=1000,10000):
 *   - one agent task (on the built-in `local-test-model`, which needs no upstream) is stored
 *     through the API, paused, and copied N times with SQL as active `once` tasks all due at the
 *     same whole second, BENCH_COMMAND_ROOM_LEAD seconds ahead (storing 10,000 through the API
 *     would take minutes; the scheduler reads the same rows either way, and the API process does
 *     not tick, so the workers find them at their next look as they would tasks stored through it);
 *   - meanwhile `GET /api/v1/user` is sent at a steady BENCH_COMMAND_ROOM_RATE requests per second
 *     (open loop: one every 1/rate s, whether or not the previous ones were answered), from the
 *     end of the insert until every firing has ended: "idle" is the latency before the due time,
 *     "during" from the due time until the last firing ended;
 *   - then one more look of the schedulers (3 s), and the checks: one firing per task (none twice),
 *     every task fired (none lost), every firing `succeeded` with its own run, none `queued` or
 *     `running`, no fire job left in the queue; each firing's lateness (`fired_at - due_at`: when
 *     a worker claimed it) p50/p99/max, and when the last one ended.
 *
 * Targets (docs/benchmarks.md): every firing starts within 5 s of its due time, none twice, none
 * lost; the API's p99 during the firings within 2x of idle. The exit code is 0 whether or not a
 * target is met (a measurement, not a test), 1 on an error or a failed check.
 *
 * Environment:
 *   BENCH_DATABASE_URL          admin connection of the PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres)
 *   BENCH_COMMAND_ROOM_TASKS    comma-separated round sizes (default 1000)
 *   BENCH_COMMAND_ROOM_RATE     API requests per second during a round (default 50)
 *   BENCH_COMMAND_ROOM_LEAD     seconds from the insert to the due time, the idle window (default 15)
 *   BENCH_COMMAND_ROOM_TIMEOUT  seconds after the due time to wait for the firings to end (default 600)
 *   BENCH_PROFILE               a folder: the workers run under `node --cpu-prof` writing there
 *                               (bench/profile-summary.ts with --from/--to reads one)
 */
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { TEST_APP_KEY } from '../test/helpers/app.ts'
import { startProcess } from '../test/helpers/processes.ts'
import { cpuSeconds, cpuSince, cpuSnapshot, machineBusySeconds } from './cpu.ts'
import { type Bench, CHILD_ENV, expectOk, fmt, machineOf, runBench, signUp, startService, summarise, writeResults } from './harness.ts'
import { startSampler } from './sampler.ts'

/** A positive whole number from the environment, else `fallback`. */
function envCount(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback)
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a whole number >= 1`)
  return value
}

const settings = {
  rounds: (process.env.BENCH_COMMAND_ROOM_TASKS ?? '1000').split(',').map((size) => {
    const n = Number(size.trim())
    if (!Number.isInteger(n) || n < 1) throw new Error('BENCH_COMMAND_ROOM_TASKS: whole numbers >= 1, comma-separated')
    return n
  }),
  rate: envCount('BENCH_COMMAND_ROOM_RATE', 50),
  leadSeconds: envCount('BENCH_COMMAND_ROOM_LEAD', 15),
  timeoutSeconds: envCount('BENCH_COMMAND_ROOM_TIMEOUT', 600),
}
/** BENCH_PROFILE: a folder; the workers run under `node --cpu-prof` writing there. */
const profileDir = process.env.BENCH_PROFILE ? path.resolve(process.env.BENCH_PROFILE) : undefined
const LATENESS_TARGET_MS = 5_000
const API_RATIO_TARGET = 2

/** What one round measured. */
interface Round {
  tasks: number
  dueAt: string
  firings: number
  distinctTasks: number
  succeeded: number
  open: number
  runs: number
  jobsLeft: number
  lost: number
  twice: number
  latenessMs: ReturnType<typeof summarise>
  /** From the due time until a tick recorded the firing, and until its job was in the queue. */
  recordedMs: ReturnType<typeof summarise>
  sentMs: ReturnType<typeof summarise>
  /** From the due time until the last firing ended. */
  lastEndedMs: number
  /** Firings claimed in each second after the due time. */
  claimedPerSecond: number[]
  apiIdle: ReturnType<typeof summarise> & { failed: number }
  apiDuring: ReturnType<typeof summarise> & { failed: number }
  apiRatio: number
  /** CPU seconds of each process during the round, and of the benchmark database's PostgreSQL backends (`postgres`). */
  cpu: Record<string, number | null>
  /**
   * Transactions committed in the benchmark database during the round (pg_stat_database), per
   * task: the firings' statements outside a transaction each count as one, and the API's requests
   * and this process's own counts are in it too.
   */
  commitsPerTask: number
  /**
   * Cores busy from the due time until every firing had ended (the whole machine's busy time
   * over that window, /proc/stat): with this benchmark's processes (the API, the workers, the
   * database's backends, this process) and with everything else on the machine; null without /proc.
   */
  firingCores: { ours: number; others: number } | null
}

/** CPU seconds so far of `pids` and of the backends of `database`, and of the whole machine. */
async function busyNow(db: pg.Client, database: string, pids: number[]): Promise<{ ours: Map<number, number>; machine: number | null }> {
  return { ours: cpuSnapshot([...pids, process.pid, ...(await backendPids(db, database))]), machine: machineBusySeconds() }
}

/** PIDs of the PostgreSQL backends connected to `database`. */
async function backendPids(db: pg.Client, database: string): Promise<number[]> {
  const result = await db.query<{ pid: number }>("select pid from pg_stat_activity where datname = $1 and backend_type = 'client backend'", [
    database,
  ])
  return result.rows.map((row) => row.pid)
}

/** Transactions committed in `database` so far, as the statistics last reported them. */
async function commits(db: pg.Client, database: string): Promise<number> {
  await db.query('select pg_stat_clear_snapshot()')
  return Number((await db.query('select xact_commit::float8 as n from pg_stat_database where datname = $1', [database])).rows[0].n)
}

async function round(o: {
  size: number
  db: pg.Client
  database: string
  api: string
  token: string
  templateUuid: string
  pids: Record<string, number>
}): Promise<Round> {
  const { size, db } = o
  const label = `bench-${size}-${randomBytes(3).toString('hex')}`
  const cpu0 = Object.fromEntries(Object.entries(o.pids).map(([name, pid]) => [name, cpuSeconds(pid)]))
  // Warm the API's path first (connections, caches), outside the idle window.
  for (let i = 0; i < 50; i++) await expectOk(await fetch(`${o.api}/api/v1/user`, { headers: { authorization: `Bearer ${o.token}` } }), 'GET /api/v1/user')
  const backends0 = cpuSnapshot(await backendPids(db, o.database))
  const commits0 = await commits(db, o.database)
  const due = new Date(Math.ceil((Date.now() + settings.leadSeconds * 1000) / 1000) * 1000)
  await db.query(
    `insert into command_room_tasks (uuid, user_id, workspace_id, name, agent_id, workflow_id, input, schedule, timezone, run_at,
       is_active, next_run_at, created_at, updated_at)
     select gen_random_uuid(), t.user_id, t.workspace_id, $2 || '-' || g, t.agent_id, t.workflow_id, t.input, 'once', 'UTC', $3,
       true, $3, now(), now()
     from command_room_tasks t, generate_series(1, $4::int) g where t.uuid = $1`,
    [o.templateUuid, label, due, size],
  )
  console.log(`(${size}) ${fmt(size)} tasks due at ${due.toISOString()}, ${Math.round((due.getTime() - Date.now()) / 1000)} s from now`)
  const sampler = startSampler(`${o.api}/api/v1/user`, o.token, settings.rate)
  const counts = async () =>
    (
      await db.query<{ total: number; open: number }>(
        `select count(*)::int as total, count(*) filter (where f.status in ('queued', 'running'))::int as open
         from command_room_task_firings f join command_room_tasks t on t.id = f.task_id where t.name like $1`,
        [`${label}-%`],
      )
    ).rows[0]
  const deadline = due.getTime() + settings.timeoutSeconds * 1000
  let reported = 0
  const ownPids = Object.values(o.pids)
  let atDue: { ours: Map<number, number>; machine: number | null; at: number } | undefined
  for (;;) {
    await sleep(250)
    if (Date.now() < due.getTime()) continue
    atDue ??= { ...(await busyNow(db, o.database, ownPids)), at: performance.now() }
    const c = await counts()
    if (Date.now() - reported >= 5_000) {
      reported = Date.now()
      console.log(`(${size}) ${c.total - c.open} of ${fmt(size)} firings ended, ${c.open} queued or running`)
    }
    if (c.total === size && c.open === 0) break
    if (Date.now() > deadline) throw new Error(`(${size}) not every firing ended within ${settings.timeoutSeconds} s: ${JSON.stringify(c)}`)
  }
  const atEnd = { ...(await busyNow(db, o.database, ownPids)), at: performance.now() }
  const seconds = (atEnd.at - atDue!.at) / 1000
  const ours = cpuSince(atDue!.ours, atEnd.ours) + [...atEnd.ours].reduce((sum, [pid, s]) => sum + (atDue!.ours.has(pid) ? 0 : s), 0)
  const firingCores =
    atDue!.machine === null || atEnd.machine === null ? null : { ours: ours / seconds, others: (atEnd.machine - atDue!.machine - ours) / seconds }
  const samples = await sampler.stop()
  // One more look of each scheduler: nothing fires twice afterwards.
  await sleep(3_000)
  const cpu: Record<string, number | null> = Object.fromEntries(
    Object.entries(o.pids).map(([name, pid]) => {
      const after = cpuSeconds(pid)
      return [name, after === null || cpu0[name] === null ? null : after - cpu0[name]!]
    }),
  )
  // A backend opened during the round counts from 0; one closed during it is missed (the pools keep theirs).
  const backends1 = cpuSnapshot(await backendPids(db, o.database))
  cpu.postgres = backends1.size ? [...backends1].reduce((sum, [pid, seconds]) => sum + seconds - (backends0.get(pid) ?? 0), 0) : null
  // The statistics reach pg_stat_database within a second of a commit; the checks below wait 3 s before this.
  const commitsPerTask = ((await commits(db, o.database)) - commits0) / size
  const [check] = (
    await db.query(
      `select count(f.id)::int as firings, count(distinct f.task_id)::int as "distinctTasks",
         count(f.id) filter (where f.status = 'succeeded' and r.status = 'succeeded')::int as succeeded,
         count(f.id) filter (where f.status in ('queued', 'running'))::int as open,
         count(distinct r.id)::int as runs,
         (select count(*)::int from command_room_tasks t2 where t2.name like $1
            and not exists (select 1 from command_room_task_firings f2 where f2.task_id = t2.id)) as lost,
         (select count(*)::int from (select task_id from command_room_task_firings f3 join command_room_tasks t3 on t3.id = f3.task_id
            where t3.name like $1 group by task_id having count(*) > 1) twice) as twice,
         (extract(epoch from max(f.updated_at) - $2::timestamptz) * 1000)::float8 as "lastEndedMs"
       from command_room_tasks t join command_room_task_firings f on f.task_id = t.id left join runs r on r.uuid = f.run_uuid
       where t.name like $1`,
      [`${label}-%`, due],
    )
  ).rows
  const jobsLeft = Number(
    (await db.query(`select count(*)::int as n from pgboss.job where name = 'command-room.fire' and state in ('created', 'retry', 'active')`)).rows[0].n,
  )
  // Where the lateness goes: recorded by a tick, its job sent to the queue (pg-boss's row, whose id
  // is the firing's uuid), claimed by a worker (fired_at).
  const stages = (
    await db.query<{ ms: number; recorded: number; sent: number | null }>(
      `select (extract(epoch from f.fired_at - f.due_at) * 1000)::float8 as ms,
         (extract(epoch from f.created_at - f.due_at) * 1000)::float8 as recorded,
         (extract(epoch from j.created_on - f.due_at) * 1000)::float8 as sent
       from command_room_task_firings f join command_room_tasks t on t.id = f.task_id
       left join pgboss.job j on j.name = 'command-room.fire' and j.id = f.uuid
       where t.name like $1`,
      [`${label}-%`],
    )
  ).rows
  const lateness = stages.map((row) => Number(row.ms))
  const sent = stages.filter((row) => row.sent !== null).map((row) => Number(row.sent))
  const claimedPerSecond: number[] = []
  for (const ms of lateness) {
    const second = Math.max(0, Math.floor(ms / 1000))
    claimedPerSecond[second] = (claimedPerSecond[second] ?? 0) + 1
  }
  const window = (from: number, to: number) => {
    const inside = samples.filter((sample) => sample.at >= from && sample.at < to)
    return { ...summarise(inside.filter((sample) => sample.ok).map((sample) => sample.ms)), failed: inside.filter((sample) => !sample.ok).length }
  }
  const endedAt = due.getTime() + Number(check.lastEndedMs)
  const apiIdle = window(0, due.getTime())
  const apiDuring = window(due.getTime(), endedAt)
  return {
    tasks: size,
    dueAt: due.toISOString(),
    firings: check.firings,
    distinctTasks: check.distinctTasks,
    succeeded: check.succeeded,
    open: check.open,
    runs: check.runs,
    jobsLeft,
    lost: check.lost,
    twice: check.twice,
    latenessMs: summarise(lateness),
    recordedMs: summarise(stages.map((row) => Number(row.recorded))),
    sentMs: summarise(sent),
    lastEndedMs: Number(check.lastEndedMs),
    claimedPerSecond: Array.from(claimedPerSecond, (n) => n ?? 0),
    apiIdle,
    apiDuring,
    apiRatio: apiDuring.p99 / apiIdle.p99,
    cpu,
    commitsPerTask,
    firingCores,
  }
}

const ms = (value: number) => fmt(value)
/** CPU milliseconds per firing of `seconds` over a round. */
const perFiring = (r: Round, seconds: number) => fmt((seconds * 1000) / r.tasks, 2)

await runBench('aw_bench_command_room', async (bench: Bench) => {
  const env = { ...CHILD_ENV, DATABASE_URL: bench.databaseUrl, APP_KEY: TEST_APP_KEY, REDIS_URL: '' }
  const api = await startService(bench, [], { WORKER: 'false', APP_KEY: TEST_APP_KEY })
  // Workers print `worker started` at info; they have no HTTP port to poll.
  const workers = await Promise.all(
    ['worker-1', 'worker-2'].map(async (name) => {
      const nodeArgs = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []
      const proc = await startProcess('src/worker.ts', { ...env, LOG_LEVEL: 'info' }, /worker started/, nodeArgs)
      if (process.env.BENCH_DEBUG_LOGS) bench.closers.push(async () => void (await import('node:fs')).writeFileSync(`/tmp/${name}.log`, proc.output()))
      bench.children.push({ name, url: '', process: proc.child })
      return { name, pid: proc.child.pid! }
    }),
  )
  const db = new pg.Client({ connectionString: bench.databaseUrl })
  await db.connect()
  bench.closers.push(() => db.end())

  const { token } = await signUp(api.url, 'Commander', 'commander@example.com')
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
  const agent = JSON.parse(
    (
      await expectOk(
        await fetch(`${api.url}/api/v1/agents`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ name: 'Inbox summariser', instruction: 'Summarise.', metadata: { large_language_model: 'local-test-model' } }),
        }),
        'create the agent',
      )
    ).toString('utf8'),
  ).data
  const template = JSON.parse(
    (
      await expectOk(
        await fetch(`${api.url}/api/v1/command-room/tasks`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ name: 'template', agent_uuid: agent.uuid, input: 'Summarise my inbox', schedule: 'daily', is_active: false }),
        }),
        'store the template task',
      )
    ).toString('utf8'),
  ).data

  const pids = { api: api.process.pid!, ...Object.fromEntries(workers.map((worker) => [worker.name, worker.pid])) }
  const rounds: Round[] = []
  for (const size of settings.rounds) {
    const result = await round({ size, db, database: bench.database, api: api.url, token, templateUuid: template.uuid, pids })
    rounds.push(result)
    console.log(
      `(${size}) lateness p50 ${ms(result.latenessMs.p50)} / p99 ${ms(result.latenessMs.p99)} / max ${ms(result.latenessMs.max)} ms ` +
        `(recorded max ${ms(result.recordedMs.max)} ms, job sent max ${ms(result.sentMs.max)} ms); last ended ${ms(result.lastEndedMs)} ms after due; ` +
        `firings ${result.firings}, tasks ${result.distinctTasks}, succeeded ${result.succeeded}, open ${result.open}, twice ${result.twice}, lost ${result.lost}, jobs left ${result.jobsLeft}; ` +
        `API p99 idle ${ms(result.apiIdle.p99)} ms, during ${ms(result.apiDuring.p99)} ms (${result.apiRatio.toFixed(2)}x); ` +
        `CPU ms per firing: workers ${perFiring(result, (result.cpu['worker-1'] ?? 0) + (result.cpu['worker-2'] ?? 0))}, ` +
        `PostgreSQL ${result.cpu.postgres == null ? '—' : perFiring(result, result.cpu.postgres)}; commits per firing ${result.commitsPerTask.toFixed(1)}; ` +
        `cores busy while firing: ours ${result.firingCores ? fmt(result.firingCores.ours, 2) : '—'}, others ${result.firingCores ? fmt(result.firingCores.others, 2) : '—'}`,
    )
    if (result.twice || result.lost || result.open || result.succeeded !== size || result.firings !== size || result.runs !== size) process.exitCode = 1
  }

  const machine = machineOf(bench.postgres)
  const date = new Date().toISOString()
  const lines = [
    `# Command room benchmark, ${date}`,
    '',
    `${machine.line}, PostgreSQL ${bench.postgres}; an API process (WORKER=false) and two workers; GET /api/v1/user at ${settings.rate}/s.`,
    '',
    '| tasks due at one second | lateness (claimed) p50 / p99 / max | recorded max, job sent max | last firing ended | none twice, none lost | API p99 idle / during (ratio) | CPU s: API / worker 1 / worker 2 / PostgreSQL | commits per firing | cores busy while firing: ours / others |',
    '| ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |',
    ...rounds.map(
      (r) =>
        `| ${fmt(r.tasks)} | ${ms(r.latenessMs.p50)} / ${ms(r.latenessMs.p99)} / ${ms(r.latenessMs.max)} ms | ${ms(r.recordedMs.max)}, ${ms(r.sentMs.max)} ms | ${ms(r.lastEndedMs)} ms | ` +
        `${r.twice === 0 && r.lost === 0 && r.firings === r.tasks ? 'yes' : 'NO'} (${r.firings} firings, ${r.succeeded} succeeded) | ` +
        `${fmt(r.apiIdle.p99, 1)} / ${fmt(r.apiDuring.p99, 1)} ms (${r.apiRatio.toFixed(2)}x) | ` +
        `${['api', 'worker-1', 'worker-2', 'postgres'].map((name) => (r.cpu[name] == null ? '—' : fmt(r.cpu[name]!, 1))).join(' / ')} | ${r.commitsPerTask.toFixed(1)} | ` +
        `${r.firingCores ? `${fmt(r.firingCores.ours, 2)} / ${fmt(r.firingCores.others, 2)}` : '—'} |`,
    ),
    '',
    `Targets: lateness max <= ${LATENESS_TARGET_MS} ms, none twice, none lost, API p99 during <= ${API_RATIO_TARGET}x idle.`,
  ]
  console.log('\n' + lines.join('\n'))
  writeResults(['command-room-latest'], { date, machine: machine.json, settings, rounds }, lines.join('\n') + '\n')
})
