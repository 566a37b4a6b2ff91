/**
 * `npm run bench:webhooks`: outbound webhook delivery (docs/api/webhooks.md, "Delivery") on
 * PostgreSQL, with an API process (`WORKER=false`) and one worker process (`npm run worker`, the
 * one runtime that works the queue), none on Redis, on a fresh database `aw_bench_webhooks_*`.
 * The receivers are the tests' loopback receiver (test/helpers/webhook-receiver.ts), in this
 * process; their endpoints are created through the API, subscribed to `run.succeeded`.
 *
 * Events are made the way the service makes them: runs of the workspace's owner are inserted
 * `running` with SQL, then set `succeeded` in batched statements (BENCH_WEBHOOKS_BATCH runs per
 * statement, back to back or at a given rate, open loop), so the runs' trigger records one event
 * per run in each statement's transaction; each run's commit time is taken when its statement
 * returns. A receipt's latency is from its event's commit to the first request of it at that
 * receiver. Each round also counts the database's commits (pg_stat_database) and the CPU of the
 * worker, the API process and the database's backends.
 *
 *   throughput  N events (BENCH_WEBHOOKS_EVENTS, at BENCH_WEBHOOKS_RATE) to 3 endpoints: two answer 200, one 500 half the
 *               time (at random), with short retry delays so that its retries end. Checks: none
 *               lost (every event reached every endpoint with a 2xx answer: 2N receipts at the good
 *               ones), none twice (no request of a `webhook-id` after one answered 2xx), every
 *               delivery `succeeded`. Measures: event -> first attempt p50/p99/max, where that
 *               time goes (commit -> dispatched, -> job sent, -> job fetched, -> at the receiver,
 *               from the outbox's `dispatched_at` and pg-boss's job rows), deliveries per second
 *               from the first commit to the last 2xx.
 *   latency     N events again, at BENCH_WEBHOOKS_LATENCY_RATE: the same checks and measures, with no backlog.
 *   slow        M events (BENCH_WEBHOOKS_SLOW_EVENTS, at BENCH_WEBHOOKS_SLOW_RATE) to the same 3 endpoints, then M more while a
 *               4th endpoint, subscribed too, answers each request after 10 s
 *               (BENCH_WEBHOOKS_SLOW_MS; WEBHOOK_TIMEOUT_MS is 15 s): the 3 endpoints' event ->
 *               first attempt without and with the slow one. The slow endpoint is deleted after.
 *
 * Targets (docs/benchmarks.md): none lost, none twice; event -> first attempt p50 < 500 ms; the
 * slow endpoint does not delay the others. The exit code is 0 whether or not a target is met (a
 * measurement, not a test), 1 on an error or a failed check.
 *
 * Environment:
 *   BENCH_DATABASE_URL           admin connection of the PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres)
 *   BENCH_WEBHOOKS_PHASES        throughput,latency,slow (default all three)
 *   BENCH_WEBHOOKS_EVENTS        N (default 10,000)
 *   BENCH_WEBHOOKS_SLOW_EVENTS   M (default 1,000)
 *   BENCH_WEBHOOKS_RATE          throughput: runs set succeeded per second, or `max` (default): statements back to back
 *   BENCH_WEBHOOKS_LATENCY_RATE  latency: the same (default 20: 60 deliveries and 30 retries a second, well below what
 *                                one worker on 2 cores delivers, so that latency is the pipeline's, not a backlog's)
 *   BENCH_WEBHOOKS_SLOW_RATE     slow: the same (default 20: below what one worker on 2 cores delivers, so that
 *                                latency is the pipeline's, not a backlog's)
 *   BENCH_WEBHOOKS_BATCH         runs per statement (default 10)
 *   BENCH_WEBHOOKS_RETRY_DELAYS  WEBHOOK_RETRY_DELAYS of the worker (default twenty 1 s delays: a 50% endpoint
 *                                fails 21 attempts in a row once in 2 million events)
 *   BENCH_WEBHOOKS_SLOW_MS       the slow endpoint's answer time (default 10,000)
 *   BENCH_WEBHOOKS_TIMEOUT       seconds to wait for a round's deliveries (default 900)
 *   BENCH_WEBHOOKS_PROFILE=dir   the worker under --cpu-prof, its profile written to dir (bench/profile-summary.ts reads it)
 *   BENCH_WEBHOOKS_ACTIVITY=1    print what the database's backends were doing, sampled every 20 ms
 */
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { TEST_APP_KEY } from '../test/helpers/app.ts'
import { startProcess } from '../test/helpers/processes.ts'
import { startReceiver, type Receiver } from '../test/helpers/webhook-receiver.ts'
import { cpuSeconds, cpuSince, cpuSnapshot, machineBusySeconds } from './cpu.ts'
import {
  type Bench,
  CHILD_ENV,
  envList,
  envNumber,
  expectOk,
  fmt,
  machineOf,
  runBench,
  signUp,
  startService,
  summarise,
  writeResults,
} from './harness.ts'

