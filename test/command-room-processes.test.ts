/**
 * The command room scheduler across real processes (docs/api/command-room.md, "Timing
 * guarantees"): `npm start` and `npm run worker` under tsx (test/helpers/processes.ts), without
 * Redis, on the mode the suite runs in (several processes on one database only on PostgreSQL).
 *
 * - Two workers and an API process (`WORKER=false`) fire 200 `once` tasks stored through the API,
 *   all due at the same second a few seconds ahead: each fires once, every firing succeeds, none
 *   is left queued or running; the lateness (`fired_at - due_at`) is printed and under 5 s.
 * - A process killed (SIGKILL) while a firing waits for its model call, then started again: the
 *   restarted process takes the run over, and the firing ends recorded once, succeeded.
 * - Due times missed while no process ran (`next_run_at` moved back two weeks with SQL while every
 *   process is stopped, as if they had been down that long): on restart each task fires once, for
 *   its earliest missed due time, not once per missed period, and its schedule goes on from now.
 *
 * Agents run on the built-in `local-test-model`, except in the kill, whose model call goes to the
 * slow test upstream (test/helpers/upstream.ts) so that the firing is under way when it dies.
 */
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startUpstream, type Upstream } from './helpers/upstream.ts'
import { processSuite, startProcess, startServer, stopProcess, until, type ServerProcess } from './helpers/processes.ts'
import { openOrm, type Orm } from '../src/platform/db.ts'

const TASKS = '/api/v1/command-room/tasks'
const PASSWORD = 'correct horse battery staple'

/**
 * Runs `sql` on the processes' storage. On PGlite only while no process has the data folder open
 * (PGlite is one process's database); on PostgreSQL at any time.
 */
async function withStorage<T>(env: Record<string, string>, use: (orm: Orm) => Promise<T>): Promise<T> {
  const orm = await openOrm(env.DATABASE_URL ? { kind: 'postgres', url: env.DATABASE_URL, poolMax: 2 } : { kind: 'pglite', dir: path.join(env.DATA_DIR, 'pglite') })
  try {
    return await use(orm)
  } finally {
    await orm.close(true)
  }
}

/** Signs a user up on `server` and creates an agent (on `local-test-model` unless `model` is null): the token and the agent's uuid. */
async function userWithAgent(server: ServerProcess, email: string, model: string | null = 'local-test-model'): Promise<{ token: string; agentUuid: string }> {
  const signUp = await server.http('POST', '/api/v1/auth/sign-up', { body: { name: 'Commander', email, password: PASSWORD } })
  expect(signUp.status, JSON.stringify(signUp.body)).toBe(201)
  const token = String(signUp.body.data.access_token)
  const agent = await server.http('POST', '/api/v1/agents', {
    token,
    body: { name: 'Scheduled', instruction: 'Answer.', ...(model ? { metadata: { large_language_model: model } } : {}) },
  })
  expect(agent.status, JSON.stringify(agent.body)).toBe(201)
  return { token, agentUuid: String(agent.body.data.uuid) }
}

/** Nearest-rank percentile of sorted `values`. */
const percentile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]

