/**
 * `npm run bench:faults`: the service under a steady load while its Redis goes away, on
 * PostgreSQL (docs/operations.md, "Redis outages"; docs/benchmarks.md, "Redis outage benchmark").
 *
 * Starts a `redis-server` of its own on a free port (test/helpers/redis-server.ts; it must be on
 * the PATH) and the service on a fresh database with REDIS_URL pointing at it, signs up a user and
 * creates a few agents, then runs a closed loop of BENCH_FAULT_CONNECTIONS (default 10) clients,
 * each sending its next request as soon as the last one is answered, through the phases:
 *
 *   normal      BENCH_NORMAL_SECONDS (20) with Redis up
 *   killed      BENCH_OUTAGE_SECONDS (40) after SIGKILL: connections refused
 *   recovery    BENCH_RECOVERY_SECONDS (20) after it starts again, empty, on the same port
 *   stalled     BENCH_OUTAGE_SECONDS (40) after SIGSTOP: connections accepted, nothing answered
 *   resumed     BENCH_RECOVERY_SECONDS (20) after SIGCONT
 *
 * then, with agent runs added to the mix (`POST /api/v1/agents/{uuid}/run` answered when done and
 * in the background, the model answering in 100-300 ms; bench/database-outage.ts):
 *
 *   runs        BENCH_NORMAL_SECONDS (20) with Redis and PostgreSQL up
 *   ended       BENCH_OUTAGE_SECONDS (40) while every PostgreSQL connection of the service is ended
 *               every 1-2 s (`pg_terminate_backend`)
 *   reconnected BENCH_RECOVERY_SECONDS (20) after
 *
 * (BENCH_FAULT_PHASES, default `kill,stop,pg`, picks the outages: `kill` and `stop` of Redis, `pg`
 * the connection loss. The connection-loss phases are skipped, saying why, when the role of
 * BENCH_DATABASE_URL may not end the service's connections.) The mix, per client and in turn:
 * `GET /api/v1/user` four times, `POST /api/v1/agents/metrics` twice (once with
 * `Cache-Control: no-cache`, once from the metrics cache when it can), one more `GET /api/v1/user`
 * and `POST /api/v1/auth/sign-in`, then in the runs phases the two runs. Every answer is timed
 * from send to the last byte; a request unanswered after 10 s is given up and counted as status 0.
 *
 * Per phase it prints and writes (bench/results/redis-outage-latest.{json,md}) the throughput,
 * p50, p99 and worst latency overall and per request, the answers by status, the 5xx that were
 * not a 503 with Retry-After, the service's CPU per request, and the worst second (throughput
 * and latency per second are in the JSON). Targets, for both Redis outage phases: p99 of every
 * request <= 1 s, no 5xx but 503s with Retry-After, throughput >= 50% of the normal phase. For
 * the connection loss, per kind of request its answers (2xx, 503 with Retry-After, other) and p99,
 * and, once every run has ended, the runs lost and the event logs with a gap; targets: no answer
 * but 2xx and 503 with Retry-After, no run lost, no gap. PostgreSQL's CPU is not counted while
 * its backends are being ended (an ended backend's CPU can no longer be read).
 * The exit code is 0 whether or not they are met: this is a measurement, not a test.
 */
import http from 'node:http'
import { randomBytes } from 'node:crypto'
import { cpuSeconds, cpuSince, cpuSnapshot, machineBusySeconds } from './cpu.ts'
import {
  type Bench,
  envList,
  envNumber,
  expectOk,
  fmt,
  machineOf,
  runBench,
  signIn,
  signUp,
  startService,
  writeResults,
} from './harness.ts'
import {
  answersByKind,
  databaseMarkdown,
  openDatabaseFaults,
  RUN_KINDS,
  runBody,
  runOf,
  runsOutcome,
  startModel,
  type KindAnswers,
  type RunKind,
  type RunSample,
  type RunsOutcome,
  databaseVerdict,
} from './database-outage.ts'
import type { Terminator } from '../test/helpers/database-faults.ts'
import { startRedisServer, type RedisServer } from '../test/helpers/redis-server.ts'