/** Runs set succeeded per second from the environment; null (`max`): statements back to back. */
const rateOf = (name: string, fallback: string): number | null =>
  (process.env[name] ?? fallback) === 'max' ? null : envNumber(name, Number(fallback))
const settings = {
  phases: envList('BENCH_WEBHOOKS_PHASES', 'throughput,latency,slow'),
  events: Math.round(envNumber('BENCH_WEBHOOKS_EVENTS', 10_000)),
  slowEvents: Math.round(envNumber('BENCH_WEBHOOKS_SLOW_EVENTS', 1_000)),
  rate: rateOf('BENCH_WEBHOOKS_RATE', 'max'),
  latencyRate: rateOf('BENCH_WEBHOOKS_LATENCY_RATE', '20'),
  slowRate: rateOf('BENCH_WEBHOOKS_SLOW_RATE', '20'),
  batch: Math.round(envNumber('BENCH_WEBHOOKS_BATCH', 10)),
  retryDelays: process.env.BENCH_WEBHOOKS_RETRY_DELAYS ?? Array.from({ length: 20 }, () => '1').join(','),
  slowMs: envNumber('BENCH_WEBHOOKS_SLOW_MS', 10_000),
  timeoutSeconds: envNumber('BENCH_WEBHOOKS_TIMEOUT', 900),
  profileDir: process.env.BENCH_WEBHOOKS_PROFILE || undefined,
}
const P50_TARGET_MS = 500
/** Share of the flaky endpoint's answers that are 500. */
const FLAKY_FAILURE_SHARE = 0.5

type Summary = ReturnType<typeof summarise>

/** An endpoint of the workspace and its receiver, with what each request to it was answered. */
interface Endpoint {
  name: string
  uuid: string
  receiver: Receiver
  /** The status the receiver answered its `i`-th request with. */
  statusOf: (i: number) => number
  /** Per `webhook-id`: first request, requests, whether one got a 2xx, requests after that 2xx. */
  seen: Map<string, { first: number; requests: number; ok: boolean; afterOk: number; lastOk: number }>
  /** Requests of {@link Endpoint.receiver} folded into {@link Endpoint.seen} so far. */
  cursor: number
}

/** Folds the requests an endpoint got since the last call into its tally; their bodies are dropped (memory). */
function fold(endpoint: Endpoint): void {
  const received = endpoint.receiver.received
  for (; endpoint.cursor < received.length; endpoint.cursor++) {
    const request = received[endpoint.cursor]
    const id = request.headers['webhook-id']
    const status = endpoint.statusOf(endpoint.cursor)
    request.body = ''
    const entry = endpoint.seen.get(id) ?? { first: request.at, requests: 0, ok: false, afterOk: 0, lastOk: 0 }
    entry.requests++
    if (entry.ok) entry.afterOk++
    if (status >= 200 && status < 300 && !entry.ok) {
      entry.ok = true
      entry.lastOk = request.at
    }
    endpoint.seen.set(id, entry)
  }
}