describe.runIf(Boolean(process.env.DATABASE_URL))('two workers and an API process firing 200 due tasks', () => {
  const TASK_COUNT = 200
  const suite = processSuite('aw-command-room')

  it('fires each task once, every firing succeeds, none is left queued or running (their lateness is reported)', async () => {
    suite.dumpOnFailure()
    const [api, ...workers] = await Promise.all([
      startServer({ ...suite.env, WORKER: 'false' }),
      startProcess('src/worker.ts', suite.env, /worker started/),
      startProcess('src/worker.ts', suite.env, /worker started/),
    ])
    suite.processes.push(api, ...workers)
    const { token, agentUuid } = await userWithAgent(api as ServerProcess, 'two-workers@example.com')

    // Stored through the API process, which does not tick: the workers see them at their next look.
    const due = new Date(Math.ceil((Date.now() + 8_000) / 1000) * 1000)
    for (let start = 0; start < TASK_COUNT; start += 20) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(20, TASK_COUNT - start) }, (_, i) =>
          api.http('POST', TASKS, { token, body: { name: `Task ${start + i}`, agent_uuid: agentUuid, input: `task ${start + i}`, schedule: 'once', run_at: due.toISOString() } }),
        ),
      )
      for (const res of batch) expect(res.status, JSON.stringify(res.body)).toBe(201)
    }
    expect(Date.now(), 'every task was stored before its due time').toBeLessThan(due.getTime())

    await withStorage(suite.env, async (orm) => {
      const sql = <T>(statement: string) => orm.em.fork().execute<T[]>(statement)
      const counts = () =>
        sql<{ total: number; tasks: number; succeeded: number; open: number }>(
          `select count(*)::int as total, count(distinct task_id)::int as tasks, count(*) filter (where status = 'succeeded')::int as succeeded,
             count(*) filter (where status in ('queued', 'running'))::int as open
           from command_room_task_firings`,
        ).then((rows) => rows[0])
      await until(counts, (c) => c.total === TASK_COUNT && c.open === 0, Math.max(0, due.getTime() - Date.now()) + 30_000)
      // One more look of every scheduler: nothing fires again.
      await new Promise((resolve) => setTimeout(resolve, 2_500))
      expect(await counts()).toEqual({ total: TASK_COUNT, tasks: TASK_COUNT, succeeded: TASK_COUNT, open: 0 })

      const [runs] = await sql<{ runs: number; linked: number; succeeded: number }>(
        `select (select count(*)::int from runs) as runs, count(distinct f.run_uuid)::int as linked,
           count(*) filter (where r.status = 'succeeded')::int as succeeded
         from command_room_task_firings f left join runs r on r.uuid = f.run_uuid`,
      )
      expect(runs, 'one run per firing, each succeeded').toEqual({ runs: TASK_COUNT, linked: TASK_COUNT, succeeded: TASK_COUNT })
      const [tasks] = await sql<{ once: number; open: number }>(
        `select count(*) filter (where firings_count = 1 and last_status = 'succeeded' and next_run_at is null)::int as once,
           count(*) filter (where next_run_at is not null)::int as open from command_room_tasks`,
      )
      expect(tasks).toEqual({ once: TASK_COUNT, open: 0 })
      const [jobs] = await sql<{ left: number }>(
        `select count(*)::int as left from pgboss.job where name = 'command-room.fire' and state in ('created', 'retry', 'active')`,
      )
      expect(jobs.left).toBe(0)

      const lateness = (await sql<{ ms: number }>(`select extract(epoch from fired_at - due_at)::float8 * 1000 as ms from command_room_task_firings`))
        .map((row) => Number(row.ms))
        .sort((a, b) => a - b)
      const [p50, p99, max] = [percentile(lateness, 0.5), percentile(lateness, 0.99), lateness.at(-1)!]
      console.info(`${TASK_COUNT} firings by 2 workers: lateness (fired_at - due_at) p50 ${Math.round(p50)} ms, p99 ${Math.round(p99)} ms, max ${Math.round(max)} ms`)
      // How late they start is a benchmark's matter (bench/command-room.ts), not this test's.
      expect(lateness[0]).toBeGreaterThanOrEqual(0)
    })
    for (const proc of suite.processes) expect(await stopProcess(proc, 'SIGTERM')).toBe(0)
  }, 90_000)
})

describe('a process killed during a firing, then started again', () => {
  let upstream: Upstream
  beforeAll(async () => {
    upstream = await startUpstream()
    // The first call never answers in time: the firing waits for its run when the process dies.
    // Asked again (by the process that takes the run over), the model answers.
    let calls = 0
    upstream.respondWith(() => (++calls === 1 ? { kind: 'slow', delayMs: 60_000 } : { kind: 'text', text: 'Took my time.' }))
  })
  afterAll(() => upstream?.close())
  const suite = processSuite('aw-command-room-kill', () => ({ OPENAI_API_KEY: 'sk-upstream-test', OPENAI_BASE_URL: upstream.url }))

  it('ends the firing recorded once, succeeded: its run is taken over by the restarted process and answered', async () => {
    suite.dumpOnFailure()
    const first = await startServer(suite.env)
    suite.processes.push(first)
    const { token, agentUuid } = await userWithAgent(first, 'killed-firing@example.com', null)
    // A whole second: repeating schedules keep run_at's wall-clock second, not its milliseconds.
    const runAt = new Date(Math.ceil((Date.now() + 2_000) / 1000) * 1000)
    const created = await first.http('POST', TASKS, { token, body: { name: 'Slow', agent_uuid: agentUuid, input: 'take your time', schedule: 'hourly', run_at: runAt.toISOString() } })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    const taskUuid = String(created.body.data.uuid)
    const firings = async (server: ServerProcess) => (await server.http('GET', `${TASKS}/${taskUuid}/firings`, { token })).body.data as Record<string, unknown>[]
    // Fired, its run linked and mid-call.
    await until(() => firings(first), (list) => list.length === 1 && list[0].status === 'running' && Boolean(list[0].run_uuid), 20_000)
    await until(async () => upstream.requests.length, (n) => n === 1, 10_000)

    await stopProcess(first, 'SIGKILL')
    const killed = Date.now()
    const second = await startServer(suite.env)
    suite.processes.push(second)
    const [firing] = await until(() => firings(second), (list) => list.length > 0 && !['queued', 'running'].includes(String(list[0].status)), 60_000)
    console.info(`the killed firing ended ${Date.now() - killed} ms after the kill`)
    expect(firing).toMatchObject({ status: 'succeeded', due_at: runAt.toISOString(), error: null })
    // The same run went on (docs/api/runs.md, "Interrupted runs"): asked once more, answered.
    const run = (await second.http('GET', `/api/v1/runs/${String(firing.run_uuid)}`, { token })).body.data.run
    expect(run).toMatchObject({ status: 'succeeded', output: 'Took my time.' })
    // Nothing more comes of it: no second firing, no third model call.
    await new Promise((resolve) => setTimeout(resolve, 2_500))
    expect(await firings(second)).toHaveLength(1)
    expect(upstream.requests).toHaveLength(2)
    const task = (await second.http('GET', `${TASKS}/${taskUuid}`, { token })).body.data
    expect(task).toMatchObject({ firings_count: 1, last_status: 'succeeded', is_active: true })
    expect(new Date(task.next_run_at).getTime()).toBe(runAt.getTime() + 3_600_000)
    expect(await stopProcess(second, 'SIGTERM')).toBe(0)
  }, 90_000)
})