const settings = {
  connections: Math.floor(envNumber('BENCH_FAULT_CONNECTIONS', 10)),
  normalSeconds: envNumber('BENCH_NORMAL_SECONDS', 20),
  outageSeconds: envNumber('BENCH_OUTAGE_SECONDS', 40),
  recoverySeconds: envNumber('BENCH_RECOVERY_SECONDS', 20),
  warmupSeconds: envNumber('BENCH_WARMUP', 5),
  outages: envList('BENCH_FAULT_PHASES', 'kill,stop,pg'),
}
/** Targets of an outage phase (docs/benchmarks.md). */
const TARGET_P99_MS = 1_000
const TARGET_THROUGHPUT_RATIO = 0.5
/** A request unanswered after this is given up (status 0). */
const GIVE_UP_MS = 10_000

/** The kinds of request of the mix. */
type Kind = 'user' | 'metrics' | 'metrics no-cache' | 'sign-in' | RunKind
const MIX: Kind[] = ['user', 'user', 'metrics', 'user', 'user', 'metrics no-cache', 'user', 'sign-in']
/** The mix of the connection-loss phases: the same, and two runs. */
const RUNS_MIX: Kind[] = [...MIX, ...RUN_KINDS]
/** Every kind, in the order of the tables. */
const KINDS: Kind[] = [...new Set(RUNS_MIX)]

/** One answer (a run's answer names its run). */
interface Sample extends RunSample {
  kind: Kind
}

/** What a phase measured. */
interface PhaseResult {
  name: string
  what: string
  seconds: number
  requests: number
  requestsPerSecond: number
  p50Ms: number
  p99Ms: number
  maxMs: number
  byKind: Record<string, { requests: number; p50Ms: number; p99Ms: number; maxMs: number }>
  statuses: Record<string, number>
  /** 5xx answers other than 503 with Retry-After, and requests given up on. */
  bad: number
  serverCpuUsPerRequest: number | null
  /**
   * Cores kept busy during the phase, on average: by the service, by the benchmark database's
   * PostgreSQL backends, by this process (the load), and by everything else on the machine
   * (the private redis-server among it): a neighbour shows there instead of silently lowering
   * the throughput.
   */
  cores: { service: number | null; postgres: number | null; load: number; other: number | null }
  /** The second with the fewest answers and the one with the slowest answer. */
  worstSecond: { fewest: { second: number; requests: number }; slowest: { second: number; maxMs: number } }
  perSecond: { second: number; requests: number; maxMs: number }[]
}

const percentile = (sorted: number[], p: number): number =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : 0

/**
 * Sends one request on a keep-alive agent; resolves with its status (and the body, when `keepBody`),
 * never rejects (status 0 for an error or a give-up).
 */
function send(
  agent: http.Agent,
  url: string,
  options: { method: string; headers: Record<string, string>; body?: string; keepBody?: boolean },
): Promise<{ status: number; retryAfter: boolean; body?: string }> {
  return new Promise((resolve) => {
    const req = http.request(url, { method: options.method, headers: options.headers, agent, timeout: GIVE_UP_MS }, (res) => {
      let body = ''
      res.on('data', (chunk: Buffer) => {
        if (options.keepBody) body += chunk.toString()
      })
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          retryAfter: /^\d+$/.test(String(res.headers['retry-after'] ?? '')),
          ...(options.keepBody ? { body } : {}),
        }),
      )
      res.on('error', () => resolve({ status: 0, retryAfter: false }))
    })
    req.on('timeout', () => req.destroy(new Error('given up')))
    req.on('error', () => resolve({ status: 0, retryAfter: false }))
    req.end(options.body)
  })
}

/**
 * The closed loop: `connections` clients, each going through the mix ({@link MIX} until `useMix`
 * changes it) in turn from its own offset, until `stop()`. Runs run `agentUuid`.
 */