/** The events of one round: each event's id with its run's commit time and the outbox's `created_at` (epoch ms). */
interface Produced {
  events: Map<string, { commit: number; created: number }>
  firstCommit: number
  lastCommit: number
  /** How far the last statement was sent behind its schedule (ms). */
  behindMs: number
}

/**
 * Makes `count` runs of the owner end: {@link settings}.batch at a time, `rate` runs per second,
 * each batch inserted `running` and then set `succeeded` in one statement (its trigger records the
 * events). A batch is inserted just before it ends, as runs start shortly before they end: runs
 * left `running` for long with no process beating for them would be taken over by the worker's
 * recovery sweep. Answers each event with its commit time.
 */
async function produce(
  db: pg.Client,
  owner: { userId: number; workspaceId: number },
  o: { count: number; rate: number | null; label: string },
): Promise<Produced> {
  const { count, rate, label } = o
  const commits = new Map<string, number>()
  const start = performance.now()
  let behindMs = 0
  for (let k = 0; k * settings.batch < count; k++) {
    if (rate !== null) {
      const due = start + ((k * settings.batch) / rate) * 1000
      const wait = due - performance.now()
      if (wait > 0) await sleep(wait)
      else behindMs = Math.max(behindMs, -wait)
    }
    const { rows: batch } = await db.query<{ id: string; uuid: string }>(
      `insert into runs (uuid, kind, status, model, input, workspace_id, user_id, started_at, created_at, updated_at)
       select gen_random_uuid(), 'agent', 'running', 'bench-model', jsonb_build_object('bench', $3::text, 'n', g), $1, $2, now(), now(), now()
       from generate_series($4::int, $5::int) g returning id, uuid`,
      [owner.workspaceId, owner.userId, label, k * settings.batch + 1, Math.min(count, (k + 1) * settings.batch)],
    )
    await db.query(
      `update runs set status = 'succeeded', output = 'Done.', finished_at = now(), updated_at = now(),
         latency_ms = (extract(epoch from now() - started_at) * 1000)::int where id = any($1::bigint[])`,
      [batch.map((row) => row.id)],
    )
    const at = Date.now()
    for (const row of batch) commits.set(row.uuid, at)
  }
  const recorded = await db.query<{ uuid: string; subject: string; created: number }>(
    `select uuid, subject_uuid as subject, (extract(epoch from created_at) * 1000)::float8 as created
     from outbox_events where subject_uuid = any($1::uuid[])`,
    [[...commits.keys()]],
  )
  if (recorded.rows.length !== count) throw new Error(`${label}: ${recorded.rows.length} events recorded for ${count} runs`)
  const events = new Map(recorded.rows.map((row) => [row.uuid, { commit: commits.get(row.subject)!, created: Number(row.created) }]))
  const times = [...commits.values()]
  return { events, firstCommit: Math.min(...times), lastCommit: Math.max(...times), behindMs }
}

/** Waits until every event reached each of `endpoints` with a 2xx and none of their deliveries is pending. */
async function settle(db: pg.Client, endpoints: Endpoint[], ids: string[], label: string): Promise<void> {
  const deadline = Date.now() + settings.timeoutSeconds * 1000
  let reported = Date.now()
  for (;;) {
    await sleep(250)
    for (const endpoint of endpoints) fold(endpoint)
    const okCounts = endpoints.map((endpoint) => ids.filter((id) => endpoint.seen.get(id)?.ok).length)
    if (okCounts.every((n) => n === ids.length)) {
      const { rows } = await db.query<{ n: number }>(
        `select count(*)::int as n from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id
         where d.event_id = any($1::uuid[]) and e.uuid = any($2::uuid[]) and d.status = 'pending'`,
        [ids, endpoints.map((endpoint) => endpoint.uuid)],
      )
      if (rows[0].n === 0) return
    }
    if (Date.now() - reported >= 5_000) {
      reported = Date.now()
      console.log(
        `(${label}) ${endpoints.map((endpoint, i) => `${endpoint.name} ${fmt(okCounts[i])}`).join(', ')} of ${fmt(ids.length)} answered 2xx`,
      )
    }
    if (Date.now() > deadline)
      throw new Error(
        `(${label}) not every event was delivered within ${settings.timeoutSeconds} s: ${okCounts.join(', ')} of ${ids.length}`,
      )
  }
}