describe('a restart after due times were missed while no process ran', () => {
  const suite = processSuite('aw-command-room-missed')

  it('fires each task once, for its earliest missed due time, and its schedule goes on from now', async () => {
    suite.dumpOnFailure()
    const first = await startServer(suite.env)
    suite.processes.push(first)
    const { token, agentUuid } = await userWithAgent(first, 'missed@example.com')
    const inAnHour = new Date(Math.ceil((Date.now() + 3_600_000) / 60_000) * 60_000).toISOString()
    // Two weeks is a whole number of each schedule's periods (UTC: no daylight-saving change).
    const schedules = ['once', 'hourly', 'daily', 'weekly', '*/5 * * * *']
    const stored: string[] = []
    for (const schedule of schedules) {
      for (let n = 0; n < 4; n++) {
        const res = await first.http('POST', TASKS, { token, body: { name: `${schedule} ${n}`, agent_uuid: agentUuid, input: `missed ${n}`, schedule, run_at: inAnHour } })
        expect(res.status, JSON.stringify(res.body)).toBe(201)
        stored.push(String(res.body.data.uuid))
      }
    }
    expect(await stopProcess(first, 'SIGTERM')).toBe(0)

    // As if every process had been down for two weeks: each task's next due time, and run_at with
    // it, two weeks back (a `once` task's only due time passed; the others missed many periods).
    const missed = await withStorage(suite.env, async (orm) => {
      await orm.em.fork().execute(`update command_room_tasks set next_run_at = next_run_at - interval '14 days', run_at = run_at - interval '14 days'`)
      const rows = await orm.em.fork().execute<{ uuid: string; at: Date | string }[]>(`select uuid, next_run_at as at from command_room_tasks`)
      return new Map(rows.map((row) => [row.uuid, new Date(row.at).toISOString()]))
    })

    // On PostgreSQL an API process and a worker come back together, both ticking at once.
    const restarted = Date.now()
    const back = await Promise.all([startServer(suite.env), ...(suite.env.DATABASE_URL ? [startProcess('src/worker.ts', suite.env, /worker started/)] : [])])
    suite.processes.push(...back)
    const server = back[0] as ServerProcess
    const firingsOf = async (uuid: string) => (await server.http('GET', `${TASKS}/${uuid}/firings?per_page=100`, { token })).body.data as Record<string, unknown>[]
    const all = () => Promise.all(stored.map(async (uuid) => ({ uuid, firings: await firingsOf(uuid) })))
    const ended = (list: Awaited<ReturnType<typeof all>>) => list.every((task) => task.firings.length > 0 && task.firings.every((f) => !['queued', 'running'].includes(String(f.status))))
    await until(all, ended, 30_000, (list) => list.map((task) => task.firings.map((f) => f.status)))
    // One more look of the schedulers: nothing else fires for the missed periods.
    await new Promise((resolve) => setTimeout(resolve, 2_500))
    for (const { uuid, firings } of await all()) {
      // A due time after the restart (the five-minute cron crossing a boundary) is a new one, not a missed one.
      const forMissed = firings.filter((f) => new Date(String(f.due_at)).getTime() < restarted)
      expect(forMissed.map((f) => [f.due_at, f.status]), uuid).toEqual([[missed.get(uuid), 'succeeded']])
      const task = (await server.http('GET', `${TASKS}/${uuid}`, { token })).body.data
      if (task.schedule === 'once') expect(task.next_run_at).toBeNull()
      else expect(new Date(task.next_run_at).getTime()).toBeGreaterThan(restarted)
    }
    for (const proc of back) expect(await stopProcess(proc, 'SIGTERM')).toBe(0)
  }, 90_000)
})