function startLoad(serviceUrl: string, token: string, email: string, password: string, connections: number, agentUuid: string) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections })
  const samples: Sample[] = []
  const started = performance.now()
  let running = true
  let mix = MIX
  let runs = 0
  const metricsBody = JSON.stringify({
    calculation: 'time_series_count',
    granularity: 'daily',
    column: '*',
    date_from: '2026-01-01',
    date_to: '2026-11-25',
  })
  const json = { 'content-type': 'application/json' }
  const requestOf = (kind: Kind) => {
    switch (kind) {
      case 'user':
        return { url: `${serviceUrl}/api/v1/user`, method: 'GET', headers: { authorization: `Bearer ${token}` } }
      case 'metrics':
        return {
          url: `${serviceUrl}/api/v1/agents/metrics`,
          method: 'POST',
          headers: { ...json, authorization: `Bearer ${token}` },
          body: metricsBody,
        }
      case 'metrics no-cache':
        return {
          url: `${serviceUrl}/api/v1/agents/metrics`,
          method: 'POST',
          headers: { ...json, authorization: `Bearer ${token}`, 'cache-control': 'no-cache' },
          body: metricsBody,
        }
      case 'sign-in':
        return { url: `${serviceUrl}/api/v1/auth/sign-in`, method: 'POST', headers: json, body: JSON.stringify({ email, password }) }
      case 'run':
      case 'run background':
        return {
          url: `${serviceUrl}/api/v1/agents/${agentUuid}/run`,
          method: 'POST',
          headers: { ...json, authorization: `Bearer ${token}` },
          body: runBody(kind, runs++),
          keepBody: true,
        }
    }
  }
  const clients = Array.from({ length: connections }, async (_, client) => {
    for (let turn = client; running; turn++) {
      const kind = mix[turn % mix.length]
      const { url, ...options } = requestOf(kind)
      const sent = performance.now()
      const { body, ...answer } = await send(agent, url, options)
      const run = body !== undefined && answer.status >= 200 && answer.status < 300 ? runOf(body) : undefined
      samples.push({ kind, at: sent - started, ms: performance.now() - sent, ...answer, ...(run ? { run } : {}) })
    }
  })
  return {
    samples,
    /** The mix from each client's next request on. */
    useMix: (next: Kind[]) => {
      mix = next
    },
    /** Milliseconds since the load started. */
    now: () => performance.now() - started,
    stop: async () => {
      running = false
      await Promise.all(clients)
      agent.destroy()
    },
  }
}

/** CPU seconds used during a phase (null where /proc cannot be read). */
interface PhaseCpu {
  service: number | null
  postgres: number | null
  load: number
  machine: number | null
}

/**
 * Starts counting the CPU of a phase: the service `pid`, the database's backends now (not when
 * `postgres` is false: backends ended during the phase can no longer be read), this process, the
 * machine; the answer stops it.
 */
async function countCpu(bench: Bench, pid: number, postgres = true): Promise<() => PhaseCpu> {
  const { rows } = await bench.admin.query<{ pid: number }>(
    "select pid from pg_stat_activity where datname = $1 and backend_type = 'client backend'",
    [bench.database],
  )
  const service0 = cpuSeconds(pid)
  const postgres0 = cpuSnapshot(postgres ? rows.map((row) => row.pid) : [])
  const machine0 = machineBusySeconds()
  const self0 = process.cpuUsage()
  return () => {
    const service1 = cpuSeconds(pid)
    const machine1 = machineBusySeconds()
    const self = process.cpuUsage(self0)
    return {
      service: service0 === null || service1 === null ? null : service1 - service0,
      postgres: postgres0.size ? cpuSince(postgres0, cpuSnapshot([...postgres0.keys()])) : null,
      load: (self.user + self.system) / 1e6,
      machine: machine0 === null || machine1 === null ? null : machine1 - machine0,
    }
  }
}