/** One endpoint's outcome over a round's events. */
interface EndpointRound {
  name: string
  events: number
  requests: number
  /** Events that never got a 2xx. */
  lost: number
  /** Requests of a `webhook-id` after one had answered 2xx. */
  twice: number
  /** Deliveries by final status in the database. */
  statuses: Record<string, number>
  /** Event commit -> first request at the receiver, ms; and from the outbox's `created_at`. */
  latency: Summary
  latencyFromCreated: Summary
}

/** Where the time to a first attempt goes, ms, from the database's rows (see the module comment). */
interface Stages {
  commitToDispatched: Summary
  dispatchedToSent: Summary
  sentToFetched: Summary
  fetchedToReceived: Summary
  /** Events dispatched per second from the first commit to the last dispatch. */
  dispatchPerSecond: number
}

/** A round's outcome. */
interface Round {
  label: string
  events: number
  /** Runs set succeeded per second; null: back to back. */
  rate: number | null
  endpoints: EndpointRound[]
  /** Every endpoint's receipts together. */
  latency: Summary
  stages: Stages
  /** Successful deliveries (one per event and endpoint) per second, first commit to last 2xx. */
  deliveriesPerSecond: number
  /** Requests per second over the same window (retries included). */
  requestsPerSecond: number
  /**
   * Deliver jobs sent per request the receivers got: above 1 when leases ran out while their jobs
   * still waited in the queue (the attempt is then sent again, and the first job does nothing).
   */
  jobsPerRequest: number
  seconds: number
  behindMs: number
  /** CPU seconds of the worker, the API process, the database's backends; cores everything else on the machine kept busy meanwhile. */
  cpu: { worker: number | null; api: number | null; postgres: number; otherCores: number | null }
  /** Transactions the database committed during the round (each statement outside a transaction is one). */
  commits: number
}