/** The figures of the samples sent in [from, to) milliseconds of the load. */
function summarise(name: string, what: string, samples: Sample[], from: number, to: number, cpu: PhaseCpu | null): PhaseResult {
  const inPhase = samples.filter((sample) => sample.at >= from && sample.at < to)
  const seconds = (to - from) / 1000
  const sorted = inPhase.map((sample) => sample.ms).sort((a, b) => a - b)
  const byKind: PhaseResult['byKind'] = {}
  for (const kind of KINDS) {
    const times = inPhase
      .filter((sample) => sample.kind === kind)
      .map((sample) => sample.ms)
      .sort((a, b) => a - b)
    if (times.length)
      byKind[kind] = { requests: times.length, p50Ms: percentile(times, 50), p99Ms: percentile(times, 99), maxMs: times.at(-1) ?? 0 }
  }
  const statuses: Record<string, number> = {}
  for (const sample of inPhase) statuses[sample.status] = (statuses[sample.status] ?? 0) + 1
  const perSecond: PhaseResult['perSecond'] = []
  // Whole seconds only: a last partial second would always look like the phase's worst.
  for (let second = 0; second < Math.max(1, Math.floor(seconds)); second++) {
    const slice = inPhase.filter((sample) => sample.at >= from + second * 1000 && sample.at < from + (second + 1) * 1000)
    perSecond.push({ second, requests: slice.length, maxMs: Math.max(0, ...slice.map((sample) => sample.ms)) })
  }
  const fewest = perSecond.reduce((a, b) => (b.requests < a.requests ? b : a), perSecond[0])
  const slowest = perSecond.reduce((a, b) => (b.maxMs > a.maxMs ? b : a), perSecond[0])
  return {
    name,
    what,
    seconds,
    requests: inPhase.length,
    requestsPerSecond: inPhase.length / seconds,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    maxMs: sorted.at(-1) ?? 0,
    byKind,
    statuses,
    bad: inPhase.filter((sample) => sample.status === 0 || (sample.status >= 500 && !(sample.status === 503 && sample.retryAfter))).length,
    serverCpuUsPerRequest: cpu?.service == null || inPhase.length === 0 ? null : (cpu.service * 1e6) / inPhase.length,
    cores: {
      service: cpu?.service == null ? null : cpu.service / seconds,
      postgres: cpu?.postgres == null ? null : cpu.postgres / seconds,
      load: (cpu?.load ?? 0) / seconds,
      other: cpu?.machine == null ? null : Math.max(0, (cpu.machine - (cpu.service ?? 0) - (cpu.postgres ?? 0) - cpu.load) / seconds),
    },
    worstSecond: {
      fewest: { second: fewest.second, requests: fewest.requests },
      slowest: { second: slowest.second, maxMs: slowest.maxMs },
    },
    perSecond,
  }
}

/** Sign-up, a few agents (the metrics have rows to count; the runs run the first) and the password signed in with. */
async function prepare(serviceUrl: string): Promise<{ token: string; email: string; password: string; agentUuid: string }> {
  const email = `faults-${randomBytes(4).toString('hex')}@example.com`
  const { token } = await signUp(serviceUrl, 'Faults', email)
  const agents: string[] = []
  for (let n = 0; n < 20; n++) {
    const body = await expectOk(
      await fetch(`${serviceUrl}/api/v1/agents`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ name: `agent ${n}`, instruction: 'Answer.' }),
      }),
      'agent',
    )
    agents.push(String((JSON.parse(body.toString('utf8')) as { data: { uuid: string } }).data.uuid))
  }
  // The sign-in of the load uses the same password as signUp's (bench/harness.ts).
  await signIn(serviceUrl, email)
  return { token, email, password: 'bench-password-1234', agentUuid: agents[0] }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function main(bench: Bench): Promise<void> {
  const redis: RedisServer = await startRedisServer(`pw-${randomBytes(12).toString('hex')}`)
  bench.closers.push(async () => {
    redis.signal('SIGCONT')
    await redis.stop()
  })
  const model = await startModel()
  bench.closers.push(model.close)
  const service = await startService(bench, [], { REDIS_URL: redis.url, OPENAI_API_KEY: 'sk-bench-faults', OPENAI_BASE_URL: model.url })
  const pid = service.process.pid!
  const { token, email, password, agentUuid } = await prepare(service.url)
  const faults = settings.outages.has('pg') ? await openDatabaseFaults(bench.databaseUrl, bench.database) : null
  if (faults) bench.closers.push(() => faults.client.end())
  if (faults?.skip) console.log(faults.skip)
  console.log(`Redis on port ${redis.port}; ${settings.connections} clients in a closed loop; mix ${MIX.join(', ')}`)

  const load = startLoad(service.url, token, email, password, settings.connections, agentUuid)
  await sleep(settings.warmupSeconds * 1000)
  const windows: { name: string; what: string; from: number; to: number; cpu: PhaseCpu }[] = []
  /** One phase: from just before `begin` (the fault) on, `seconds` of load. */
  const phase = async (name: string, what: string, seconds: number, begin: () => Promise<void> | void, postgresCpu = true) => {
    const counted = await countCpu(bench, pid, postgresCpu)
    const from = load.now()
    await begin()
    process.stdout.write(`${name}: ${what}, ${seconds} s ... `)
    await sleep(from + seconds * 1000 - load.now())
    windows.push({ name, what, from, to: load.now(), cpu: counted() })
    const sofar = summarise(name, what, load.samples, from, load.now(), null)
    console.log(`${fmt(sofar.requestsPerSecond)} req/s, p99 ${fmt(sofar.p99Ms, 1)} ms, ${JSON.stringify(sofar.statuses)} (answered so far)`)
  }

  await phase('normal', 'Redis up', settings.normalSeconds, () => {})
  if (settings.outages.has('kill')) {
    await phase('killed', 'Redis killed (SIGKILL)', settings.outageSeconds, () => redis.stop())
    await phase('recovery', 'Redis started again, empty', settings.recoverySeconds, () => redis.start())
  }
  if (settings.outages.has('stop')) {
    await phase('stalled', 'Redis stopped (SIGSTOP)', settings.outageSeconds, () => redis.signal('SIGSTOP'))
    await phase('resumed', 'Redis continued (SIGCONT)', settings.recoverySeconds, () => redis.signal('SIGCONT'))
  }
  let terminator: Terminator | undefined
  if (faults && !faults.skip) {
    load.useMix(RUNS_MIX)
    // The first runs of the process (model client, prepared statements) are not the baseline's.
    await sleep(settings.warmupSeconds * 1000)
    await phase('runs', 'runs in the mix, everything up', settings.normalSeconds, () => {})
    await phase(
      'ended',
      'PostgreSQL connections ended every 1-2 s',
      settings.outageSeconds,
      () => void (terminator = faults.start(settings.outageSeconds)),
      false,
    )
    await terminator?.done
    await phase('reconnected', 'connections no longer ended', settings.recoverySeconds, () => {})
  }
  // Every request sent is answered (or given up) before the phases are summed up, so a slow one
  // at the end of a phase counts in it.
  await load.stop()
  const phases = windows.map((w) => summarise(w.name, w.what, load.samples, w.from, w.to, w.cpu))
  const verdicts = phases
    .filter((result) => result.name === 'killed' || result.name === 'stalled')
    .map((result) => redisVerdict(result, phases[0]))
  let database: {
    phases: { name: string; answers: KindAnswers[] }[]
    outcome: RunsOutcome
    terminated: { rounds: number; ended: number }
  } | null = null
  if (faults && !faults.skip && terminator) {
    const outcome = await runsOutcome(faults.client, load.samples)
    const runsPhases = windows
      .filter((w) => ['runs', 'ended', 'reconnected'].includes(w.name))
      .map((w) => ({ name: w.name, answers: answersByKind(load.samples, KINDS, w.from, w.to) }))
    database = { phases: runsPhases, outcome, terminated: { rounds: terminator.rounds, ended: terminator.ended } }
    const byName = (name: string) => phases.find((p) => p.name === name)!
    verdicts.push(databaseVerdict(byName('ended'), byName('runs'), runsPhases.find((p) => p.name === 'ended')!.answers, outcome))
  }
  const date = new Date().toISOString()
  const machine = machineOf(bench.postgres)
  const md =
    markdown(phases, { date, machine: machine.line, postgres: `PostgreSQL ${bench.postgres}` }, verdicts) +
    (database ? `\n${databaseMarkdown(database.phases, database.outcome, database.terminated)}` : faults?.skip ? `\n${faults.skip}\n` : '')
  console.log(`\n${md}`)
  writeResults(
    ['redis-outage-latest', `redis-outage-${date.replace(/[:.]/g, '-')}`],
    {
      date,
      machine: machine.json,
      settings: { ...settings, outages: [...settings.outages] },
      mix: MIX,
      runsMix: RUNS_MIX,
      phases,
      verdicts,
      database,
    },
    md,
  )
}