/** The outcome at `endpoints` of `produced`'s events, read from the receivers and the database. */
async function measureRound(
  db: pg.Client,
  endpoints: Endpoint[],
  produced: Produced,
  label: string,
): Promise<Omit<Round, 'rate' | 'cpu' | 'commits'>> {
  const ids = [...produced.events.keys()]
  const { rows } = await db.query<{
    endpoint: string
    event: string
    status: string
    dispatched: number
    sent: number | null
    fetched: number | null
    jobs: number
  }>(
    // The job that made a delivery's first attempt: the last one fetched before it (an earlier job
    // whose lease ran out while it waited did nothing when fetched).
    `with jobs as (
       select (data->>'delivery_id')::bigint as id, created_on, started_on from pgboss.job where name = 'webhooks.deliver'),
     counted as (select id, count(*)::int as jobs from jobs group by id),
     attempting as (
       select distinct on (d.id) d.id, j.created_on as sent, j.started_on as fetched
       from webhook_deliveries d join jobs j on j.id = d.id
         and j.started_on <= (d.attempts->0->>'attempted_at')::timestamptz + interval '100 milliseconds'
       where d.event_id = any($1::uuid[])
       order by d.id, j.started_on desc)
     select e.uuid as endpoint, d.event_id as event, d.status, (extract(epoch from o.dispatched_at) * 1000)::float8 as dispatched,
       (extract(epoch from a.sent) * 1000)::float8 as sent, (extract(epoch from a.fetched) * 1000)::float8 as fetched, coalesce(c.jobs, 0) as jobs
     from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id join outbox_events o on o.uuid = d.event_id
     left join attempting a on a.id = d.id left join counted c on c.id = d.id
     where d.event_id = any($1::uuid[]) and e.uuid = any($2::uuid[])`,
    [ids, endpoints.map((endpoint) => endpoint.uuid)],
  )
  const all: number[] = []
  const stage = {
    commitToDispatched: [] as number[],
    dispatchedToSent: [] as number[],
    sentToFetched: [] as number[],
    fetchedToReceived: [] as number[],
  }
  let lastOk = 0
  let requests = 0
  const results = endpoints.map((endpoint): EndpointRound => {
    fold(endpoint)
    const latency: number[] = []
    const fromCreated: number[] = []
    let lost = 0
    let twice = 0
    let count = 0
    for (const [id, event] of produced.events) {
      const seen = endpoint.seen.get(id)
      if (!seen?.ok) lost++
      if (!seen) continue
      count += seen.requests
      twice += seen.afterOk
      lastOk = Math.max(lastOk, seen.lastOk)
      latency.push(seen.first - event.commit)
      fromCreated.push(seen.first - event.created)
    }
    requests += count
    all.push(...latency)
    const statuses: Record<string, number> = {}
    for (const row of rows.filter((r) => r.endpoint === endpoint.uuid)) {
      statuses[row.status] = (statuses[row.status] ?? 0) + 1
      const event = produced.events.get(row.event)!
      const first = endpoint.seen.get(row.event)?.first
      stage.commitToDispatched.push(Number(row.dispatched) - event.commit)
      if (row.sent !== null) stage.dispatchedToSent.push(Number(row.sent) - Number(row.dispatched))
      if (row.sent !== null && row.fetched !== null) stage.sentToFetched.push(Number(row.fetched) - Number(row.sent))
      if (row.fetched !== null && first !== undefined) stage.fetchedToReceived.push(first - Number(row.fetched))
    }
    return {
      name: endpoint.name,
      events: ids.length,
      requests: count,
      lost,
      twice,
      statuses,
      latency: summarise(latency),
      latencyFromCreated: summarise(fromCreated),
    }
  })
  const lastDispatch = Math.max(...rows.map((row) => Number(row.dispatched)))
  const jobs = rows.reduce((n, row) => n + Number(row.jobs), 0)
  const seconds = (lastOk - produced.firstCommit) / 1000
  return {
    label,
    events: ids.length,
    endpoints: results,
    latency: summarise(all),
    stages: {
      commitToDispatched: summarise(stage.commitToDispatched),
      dispatchedToSent: summarise(stage.dispatchedToSent),
      sentToFetched: summarise(stage.sentToFetched),
      fetchedToReceived: summarise(stage.fetchedToReceived),
      dispatchPerSecond: ids.length / ((lastDispatch - produced.firstCommit) / 1000),
    },
    deliveriesPerSecond: (ids.length * endpoints.length) / seconds,
    requestsPerSecond: requests / seconds,
    jobsPerRequest: jobs / requests,
    seconds,
    behindMs: produced.behindMs,
  }
}

/** The PIDs of the PostgreSQL backends of `database`. */
async function backends(admin: pg.Client, database: string): Promise<number[]> {
  const { rows } = await admin.query<{ pid: number }>(
    `select pid from pg_stat_activity where datname = $1 and backend_type = 'client backend'`,
    [database],
  )
  return rows.map((row) => row.pid)
}

/**
 * Samples what the database's backends do every {@link ACTIVITY_MS} (BENCH_WEBHOOKS_ACTIVITY=1):
 * each non-idle backend's statement (its first words) and wait, counted, a poor man's profile of
 * where the database's time goes (pg_stat_statements needs a server restart to load).
 */