/** The verdict of a Redis outage phase against the targets, the normal phase its baseline. */
function redisVerdict(result: PhaseResult, normal: PhaseResult): string {
  const ratio = result.requestsPerSecond / normal.requestsPerSecond
  const worstKind = Object.entries(result.byKind).reduce((a, b) => (b[1].p99Ms > a[1].p99Ms ? b : a))
  const misses = [
    worstKind[1].p99Ms > TARGET_P99_MS ? `p99 of ${worstKind[0]} ${fmt(worstKind[1].p99Ms)} ms > ${TARGET_P99_MS} ms` : null,
    result.bad > 0 ? `${result.bad} 5xx other than 503 with Retry-After (or given up)` : null,
    ratio < TARGET_THROUGHPUT_RATIO ? `throughput ${fmt(ratio * 100)}% of normal < ${TARGET_THROUGHPUT_RATIO * 100}%` : null,
  ].filter(Boolean)
  return `${result.name}: ${misses.length ? `target missed (${misses.join('; ')})` : `targets met (worst p99 ${fmt(worstKind[1].p99Ms)} ms for ${worstKind[0]}, throughput ${fmt(ratio * 100)}% of normal, no other 5xx)`}`
}

function markdown(phases: PhaseResult[], meta: { date: string; machine: string; postgres: string }, verdicts: string[]): string {
  const kinds = KINDS.filter((kind) => phases.some((p) => p.byKind[kind]))
  return [
    `Redis outage benchmark of ${meta.date}: ${meta.machine}; ${meta.postgres}.`,
    `${settings.connections} clients in a closed loop, mix per client: ${MIX.join(', ')}; latency from send to last byte.`,
    '',
    '| phase | req/s | p50 ms | p99 ms | max ms | answers | bad 5xx | service CPU µs/req | cores: service / PostgreSQL / load / other | fewest answers in a second |',
    '| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |',
    ...phases.map(
      (p) =>
        `| ${p.name} (${p.what}, ${fmt(p.seconds)} s) | ${fmt(p.requestsPerSecond)} | ${fmt(p.p50Ms, 1)} | ${fmt(p.p99Ms, 1)} | ${fmt(p.maxMs)} | ` +
        `${Object.entries(p.statuses)
          .map(([status, count]) => `${count} × ${status}`)
          .join(', ')} | ${p.bad} | ${p.serverCpuUsPerRequest === null ? '—' : fmt(p.serverCpuUsPerRequest)} | ` +
        `${[p.cores.service, p.cores.postgres, p.cores.load, p.cores.other].map((cores) => (cores === null ? '—' : fmt(cores, 2))).join(' / ')} | ` +
        `${p.worstSecond.fewest.requests} (s ${p.worstSecond.fewest.second}) |`,
    ),
    '',
    `| phase | ${kinds.map((kind) => `${kind} p50 / p99 / max ms`).join(' | ')} |`,
    `| --- | ${kinds.map(() => '---:').join(' | ')} |`,
    ...phases.map(
      (p) =>
        `| ${p.name} | ${kinds.map((kind) => (p.byKind[kind] ? `${fmt(p.byKind[kind].p50Ms, 1)} / ${fmt(p.byKind[kind].p99Ms, 1)} / ${fmt(p.byKind[kind].maxMs)}` : '—')).join(' | ')} |`,
    ),
    '',
    ...verdicts.map((verdict) => `- ${verdict}`),
    '',
  ].join('\n')
}

await runBench('aw_bench_faults', main)