function sampleActivity(admin: pg.Client, database: string): { stop: () => Promise<{ samples: number; top: [string, number][] }> } {
  const counts = new Map<string, number>()
  let samples = 0
  let stopped = false
  const loop = (async () => {
    while (!stopped) {
      const { rows } = await admin.query<{ what: string }>(
        `select coalesce(wait_event_type || ':' || wait_event, 'cpu') || ' | ' || left(regexp_replace(query, '\\s+', ' ', 'g'), 110) as what
         from pg_stat_activity where datname = $1 and state <> 'idle' and backend_type = 'client backend' and pid <> pg_backend_pid()`,
        [database],
      )
      samples++
      for (const row of rows) counts.set(row.what, (counts.get(row.what) ?? 0) + 1)
      await sleep(ACTIVITY_MS)
    }
  })()
  return {
    stop: async () => {
      stopped = true
      await loop
      return { samples, top: [...counts].sort((a, b) => b[1] - a[1]).slice(0, 25) }
    },
  }
}
const ACTIVITY_MS = 20

const pace = (rate: number | null) => (rate === null ? 'back to back' : `${fmt(rate)}/s`)
const line = (s: Summary) => `${fmt(s.p50)} / ${fmt(s.p99)} / ${fmt(s.max)}`

await runBench('aw_bench_webhooks', async (bench: Bench) => {
  const db = new pg.Client({ connectionString: bench.databaseUrl })
  const common = {
    APP_KEY: TEST_APP_KEY,
    WEBHOOK_ALLOW_PRIVATE_NETWORK: 'true',
    WEBHOOK_TIMEOUT_MS: '15000',
    WEBHOOK_RETRY_DELAYS: settings.retryDelays,
  }
  const api = await startService(bench, [], { ...common, WORKER: 'false' })
  const profile: Record<string, string> = settings.profileDir ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${settings.profileDir}` } : {}
  // The worker prints `worker started` at info; it has no HTTP port to poll.
  const worker = await startProcess(
    'src/worker.ts',
    { ...CHILD_ENV, DATABASE_URL: bench.databaseUrl, REDIS_URL: '', LOG_LEVEL: 'info', ...common, ...profile },
    /worker started/,
  )
  bench.children.push({ name: 'worker', url: '', process: worker.child })
  await db.connect()
  bench.closers.push(() => db.end())

  const { token, userId } = await signUp(api.url, 'Hooked', 'hooked@example.com')
  const [{ id: workspaceId }] = (
    await db.query<{ id: number }>(`select id::float8 as id from workspaces where user_id = $1 order by id limit 1`, [userId])
  ).rows
  const owner = { userId, workspaceId }
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
  const makeEndpoint = async (
    name: string,
    statusOf: (i: number) => number,
    configure: (receiver: Receiver) => void = () => {},
  ): Promise<Endpoint> => {
    const receiver = await startReceiver()
    configure(receiver)
    bench.closers.push(() => receiver.close())
    const body = JSON.stringify({ url: receiver.url, description: name, event_types: ['run.succeeded'] })
    const created = await fetch(`${api.url}/api/v1/webhook-endpoints`, { method: 'POST', headers, body })
    const { data } = JSON.parse((await expectOk(created, `create endpoint ${name}`)).toString('utf8')) as { data: { uuid: string } }
    return { name, uuid: data.uuid, receiver, statusOf, seen: new Map(), cursor: 0 }
  }
  // The flaky receiver answers from a queue of random statuses drawn here, so each request's answer is known.
  const flakyStatuses: number[] = []
  const expected = 4 * (2 * settings.events + 2 * settings.slowEvents) * 2
  for (let i = 0; i < expected; i++) flakyStatuses.push(Math.random() < FLAKY_FAILURE_SHARE ? 500 : 200)
  const good = [await makeEndpoint('good-1', () => 200), await makeEndpoint('good-2', () => 200)]
  const flaky = await makeEndpoint(
    'flaky',
    (i) => flakyStatuses[i] ?? 200,
    (receiver) => {
      for (let i = 0; i < flakyStatuses.length; i += 10_000)
        receiver.enqueue(...flakyStatuses.slice(i, i + 10_000).map((status) => ({ status })))
    },
  )
  const others = [...good, flaky]

  const pids = { worker: worker.child.pid!, api: api.process.pid! }
  const round = async (label: string, count: number, rate: number | null): Promise<Round> => {
    const pg0 = cpuSnapshot(await backends(bench.admin, bench.database))
    const cpu0 = { worker: cpuSeconds(pids.worker), api: cpuSeconds(pids.api) }
    const commits = async () =>
      Number(
        (await bench.admin.query(`select xact_commit::float8 as n from pg_stat_database where datname = $1`, [bench.database])).rows[0].n,
      )
    const commits0 = await commits()
    const machine0 = machineBusySeconds()
    const self0 = process.cpuUsage()
    const started = performance.now()
    console.log(`(${label}) ${fmt(count)} runs set succeeded, ${settings.batch} per statement, ${pace(rate)}`)
    const activity = process.env.BENCH_WEBHOOKS_ACTIVITY === '1' ? sampleActivity(bench.admin, bench.database) : undefined
    const produced = await produce(db, owner, { count, rate, label })
    await settle(db, others, [...produced.events.keys()], label)
    const sampled = await activity?.stop()
    if (sampled) {
      console.log(`(${label}) database backends, ${sampled.samples} samples every ${ACTIVITY_MS} ms (busy backends per sample: statement):`)
      for (const [what, n] of sampled.top) console.log(`  ${(n / sampled.samples).toFixed(2)}  ${what}`)
    }
    const cpuOf = (name: keyof typeof pids) => {
      const after = cpuSeconds(pids[name])
      return after === null || cpu0[name] === null ? null : after - cpu0[name]!
    }
    const postgres = cpuSince(pg0, cpuSnapshot(await backends(bench.admin, bench.database)))
    const self = process.cpuUsage(self0)
    const machine1 = machineBusySeconds()
    const [worker, api] = [cpuOf('worker'), cpuOf('api')]
    const ours = (worker ?? 0) + (api ?? 0) + postgres + (self.user + self.system) / 1e6
    const otherCores =
      machine0 === null || machine1 === null ? null : Math.max(0, machine1 - machine0 - ours) / ((performance.now() - started) / 1000)
    const cpu = { worker, api, postgres, otherCores }
    // pg_stat_database's counters are sent by each backend when idle: give the last ones time to land.
    await sleep(1_000)
    const result = { ...(await measureRound(db, others, produced, label)), rate, cpu, commits: (await commits()) - commits0 }
    console.log(
      `(${label}) event -> first attempt p50/p99/max ${line(result.latency)} ms; ${fmt(result.deliveriesPerSecond)} deliveries/s, ` +
        `${fmt(result.requestsPerSecond)} requests/s over ${fmt(result.seconds, 1)} s; ${fmt(result.commits)} commits; ` +
        result.endpoints
          .map((e) => `${e.name}: ${e.requests} requests, lost ${e.lost}, twice ${e.twice}, ${JSON.stringify(e.statuses)}`)
          .join('; '),
    )
    if (result.endpoints.some((e) => e.lost || e.twice || e.statuses.succeeded !== count)) process.exitCode = 1
    return result
  }

  const rounds: Round[] = []
  let slowRequests: { during: number; slowEndpointMaxIn10s: number } | undefined
  if (settings.phases.has('throughput')) rounds.push(await round('throughput', settings.events, settings.rate))
  if (settings.phases.has('latency')) rounds.push(await round('latency', settings.events, settings.latencyRate))
  if (settings.phases.has('slow')) {
    rounds.push(await round('slow: without', settings.slowEvents, settings.slowRate))
    const slow = await makeEndpoint(
      'slow',
      () => 200,
      (receiver) => (receiver.fallback = { delayMs: settings.slowMs, status: 200 }),
    )
    rounds.push(await round(`slow: with a ${fmt(settings.slowMs / 1000)} s endpoint`, settings.slowEvents, settings.slowRate))
    const at = slow.receiver.received.map((request) => request.at).sort((a, b) => a - b)
    // Requests that arrived within one answer time of each other: at most the group's concurrency (4) when it holds.
    let most = 0
    for (let i = 0, j = 0; i < at.length; i++) {
      while (at[i] - at[j] >= settings.slowMs) j++
      most = Math.max(most, i - j + 1)
    }
    slowRequests = { during: at.length, slowEndpointMaxIn10s: most }
    await expectOk(
      await fetch(`${api.url}/api/v1/webhook-endpoints/${slow.uuid}`, {
        method: 'DELETE',
        headers: { authorization: headers.authorization },
      }),
      'delete the slow endpoint',
    )
  }

  const machine = machineOf(bench.postgres)
  const date = new Date().toISOString()
  const ok = (r: Round) => r.endpoints.every((e) => e.lost === 0 && e.twice === 0)
  const md = [
    `# Outbound webhooks benchmark, ${date}`,
    '',
    `${machine.line}, PostgreSQL ${bench.postgres}; an API process (WORKER=false) and one worker; runs set succeeded ${settings.batch} per statement; ` +
      `WEBHOOK_RETRY_DELAYS ${settings.retryDelays.split(',').length} delays; endpoints good-1, good-2 (200), flaky (500 half the time).`,
    '',
    '| round | events (runs/s) | none lost, none twice | requests good-1 / good-2 / flaky | event -> first attempt p50 / p99 / max | deliveries/s (requests/s) | CPU s: worker / API / PostgreSQL | other load |',
    '| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |',
    ...rounds.map(
      (r) =>
        `| ${r.label} | ${fmt(r.events)} (${pace(r.rate)}) | ${ok(r) ? 'yes' : 'NO'} (lost ${r.endpoints.map((e) => e.lost).join('/')}, twice ${r.endpoints.map((e) => e.twice).join('/')}) | ` +
        `${r.endpoints.map((e) => fmt(e.requests)).join(' / ')} | ${line(r.latency)} ms | ${fmt(r.deliveriesPerSecond)} (${fmt(r.requestsPerSecond)}) | ` +
        `${r.cpu.worker === null ? '—' : fmt(r.cpu.worker, 1)} / ${r.cpu.api === null ? '—' : fmt(r.cpu.api, 1)} / ${fmt(r.cpu.postgres, 1)} | ` +
        `${r.cpu.otherCores === null ? '—' : `${fmt(r.cpu.otherCores, 2)} cores`} |`,
    ),
    '',
    'Where the time to a first attempt goes (ms, p50 / p99 / max over deliveries; "job sent" is the job that made the attempt):',
    '',
    '| round | commit -> dispatched | dispatched -> job sent | job sent -> fetched | fetched -> at receiver | dispatched events/s | commits per request | deliver jobs per request | statements behind schedule |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rounds.map(
      (r) =>
        `| ${r.label} | ${line(r.stages.commitToDispatched)} | ${line(r.stages.dispatchedToSent)} | ${line(r.stages.sentToFetched)} | ${line(r.stages.fetchedToReceived)} | ` +
        `${fmt(r.stages.dispatchPerSecond)} | ${fmt(r.commits / r.endpoints.reduce((n, e) => n + e.requests, 0), 1)} | ${fmt(r.jobsPerRequest, 2)} | ` +
        `${fmt(r.behindMs)} ms |`,
    ),
    '',
    ...(slowRequests
      ? [
          `Slow endpoint: ${slowRequests.during} requests during its round, at most ${slowRequests.slowEndpointMaxIn10s} within ${fmt(settings.slowMs)} ms of each other.`,
          '',
        ]
      : []),
    `Targets: none lost, none twice; event -> first attempt p50 < ${P50_TARGET_MS} ms; the slow endpoint leaves the others' latency unchanged.`,
  ]
  console.log('\n' + md.join('\n'))
  writeResults(
    ['webhooks-latest'],
    { date, machine: machine.json, settings: { ...settings, phases: [...settings.phases] }, rounds, slowRequests },
    md.join('\n') + '\n',
  )
})
