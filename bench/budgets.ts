/**
 * `npm run bench:budgets`: what usage and budgets (docs/api/usage-and-budgets.md) cost, and
 * whether a budget's spend stays exact under concurrent runs. The model is the local
 * OpenAI-compatible upstream of the tests (test/helpers/upstream.ts, in its own process through
 * bench/runs-upstream.ts, answering `Echo: <input>` at once); the service runs as child
 * processes, all over 127.0.0.1. Three phases:
 *
 *   (1) check   The budget check's cost: the runs benchmark's run answered when done
 *               (`POST /api/v1/agents/{uuid}/run`, sequential) in a workspace with no budget
 *               against one with three `block` budgets in scope of every run (the workspace's,
 *               by month; the agent's, by week; the user's, in total; limits far from reached).
 *               Two workspaces alike, X and Y, each with usage already in the rollup
 *               (`usage_daily`): H runs spread over the last 90 days, inserted through the
 *               rollup's trigger, then the rollup vacuumed as autovacuum would (unless
 *               BENCH_BUDGETS_VACUUM=0: the statement leaves a dead version of a rollup row for
 *               each run it adds, which every read of the spend then steps over). Runs go in pairs,
 *               one in each workspace (the order flips each pair); over R rounds the budgets move
 *               from one workspace to the other (created and deleted through the API), a few
 *               unmeasured runs after each move. p50 and p99 of each configuration, pooled and
 *               per round, and the median of the pairs' differences. Target: three budgets add
 *               at most 1 ms at p50. On PostgreSQL a second service whose connections go
 *               through a counting proxy (bench/runs-probes.ts) also reports the budget
 *               statements of a run, and the time the server took for them, in both
 *               configurations.
 *   (2) usage   `GET /api/v1/usage` over U runs (default 1,000,000) of one workspace spread over
 *               90 days (20 agents, 10 users, 2 models: 36,000 rollup rows), grouped by day and
 *               by agent and day, ~50 calls each after a warm-up. The runs are inserted in bulk
 *               (`insert into runs ... select from generate_series`): the first S of them
 *               through the rollup's trigger, timed, to show its cost; the rest with triggers
 *               off on the seeding connection (`session_replication_role = replica`), then the
 *               workspace's rollup rebuilt with the migration's backfill statement
 *               (src/migrations/Migration20261128170000_usage_budgets.ts), `runs` analyzed and
 *               the rollup vacuumed and analyzed. Target: under 150 ms.
 *   (3) exact   PostgreSQL only: 1,000 run requests across two service processes sharing one
 *               database and one Redis (a redis-server of its own, as `npm run bench:faults`
 *               starts: the service's cache keys are not scoped by database), C concurrent
 *               connections (default 20) alternating between the two, one workspace with one
 *               `block` budget (workspace scope, `total`) whose token limit is about F (default
 *               60%) of the way through. Afterwards the budget's `spent_tokens` (read through
 *               each process) against the sum of the stored runs' `total_tokens`, the rollup and
 *               `GET usage`; the overshoot past the limit, and how many runs were in flight when
 *               the limit was crossed (stored before, finished after the settle of the run whose
 *               usage crossed it, all on the database's clock); the answers by status (429s).
 *
 * PGlite (embedded, a temporary DATA_DIR) runs (1) and (2): its database is the service's own
 * file, so the service is stopped while this process seeds it, and started again.
 *
 * The exit code is 0 whether or not a target is met (a measurement, not a test), 1 on an error.
 * Results: bench/results/budgets-latest.{json,md}.
 *
 * Environment (defaults keep the whole benchmark under about 5 minutes on 2 cores):
 *   BENCH_DATABASE_URL            admin connection of the PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres)
 *   BENCH_BUDGETS_MODES           "postgres,pglite" (default both)
 *   BENCH_BUDGETS_PHASES          "check,usage,exact" (default all)
 *   BENCH_BUDGETS_RUNS            pairs of runs in each round of (1) (default 150)
 *   BENCH_BUDGETS_ROUNDS          R, rounds of (1) (default 4)
 *   BENCH_BUDGETS_WARMUP          warm-up runs of (1) before the first round (default 50); 10 after each move
 *   BENCH_BUDGETS_HISTORY         H, runs of usage history seeded in each workspace of (1), over 90 days (default 9,000)
 *   BENCH_BUDGETS_VACUUM          0: leave the rollup of (1) as the seeding left it, unvacuumed (default 1)
 *   BENCH_BUDGETS_PROFILE         runs of each configuration counted through the SQL proxy, 0 to skip (default 40)
 *   BENCH_BUDGETS_USAGE_RUNS      U, runs seeded for (2) (default 1,000,000)
 *   BENCH_BUDGETS_TRIGGER_RUNS    S, of them inserted through the trigger (default 20,000)
 *   BENCH_BUDGETS_USAGE_CALLS     measured calls of each grouping of (2) (default 50)
 *   BENCH_BUDGETS_REQUESTS        run requests of (3) (default 1,000)
 *   BENCH_BUDGETS_CONNECTIONS     C, concurrent connections of (3) (default 20)
 *   BENCH_BUDGETS_CROSS           F, where the limit of (3) falls, as a fraction of the requests (default 0.6)
 *   BENCH_REDIS_URL               a Redis for (3) instead of a redis-server of its own
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { PGlite } from '@electric-sql/pglite'
import { vector } from '@electric-sql/pglite-pgvector'
import pg from 'pg'
import { cpuSeconds } from './cpu.ts'
import { type Bench, CHILD_ENV, envList, expectOk, fmt, machineOf, runBench, signUp, summarise, writeResults } from './harness.ts'
import { type Child, startChild, startUpstreamChild, stopChild } from './processes.ts'
import { SqlCounter, type TimelineEntry } from './runs-probes.ts'
import { startRedisServer } from '../test/helpers/redis-server.ts'

/** A whole number >= 0 from the environment, else `fallback`. */
function envCount(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback)
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number >= 0`)
  return value
}

type Mode = 'postgres' | 'pglite'
const settings = {
  modes: [...envList('BENCH_BUDGETS_MODES', 'postgres,pglite')].filter(Boolean) as Mode[],
  phases: envList('BENCH_BUDGETS_PHASES', 'check,usage,exact'),
  runs: Math.max(1, envCount('BENCH_BUDGETS_RUNS', 150)),
  rounds: Math.max(1, envCount('BENCH_BUDGETS_ROUNDS', 4)),
  warmup: envCount('BENCH_BUDGETS_WARMUP', 50),
  switchWarmup: 10,
  history: envCount('BENCH_BUDGETS_HISTORY', 9_000),
  vacuum: envCount('BENCH_BUDGETS_VACUUM', 1) !== 0,
  profileRuns: envCount('BENCH_BUDGETS_PROFILE', 40),
  usageRuns: Math.max(1, envCount('BENCH_BUDGETS_USAGE_RUNS', 1_000_000)),
  triggerRuns: envCount('BENCH_BUDGETS_TRIGGER_RUNS', 20_000),
  usageCalls: Math.max(1, envCount('BENCH_BUDGETS_USAGE_CALLS', 50)),
  usageWarmup: 5,
  requests: Math.max(2, envCount('BENCH_BUDGETS_REQUESTS', 1_000)),
  connections: Math.max(1, envCount('BENCH_BUDGETS_CONNECTIONS', 20)),
  cross: Number(process.env.BENCH_BUDGETS_CROSS ?? 0.6),
}
for (const mode of settings.modes)
  if (mode !== 'postgres' && mode !== 'pglite') throw new Error(`BENCH_BUDGETS_MODES: unknown mode ${mode}`)
for (const phase of settings.phases)
  if (!['check', 'usage', 'exact'].includes(phase)) throw new Error(`BENCH_BUDGETS_PHASES: unknown phase ${phase}`)
if (!(settings.cross > 0 && settings.cross < 1)) throw new Error('BENCH_BUDGETS_CROSS must be between 0 and 1')

/** Targets: what three budgets may add to a run at p50 (ms), and the longest `GET usage` p50 (ms). */
const CHECK_TARGET_MS = 1
const USAGE_TARGET_MS = 150
/** The shape of the seeded usage of (2): 90 days x 20 agents x 10 users x 2 models rollup rows. */
const USAGE_SHAPE = { days: 90, agents: 20, users: 10, models: ['gpt-4o-mini', 'gpt-4o'] }
const INPUT = 'What is the weather like in Lisbon today?'
const SYSTEM = 'Answer briefly.'

const now = () => performance.now()

// ---------------------------------------------------------------------------------------------
// Children and the database

/** Where a mode's data lives and the service's environment (one APP_KEY across restarts and processes). */
interface Target {
  mode: Mode
  env: Record<string, string>
  dataDir: string | null
}

function targetOf(bench: Bench, mode: Mode, upstreamUrl: string, extra: Record<string, string> = {}): Target {
  const dataDir = mode === 'pglite' ? mkdtempSync(path.join(os.tmpdir(), 'aw-bench-budgets-')) : null
  if (dataDir) bench.closers.push(async () => rmSync(dataDir, { recursive: true, force: true }))
  return {
    mode,
    dataDir,
    env: {
      ...CHILD_ENV,
      ...(dataDir ? { DATABASE_URL: '', DATA_DIR: dataDir } : { DATABASE_URL: bench.databaseUrl, DATA_DIR: '' }),
      APP_KEY: `base64:${randomBytes(32).toString('base64')}`,
      APP_URL: '',
      REDIS_URL: '',
      SIGN_IN_MAX_PER_ADDRESS: '1000000',
      SIGN_IN_MAX_PER_EMAIL: '1000000',
      OPENAI_API_KEY: 'sk-bench-budgets',
      OPENAI_BASE_URL: upstreamUrl,
      ...extra,
    },
  }
}

async function startService(bench: Bench, target: Target, env: Record<string, string> = {}): Promise<Child> {
  const service = await startChild('service', 'src/server.ts', { ...target.env, ...env }, { readyPath: '/ready', timeoutMs: 120_000 })
  bench.children.push(service)
  return service
}

async function stopService(bench: Bench, service: Child): Promise<void> {
  await stopChild(service)
  bench.children.splice(bench.children.indexOf(service), 1)
}

/** SQL from this process: `pg` on PostgreSQL (one connection), PGlite on the stopped service's directory. */
interface Db {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>
  close(): Promise<void>
}

async function openDb(bench: Bench, target: Target): Promise<Db> {
  if (target.mode === 'postgres') {
    const client = new pg.Client({ connectionString: bench.databaseUrl })
    await client.connect()
    return {
      query: async <T>(sql: string, params: unknown[] = []) => (await client.query(sql, params)).rows as T[],
      close: () => client.end(),
    }
  }
  const db = await PGlite.create(path.join(target.dataDir!, 'pglite'), { extensions: { vector } })
  return { query: async <T>(sql: string, params: unknown[] = []) => (await db.query<T>(sql, params)).rows, close: () => db.close() }
}

/** `sql`'s wall time in ms. */
async function timed(db: Db, sql: string, params: unknown[] = []): Promise<number> {
  const start = now()
  await db.query(sql, params)
  return now() - start
}

// ---------------------------------------------------------------------------------------------
// Requests

interface Api {
  url: string
  token: string
}

const headersOf = (api: Api) => ({ authorization: `Bearer ${api.token}`, 'content-type': 'application/json' })

async function call<T>(api: Api, method: string, route: string, body?: unknown): Promise<T> {
  const response = await fetch(`${api.url}${route}`, {
    method,
    ...(body === undefined
      ? { headers: { authorization: `Bearer ${api.token}` } }
      : { headers: headersOf(api), body: JSON.stringify(body) }),
  })
  const text = (await expectOk(response, `${method} ${route}`)).toString('utf8')
  return (text ? JSON.parse(text) : null) as T
}

async function createAgent(api: Api, name: string): Promise<string> {
  return (await call<{ data: { uuid: string } }>(api, 'POST', '/api/v1/agents', { name, instruction: SYSTEM })).data.uuid
}

/** A new user (and their workspace), the first of its agents named `agents[0]`. */
interface Owner {
  api: Api
  userId: number
  agentUuids: string[]
}

async function newOwner(url: string, name: string, agents: number): Promise<Owner> {
  const { token, userId } = await signUp(url, name, `bench-budgets-${randomBytes(5).toString('hex')}@example.com`)
  const api = { url, token }
  const agentUuids: string[] = []
  for (let index = 0; index < agents; index++) agentUuids.push(await createAgent(api, `${name} agent ${index + 1}`))
  return { api, userId, agentUuids }
}

/** The ids of a user's workspace and of the workspace's agents (in `agentUuids` order). */
async function idsOf(db: Db, owner: Owner): Promise<{ workspaceId: number; agentIds: number[] }> {
  const [user] = await db.query<{ workspace: string }>('select primary_workspace_id::text as workspace from users where id = $1', [
    owner.userId,
  ])
  const agents = await db.query<{ id: string; uuid: string }>(
    'select id::text as id, uuid::text as uuid from agents where workspace_id = $1',
    [Number(user.workspace)],
  )
  const byUuid = new Map(agents.map((agent) => [agent.uuid, Number(agent.id)]))
  return { workspaceId: Number(user.workspace), agentIds: owner.agentUuids.map((uuid) => byUuid.get(uuid)!) }
}

/** One run answered when done (the runs benchmark's (b)): ms to the whole answer, the answer checked. */
async function runOnce(api: Api, agentUuid: string): Promise<number> {
  const start = now()
  const response = await fetch(`${api.url}/api/v1/agents/${agentUuid}/run`, {
    method: 'POST',
    headers: headersOf(api),
    body: JSON.stringify({ input: INPUT }),
  })
  const text = await response.text()
  const elapsed = now() - start
  if (response.status !== 200) throw new Error(`run: HTTP ${response.status} ${text.slice(0, 300)}`)
  const { data } = JSON.parse(text) as { data: { run: { status: string; output: string } } }
  if (data.run.status !== 'succeeded' || data.run.output !== `Echo: ${INPUT}`)
    throw new Error(`run: ${data.run.status} ${JSON.stringify(data.run.output)}`)
  return elapsed
}

/** `times` sequential calls of `once`. */
async function sequential<T>(times: number, once: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = []
  for (let index = 0; index < times; index++) results.push(await once(index))
  return results
}

/** `GET /api/v1/ping` sequentially: the service's CPU per request, to tell how busy the machine is (about 0.17 ms when quiet). */
async function pingCpuMs(api: Api, pid: number): Promise<number | null> {
  const ping = async () => {
    const response = await fetch(`${api.url}/api/v1/ping`)
    await response.arrayBuffer()
  }
  await sequential(30, ping)
  const cpu0 = cpuSeconds(pid)
  await sequential(200, ping)
  const cpu1 = cpuSeconds(pid)
  return cpu0 === null || cpu1 === null ? null : ((cpu1 - cpu0) * 1000) / 200
}

// ---------------------------------------------------------------------------------------------
// Seeding

/**
 * Inserts `count` succeeded runs of `workspaceId` spread over the last `days` days, each row's
 * agent, user, model and day taken from `g` so that every combination gets its share. Numbers
 * only are written into the text (ids this process read).
 */
function seedRunsSql(o: {
  workspaceId: number
  agentIds: number[]
  userIds: number[]
  models: string[]
  days: number
  from: number
  count: number
}): string {
  const combos = o.days * o.agentIds.length * o.userIds.length * o.models.length
  const ints = (values: number[]) => `array[${values.map((value) => String(Math.trunc(value))).join(',')}]::bigint[]`
  const models = `array[${o.models.map((model) => `'${model.replace(/'/g, "''")}'`).join(',')}]`
  return `insert into runs (uuid, kind, status, agent_id, model, prompt_tokens, completion_tokens, total_tokens, cost, user_id, workspace_id,
      started_at, finished_at, latency_ms, created_at, updated_at)
    select gen_random_uuid(), 'agent', 'succeeded', (${ints(o.agentIds)})[1 + (c / ${o.days}) % ${o.agentIds.length}], (${models})[1 + c / ${o.days * o.agentIds.length * o.userIds.length}],
      p, q, p + q, (p + q) * 0.000002, ((${ints(o.userIds)})[1 + (c / ${o.days * o.agentIds.length}) % ${o.userIds.length}])::int, ${Math.trunc(o.workspaceId)},
      t, t, 900, t, t
    from generate_series(${o.from}, ${o.from + o.count - 1}) g
      cross join lateral (select g % ${combos} as c, 100 + g % 50 as p, 40 + g % 30 as q) k
      cross join lateral (select now() - (c % ${o.days}) * interval '1 day' - (g % 3600) * interval '1 second' as t) w`
}

/** The migration's backfill of the rollup, for one workspace (its rows deleted first). */
const REBUILD_SQL = `insert into usage_daily (workspace_id, day, agent_id, user_id, access_token_id, model, runs, prompt_tokens, completion_tokens, total_tokens, cost)
      select workspace_id, (created_at at time zone 'UTC')::date, coalesce(agent_id, 0), coalesce(user_id, 0), 0, coalesce(model, ''),
        count(*), sum(prompt_tokens), sum(completion_tokens), sum(total_tokens), sum(cost)
      from runs where workspace_id = $1 group by 1, 2, 3, 4, 5, 6`

interface UsageSeed {
  runs: number
  rollupRows: number
  /** Runs inserted through the trigger, and ms for them. */
  trigger: { runs: number; ms: number }
  /** Runs inserted with triggers off, ms; the rollup rebuilt, ms; runs analyzed and the rollup vacuumed and analyzed, ms. */
  bulk: { runs: number; ms: number }
  rebuildMs: number
  analyzeMs: number
  totals: { runs: number; totalTokens: number }
}

async function seedUsage(db: Db, workspaceId: number, agentIds: number[], userIds: number[]): Promise<UsageSeed> {
  const shape = { workspaceId, agentIds, userIds, models: USAGE_SHAPE.models, days: USAGE_SHAPE.days }
  const triggerRuns = Math.min(settings.triggerRuns, settings.usageRuns)
  process.stdout.write(`seeding ${fmt(settings.usageRuns)} runs: ${fmt(triggerRuns)} through the trigger ... `)
  const triggerMs = triggerRuns ? await timed(db, seedRunsSql({ ...shape, from: 0, count: triggerRuns })) : 0
  const rest = settings.usageRuns - triggerRuns
  process.stdout.write(`${fmt(triggerMs)} ms; ${fmt(rest)} with triggers off ... `)
  await db.query('set session_replication_role = replica')
  let bulkMs = 0
  try {
    // In slices, so that no one statement holds the whole insert (PGlite's memory).
    for (let from = triggerRuns; from < settings.usageRuns; from += 250_000)
      bulkMs += await timed(db, seedRunsSql({ ...shape, from, count: Math.min(250_000, settings.usageRuns - from) }))
  } finally {
    await db.query('reset session_replication_role')
  }
  process.stdout.write(`${fmt(bulkMs)} ms; rollup rebuilt ... `)
  const rebuildStart = now()
  await db.query('delete from usage_daily where workspace_id = $1', [workspaceId])
  await db.query(REBUILD_SQL, [workspaceId])
  const rebuildMs = now() - rebuildStart
  // As autovacuum would soon after (this leaves a dead version of a rollup row for each row deleted).
  const analyzeMs = (await timed(db, 'analyze runs')) + (await timed(db, 'vacuum analyze usage_daily'))
  const [rollup] = await db.query<{ n: string }>('select count(*)::text as n from usage_daily where workspace_id = $1', [workspaceId])
  const [sums] = await db.query<{ runs: string; tokens: string }>(
    'select count(*)::text as runs, coalesce(sum(total_tokens), 0)::text as tokens from runs where workspace_id = $1',
    [workspaceId],
  )
  console.log(`${fmt(rebuildMs)} ms, ${fmt(Number(rollup.n))} rollup rows`)
  return {
    runs: settings.usageRuns,
    rollupRows: Number(rollup.n),
    trigger: { runs: triggerRuns, ms: triggerMs },
    bulk: { runs: rest, ms: bulkMs },
    rebuildMs,
    analyzeMs,
    totals: { runs: Number(sums.runs), totalTokens: Number(sums.tokens) },
  }
}

// ---------------------------------------------------------------------------------------------
// (1) The budget check

type Config = 'none' | 'three'

/** The three budgets of (1), every one in scope of the owner's runs of its first agent, none near its limit. */
function threeBudgets(owner: Owner) {
  return [
    { name: 'Workspace month', scope: 'workspace', period: 'month', limit_cost: 100_000, limit_tokens: 1_000_000_000 },
    { name: 'Agent week', scope: 'agent', agent_uuid: owner.agentUuids[0], period: 'week', limit_tokens: 1_000_000_000 },
    { name: 'User total', scope: 'user', user_id: owner.userId, period: 'total', limit_cost: 100_000, limit_tokens: 1_000_000_000 },
  ]
}

interface BudgetRead {
  uuid: string
  name: string
  spent_tokens: number
  spent_cost: number
  exceeded: boolean
}

/** Creates the three budgets (none before) or deletes them all; answers the budgets created. */
async function configure(owner: Owner, config: Config, live: BudgetRead[]): Promise<BudgetRead[]> {
  for (const budget of live.splice(0)) await call(owner.api, 'DELETE', `/api/v1/budgets/${budget.uuid}`)
  if (config === 'none') return []
  for (const body of threeBudgets(owner))
    live.push((await call<{ data: BudgetRead }>(owner.api, 'POST', '/api/v1/budgets', { ...body, action: 'block' })).data)
  if (live.some((budget) => budget.exceeded)) throw new Error(`a budget of (1) is exceeded: ${JSON.stringify(live)}`)
  return live
}

interface CheckRound {
  round: number
  /** The workspace that had the three budgets in this round (the other had none). */
  budgetsIn: 'X' | 'Y'
  none: { p50: number; p99: number }
  three: { p50: number; p99: number }
  /** Median of the pairs' differences, three - none. */
  pairedMedian: number
}

interface CheckResult {
  history: { runs: number; rollupRows: number; ms: number; vacuumMs: number }
  /** Spend the three budgets saw when first created (the history counts: `total`, this month, this week). */
  budgets: { name: string; spent_tokens: number }[]
  rounds: CheckRound[]
  pooled: Record<Config, { n: number; p50: number; p99: number; max: number }>
  /** Pooled p50 of three budgets - pooled p50 of none. */
  addedP50Ms: number
  /** Median of every pair's difference. */
  pairedMedianMs: number
  sql: BudgetSql | null
}

/**
 * Seeds the history of (1) in each owner's workspace: runs of its agents over 90 days, through the
 * rollup's trigger, in one statement each; then (BENCH_BUDGETS_VACUUM) the rollup vacuumed and
 * analyzed, as autovacuum would soon after (the statement leaves a dead version of a rollup row
 * for each run it adds).
 */
async function seedHistory(db: Db, owners: Owner[]): Promise<CheckResult['history']> {
  let ms = 0
  let rollupRows = 0
  for (const owner of owners) {
    const { workspaceId, agentIds } = await idsOf(db, owner)
    ms += await timed(
      db,
      seedRunsSql({ workspaceId, agentIds, userIds: [owner.userId], models: ['gpt-4o-mini'], days: 90, from: 0, count: settings.history }),
    )
    const [rollup] = await db.query<{ n: string }>('select count(*)::text as n from usage_daily where workspace_id = $1', [workspaceId])
    rollupRows = Number(rollup.n)
  }
  const vacuumMs = settings.vacuum ? await timed(db, 'vacuum analyze usage_daily') : 0
  return { runs: settings.history, rollupRows, ms, vacuumMs }
}

/**
 * (1): runs in two workspaces X and Y alike, one with the three budgets and one without, in pairs
 * (the order flips each pair); the budgets move to the other workspace each round.
 */
async function checkPhase(
  owners: [Owner, Owner],
  history: CheckResult['history'],
  profile: () => Promise<BudgetSql | null>,
): Promise<CheckResult> {
  const live = new Map<Owner, BudgetRead[]>(owners.map((owner) => [owner, []]))
  const runIn = (owner: Owner) => runOnce(owner.api, owner.agentUuids[0])
  process.stdout.write(`(1) warm-up ${settings.warmup} runs ... `)
  await sequential(settings.warmup, (index) => runIn(owners[index % 2]))
  const samples: Record<Config, number[]> = { none: [], three: [] }
  const diffs: number[] = []
  const rounds: CheckRound[] = []
  let budgets: CheckResult['budgets'] = []
  for (let round = 0; round < settings.rounds; round++) {
    const withBudgets = owners[(round + 1) % 2]
    const without = owners[round % 2]
    await configure(without, 'none', live.get(without)!)
    const created = await configure(withBudgets, 'three', live.get(withBudgets)!)
    if (!budgets.length) budgets = created.map((budget) => ({ name: budget.name, spent_tokens: budget.spent_tokens }))
    await sequential(settings.switchWarmup, (index) => runIn(index % 2 ? withBudgets : without))
    const none: number[] = []
    const three: number[] = []
    const pairs: number[] = []
    for (let index = 0; index < settings.runs; index++) {
      const first = index % 2 === 0 ? without : withBudgets
      const a = await runIn(first)
      const b = await runIn(first === without ? withBudgets : without)
      const [n, t] = first === without ? [a, b] : [b, a]
      none.push(n)
      three.push(t)
      pairs.push(t - n)
    }
    samples.none.push(...none)
    samples.three.push(...three)
    diffs.push(...pairs)
    const [n, t] = [summarise(none), summarise(three)]
    rounds.push({
      round: round + 1,
      budgetsIn: withBudgets === owners[0] ? 'X' : 'Y',
      none: { p50: n.p50, p99: n.p99 },
      three: { p50: t.p50, p99: t.p99 },
      pairedMedian: summarise(pairs).p50,
    })
    process.stdout.write(`r${round + 1} none ${fmt(n.p50, 2)} three ${fmt(t.p50, 2)} ... `)
  }
  for (const owner of owners) await configure(owner, 'none', live.get(owner)!)
  const pooled = { none: summarise(samples.none), three: summarise(samples.three) }
  const pairedMedianMs = summarise(diffs).p50
  console.log(`added at p50 ${fmt(pooled.three.p50 - pooled.none.p50, 2)} ms, paired median ${fmt(pairedMedianMs, 2)} ms`)
  const sql = await profile()
  return { history, budgets, rounds, pooled, addedP50Ms: pooled.three.p50 - pooled.none.p50, pairedMedianMs, sql }
}

/** The budget statements of a run, through the counting proxy: per run, how many and the server's ms (proxy hop included). */
interface BudgetSqlPerRun {
  statements: number
  serverMs: number
  checks: number
  checkMs: number
  thresholds: number
  thresholdMs: number
}
type BudgetSql = Record<Config, BudgetSqlPerRun> & { runs: number }

/** The budget check (`budgetVerdict`) and the thresholds' record (`recordThresholds`) by their shapes. */
const isCheck = (entry: TimelineEntry) => entry.shape.startsWith('select c.covered')
const isThresholds = (entry: TimelineEntry) => entry.shape.startsWith('with reached as')

async function profileBudgetSql(bench: Bench, target: Target, owner: Owner): Promise<BudgetSql> {
  const { counter, url } = await SqlCounter.start(bench.databaseUrl)
  bench.closers.push(() => counter.close())
  const service = await startService(bench, target, { DATABASE_URL: url })
  const api = { ...owner.api, url: service.url }
  const proxied: Owner = { ...owner, api }
  const live: BudgetRead[] = []
  const entries: Record<Config, TimelineEntry[]> = { none: [], three: [] }
  try {
    await sequential(10, () => runOnce(api, owner.agentUuids[0]))
    const half = Math.max(1, Math.floor(settings.profileRuns / 2))
    for (const config of ['none', 'three', 'three', 'none'] as Config[]) {
      await configure(proxied, config, live)
      await sequential(5, () => runOnce(api, owner.agentUuids[0]))
      await sleep(200)
      counter.record()
      await sequential(half, () => runOnce(api, owner.agentUuids[0]))
      await sleep(300) // the thresholds' record follows the answer
      entries[config].push(...counter.timeline())
    }
    await configure(proxied, 'none', live)
  } finally {
    await stopService(bench, service)
  }
  const runs = Math.max(1, Math.floor(settings.profileRuns / 2)) * 2
  const perRun = (list: TimelineEntry[]): BudgetSqlPerRun => {
    const sum = (filter: (entry: TimelineEntry) => boolean) =>
      list.filter(filter).reduce((total, entry) => total + entry.endMs - entry.startMs, 0) / runs
    return {
      statements: list.length / runs,
      serverMs: sum(() => true),
      checks: list.filter(isCheck).length / runs,
      checkMs: sum(isCheck),
      thresholds: list.filter(isThresholds).length / runs,
      thresholdMs: sum(isThresholds),
    }
  }
  return { runs, none: perRun(entries.none), three: perRun(entries.three) }
}

// ---------------------------------------------------------------------------------------------
// (2) GET usage

interface UsageCall {
  query: string
  rows: number
  bytes: number
  p50: number
  p99: number
  max: number
  serviceCpuMsPerCall: number | null
  totalsRuns: number
  totalsTokens: number
}

interface UsageResult {
  seed: UsageSeed
  calls: UsageCall[]
}

/** `from` and `to` of the last 90 days, UTC. */
function last90Days(): { from: string; to: string } {
  const day = 86_400_000
  return { from: new Date(Date.now() - 89 * day).toISOString().slice(0, 10), to: new Date().toISOString().slice(0, 10) }
}

async function usagePhase(owner: Owner, pid: number, seed: UsageSeed): Promise<UsageResult> {
  const { from, to } = last90Days()
  const calls: UsageCall[] = []
  for (const groupBy of ['day', 'agent,day']) {
    const query = `/api/v1/usage?group_by=${groupBy}&date_from=${from}&date_to=${to}`
    let rows = 0
    let bytes = 0
    let totals = { runs: 0, total_tokens: 0 }
    const once = async () => {
      const start = now()
      const response = await fetch(`${owner.api.url}${query}`, { headers: headersOf(owner.api) })
      const body = await expectOk(response, `GET ${query}`)
      const elapsed = now() - start
      const parsed = JSON.parse(body.toString('utf8')) as { data: unknown[]; meta: { totals: { runs: number; total_tokens: number } } }
      rows = parsed.data.length
      bytes = body.length
      totals = parsed.meta.totals
      return elapsed
    }
    await sequential(settings.usageWarmup, once)
    const cpu0 = cpuSeconds(pid)
    const s = summarise(await sequential(settings.usageCalls, once))
    const cpu1 = cpuSeconds(pid)
    calls.push({
      query: `group_by=${groupBy}`,
      rows,
      bytes,
      p50: s.p50,
      p99: s.p99,
      max: s.max,
      serviceCpuMsPerCall: cpu0 === null || cpu1 === null ? null : ((cpu1 - cpu0) * 1000) / settings.usageCalls,
      totalsRuns: totals.runs,
      totalsTokens: totals.total_tokens,
    })
    console.log(`(2) GET usage group_by=${groupBy}: ${rows} rows, p50 ${fmt(s.p50, 1)} ms, p99 ${fmt(s.p99, 1)} ms`)
  }
  return { seed, calls }
}

// ---------------------------------------------------------------------------------------------
// (3) Exactness under concurrency

interface Answer {
  server: number
  status: number
  code: string | null
  /** Sent and answered, epoch ms (the machine's clock, which PostgreSQL's `now()` reads too). */
  sentAt: number
  at: number
}

interface ExactResult {
  requests: number
  connections: number
  tokensPerRun: number
  limitTokens: number
  wallMs: number
  statuses: Record<string, number>
  /** 429s whose body names the budget (`TOO_MANY_REQUESTS`). */
  budgetRefusals: number
  byServer: number[]
  spentTokens: number[]
  stored: { runs: number; succeeded: number; failedOverBudget: number; totalTokens: number }
  rollupTokens: number
  usageTotalTokens: number
  exact: boolean
  overshootTokens: number
  crossing: {
    /** Runs stored before the crossing settle and finished after it. */
    inFlight: number
    /** Runs stored after it (admitted by a check that read the spend before it was stored). */
    startedAfter: number
    finishedAfter: number
    tokensAfter: number
    /** The stored sum past the limit with the crossing run itself. */
    excess: number
    /** Requests sent before the crossing and answered after it (whatever their answer). */
    requestsInFlight: number
    /** 429s answered before the crossing: a refusal before the limit was reached (should be none). */
    refusedBefore: number
  } | null
}

/** An answer's error code (`TOO_MANY_REQUESTS`) or its run's status; null for a body that is not JSON. */
function codeOf(text: string): string | null {
  try {
    const body = JSON.parse(text) as { code?: string; data?: { run?: { status?: string } } }
    return body.code ?? body.data?.run?.status ?? null
  } catch {
    return null
  }
}

async function exactPhase(bench: Bench, upstreamUrl: string): Promise<ExactResult> {
  const external = process.env.BENCH_REDIS_URL
  const redis = external ? null : await startRedisServer(`pw-${randomBytes(12).toString('hex')}`)
  if (redis) bench.closers.push(() => redis.stop())
  const target = targetOf(bench, 'postgres', upstreamUrl, { REDIS_URL: external ?? redis!.url })
  const services = [await startService(bench, target), await startService(bench, target)]
  const db = await openDb(bench, target)
  try {
    const owner = await newOwner(services[0].url, 'Exact', 1)
    const agent = owner.agentUuids[0]
    const { workspaceId } = await idsOf(db, owner)
    // One run first: its tokens tell where to put the limit (and count in its `total` spend).
    await runOnce(owner.api, agent)
    const [probe] = await db.query<{ tokens: number }>('select total_tokens as tokens from runs where workspace_id = $1', [workspaceId])
    const tokensPerRun = Number(probe.tokens)
    const limitTokens = Math.round(tokensPerRun * settings.requests * settings.cross) + Math.floor(tokensPerRun / 2)
    const budget = (
      await call<{ data: BudgetRead }>(owner.api, 'POST', '/api/v1/budgets', {
        name: 'Exact cap',
        scope: 'workspace',
        period: 'total',
        limit_tokens: limitTokens,
        action: 'block',
      })
    ).data
    process.stdout.write(
      `(3) ${settings.requests} run requests, ${settings.connections} connections over 2 processes; ${tokensPerRun} tokens a run, limit ${fmt(limitTokens)} ... `,
    )
    const answers: Answer[] = []
    let next = 0
    const start = now()
    await Promise.all(
      Array.from({ length: settings.connections }, async () => {
        while (next < settings.requests) {
          const server = next++ % 2
          const sentAt = Date.now()
          const response = await fetch(`${services[server].url}/api/v1/agents/${agent}/run`, {
            method: 'POST',
            headers: headersOf(owner.api),
            body: JSON.stringify({ input: INPUT }),
          })
          const code = codeOf(await response.text())
          answers.push({ server, status: response.status, code, sentAt, at: Date.now() })
        }
      }),
    )
    const wallMs = now() - start
    // Every run ended (none still running in either process) before anything is read.
    for (let waited = 0; waited < 30_000; waited += 100) {
      const [open] = await db.query<{ n: string }>(
        "select count(*)::text as n from runs where workspace_id = $1 and status in ('queued', 'running')",
        [workspaceId],
      )
      if (Number(open.n) === 0) break
      await sleep(100)
    }
    const spentTokens: number[] = []
    for (const service of services)
      spentTokens.push(
        (await call<{ data: BudgetRead }>({ ...owner.api, url: service.url }, 'GET', `/api/v1/budgets/${budget.uuid}`)).data.spent_tokens,
      )
    const [stored] = await db.query<{ runs: string; succeeded: string; over: string; tokens: string }>(
      `select count(*)::text as runs, count(*) filter (where status = 'succeeded')::text as succeeded,
         count(*) filter (where error->>'code' = 'budget_exceeded')::text as over, coalesce(sum(total_tokens), 0)::text as tokens
       from runs where workspace_id = $1`,
      [workspaceId],
    )
    const [rollup] = await db.query<{ tokens: string }>(
      'select coalesce(sum(total_tokens), 0)::text as tokens from usage_daily where workspace_id = $1',
      [workspaceId],
    )
    const usage = await call<{ meta: { totals: { total_tokens: number } } }>(owner.api, 'GET', '/api/v1/usage')
    // The crossing: the settle (by `finished_at`, the database's clock) whose usage brought the stored sum to the limit.
    const [crossing] = await db.query<{
      in_flight: string
      started_after: string
      finished_after: string
      tokens_after: string
      excess: string
      at_ms: string
    }>(
      `with ordered as (
         select id, finished_at, sum(total_tokens) over (order by finished_at, id) as cumulative from runs where workspace_id = $1 and finished_at is not null),
       crossed as (select id, finished_at, cumulative from ordered where cumulative >= $2 order by finished_at, id limit 1)
       select (extract(epoch from c.finished_at) * 1000)::text as at_ms, (c.cumulative - $2)::text as excess, count(*) filter (where r.created_at <= c.finished_at and r.finished_at > c.finished_at)::text as in_flight,
         count(*) filter (where r.created_at > c.finished_at)::text as started_after,
         count(*) filter (where r.finished_at > c.finished_at)::text as finished_after,
         coalesce(sum(r.total_tokens) filter (where r.finished_at > c.finished_at), 0)::text as tokens_after
       from crossed c cross join runs r where r.workspace_id = $1 group by c.id, c.finished_at, c.cumulative`,
      [workspaceId, limitTokens],
    )
    const statuses: Record<string, number> = {}
    for (const answer of answers) statuses[answer.status] = (statuses[answer.status] ?? 0) + 1
    const totalTokens = Number(stored.tokens)
    const result: ExactResult = {
      requests: settings.requests,
      connections: settings.connections,
      tokensPerRun,
      limitTokens,
      wallMs,
      statuses,
      budgetRefusals: answers.filter((answer) => answer.status === 429 && answer.code === 'TOO_MANY_REQUESTS').length,
      byServer: [0, 1].map((server) => answers.filter((answer) => answer.server === server).length),
      spentTokens,
      stored: { runs: Number(stored.runs), succeeded: Number(stored.succeeded), failedOverBudget: Number(stored.over), totalTokens },
      rollupTokens: Number(rollup.tokens),
      usageTotalTokens: usage.meta.totals.total_tokens,
      exact:
        spentTokens.every((spent) => spent === totalTokens) &&
        Number(rollup.tokens) === totalTokens &&
        usage.meta.totals.total_tokens === totalTokens,
      overshootTokens: Math.max(...spentTokens) - limitTokens,
      crossing: crossing
        ? {
            inFlight: Number(crossing.in_flight),
            startedAfter: Number(crossing.started_after),
            finishedAfter: Number(crossing.finished_after),
            tokensAfter: Number(crossing.tokens_after),
            excess: Number(crossing.excess),
            requestsInFlight: answers.filter((answer) => answer.sentAt < Number(crossing.at_ms) && answer.at > Number(crossing.at_ms))
              .length,
            refusedBefore: answers.filter((answer) => answer.status === 429 && answer.at < Number(crossing.at_ms)).length,
          }
        : null,
    }
    console.log(
      `${fmt(wallMs / 1000, 1)} s; ${JSON.stringify(statuses)}; spent ${spentTokens.join(' / ')} vs stored ${totalTokens} (${result.exact ? 'exact' : 'NOT exact'}); ` +
        `overshoot ${result.overshootTokens} tokens; in flight at the crossing ${result.crossing?.inFlight ?? 'n/a'}`,
    )
    return result
  } finally {
    await db.close()
    for (const service of services) await stopService(bench, service)
    await redis?.stop()
  }
}

// ---------------------------------------------------------------------------------------------
// One mode: (1) and (2)

interface ModeResult {
  mode: Mode
  startupSeconds: number
  pingCpuMs: number | null
  check: CheckResult | null
  usage: UsageResult | null
}

async function measureMode(bench: Bench, mode: Mode, upstreamUrl: string): Promise<ModeResult> {
  console.log(`\n== ${mode} ==`)
  const target = targetOf(bench, mode, upstreamUrl)
  const embedded = mode === 'pglite'
  const doCheck = settings.phases.has('check')
  const doUsage = settings.phases.has('usage')
  const startup = now()
  let service = await startService(bench, target)
  const startupSeconds = (now() - startup) / 1000
  const checkOwners = doCheck
    ? ([await newOwner(service.url, 'Checker X', 5), await newOwner(service.url, 'Checker Y', 5)] as [Owner, Owner])
    : null
  const usageOwner = doUsage ? await newOwner(service.url, 'Usage', USAGE_SHAPE.agents) : null
  const members = doUsage ? [usageOwner!.userId] : []
  for (let index = 1; index < (doUsage ? USAGE_SHAPE.users : 0); index++)
    members.push((await signUp(service.url, `Usage user ${index}`, `bench-budgets-${randomBytes(5).toString('hex')}@example.com`)).userId)

  /** Runs `work` on the database from this process: on PGlite with the service stopped, then started again. */
  const withDb = async <T>(work: (db: Db) => Promise<T>): Promise<T> => {
    if (embedded) await stopService(bench, service)
    const db = await openDb(bench, target)
    try {
      return await work(db)
    } finally {
      await db.close()
      if (embedded) service = await startService(bench, target)
    }
  }
  const api = (owner: Owner): Owner => ({ ...owner, api: { ...owner.api, url: service.url } })
  try {
    let check: CheckResult | null = null
    if (checkOwners) {
      process.stdout.write(`(1) seeding ${fmt(settings.history)} runs of history in each of two workspaces, through the trigger ... `)
      const history = await withDb((db) => seedHistory(db, checkOwners))
      console.log(
        `${fmt(history.ms)} ms, ${history.rollupRows} rollup rows each; ${settings.vacuum ? `vacuumed in ${fmt(history.vacuumMs)} ms` : 'not vacuumed'}`,
      )
      const profile = async () =>
        mode === 'postgres' && settings.profileRuns > 0 ? await profileBudgetSql(bench, target, api(checkOwners[0])) : null
      check = await checkPhase([api(checkOwners[0]), api(checkOwners[1])], history, profile)
    }
    let usage: UsageResult | null = null
    if (usageOwner) {
      const seed = await withDb(async (db) => {
        const { workspaceId, agentIds } = await idsOf(db, usageOwner)
        return seedUsage(db, workspaceId, agentIds, members)
      })
      usage = await usagePhase(api(usageOwner), service.process.pid!, seed)
    }
    const pingCpu = await pingCpuMs(api(checkOwners?.[0] ?? usageOwner!).api, service.process.pid!)
    return { mode, startupSeconds, pingCpuMs: pingCpu, check, usage }
  } finally {
    if (bench.children.includes(service)) await stopService(bench, service)
  }
}

// ---------------------------------------------------------------------------------------------
// Report

const ms = (value: number, digits = 2) => (Number.isNaN(value) ? 'n/a' : fmt(value, digits))
const signed = (value: number, digits = 2) => `${value >= 0 ? '+' : '−'}${fmt(Math.abs(value), digits)}`
const verdict = (pass: boolean) => (pass ? '**met**' : '**not met**')
const modeName = (mode: Mode) => (mode === 'postgres' ? 'PostgreSQL' : 'PGlite')

function checkMarkdown(results: ModeResult[]): string[] {
  const rows = results.filter((result) => result.check)
  if (!rows.length) return []
  const lines = [
    `### (1) The budget check: a run answered when done, no budget against three in scope`,
    '',
    `Two workspaces alike (X and Y, ${fmt(settings.history)} runs of history each, the rollup ${settings.vacuum ? 'vacuumed' : '**not vacuumed**'} after seeding), one with the three budgets and one without; ` +
      `${settings.rounds} rounds of ${settings.runs} pairs of sequential runs (one in each workspace, the order flipping each pair), ` +
      `the budgets moved to the other workspace each round; ${settings.switchWarmup} unmeasured runs after each move, ${settings.warmup} of warm-up first.`,
    '',
    '| mode | rollup rows per workspace | no budget p50 / p99 ms | three budgets p50 / p99 ms | added at p50 | median of pair differences | target ≤ +1 ms at p50 |',
    '| --- | ---: | ---: | ---: | ---: | ---: | --- |',
  ]
  for (const result of rows) {
    const c = result.check!
    lines.push(
      `| ${modeName(result.mode)} | ${fmt(c.history.rollupRows)} | ${ms(c.pooled.none.p50)} / ${ms(c.pooled.none.p99)} | ` +
        `${ms(c.pooled.three.p50)} / ${ms(c.pooled.three.p99)} | ${signed(c.addedP50Ms)} ms | ${signed(c.pairedMedianMs)} ms | ${verdict(c.addedP50Ms <= CHECK_TARGET_MS)} |`,
    )
  }
  lines.push(
    '',
    '| mode | round | budgets in | no budget p50 / p99 ms | three budgets p50 / p99 ms | three − none at p50 | median of pair differences |',
    '| --- | ---: | --- | ---: | ---: | ---: | ---: |',
  )
  for (const result of rows)
    for (const round of result.check!.rounds)
      lines.push(
        `| ${modeName(result.mode)} | ${round.round} | ${round.budgetsIn} | ${ms(round.none.p50)} / ${ms(round.none.p99)} | ${ms(round.three.p50)} / ${ms(round.three.p99)} | ` +
          `${signed(round.three.p50 - round.none.p50)} | ${signed(round.pairedMedian)} |`,
      )
  const sql = rows.find((result) => result.check!.sql)?.check!.sql
  if (sql) {
    lines.push(
      '',
      `PostgreSQL, budget statements of a run through the counting proxy (${sql.runs} runs of each configuration; server ms from a statement's first message to ReadyForQuery, proxy hop included):`,
      '',
      '| configuration | statements per run | server ms per run | budget checks per run | their ms | threshold records per run | their ms |',
      '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
      ...(['none', 'three'] as Config[]).map((config) => {
        const s = sql[config]
        return `| ${config} | ${fmt(s.statements, 1)} | ${ms(s.serverMs)} | ${fmt(s.checks, 1)} | ${ms(s.checkMs, 3)} | ${fmt(s.thresholds, 1)} | ${ms(s.thresholdMs, 3)} |`
      }),
    )
  }
  const budgets = rows[0].check!.budgets
  if (budgets.length)
    lines.push(
      '',
      `Spend the three budgets saw when created: ${budgets.map((budget) => `${budget.name} ${fmt(budget.spent_tokens)} tokens`).join(', ')}.`,
    )
  return [...lines, '']
}

function usageMarkdown(results: ModeResult[]): string[] {
  const rows = results.filter((result) => result.usage)
  if (!rows.length) return []
  const lines = [
    `### (2) \`GET /api/v1/usage\` over ${fmt(settings.usageRuns)} runs of 90 days`,
    '',
    '| mode | seeding: through the trigger | with triggers off | rollup rebuilt | rollup rows |',
    '| --- | ---: | ---: | ---: | ---: |',
  ]
  for (const result of rows) {
    const s = result.usage!.seed
    lines.push(
      `| ${modeName(result.mode)} | ${fmt(s.trigger.runs)} runs in ${fmt(s.trigger.ms / 1000, 1)} s (${s.trigger.runs ? fmt((s.trigger.ms * 1000) / s.trigger.runs, 0) : 'n/a'} µs/run) | ` +
        `${fmt(s.bulk.runs)} runs in ${fmt(s.bulk.ms / 1000, 1)} s (${s.bulk.runs ? fmt((s.bulk.ms * 1000) / s.bulk.runs, 0) : 'n/a'} µs/run) | ${fmt(s.rebuildMs / 1000, 2)} s | ${fmt(s.rollupRows)} |`,
    )
  }
  lines.push(
    '',
    `| mode | request | rows | body KB | p50 ms | p99 ms | max ms | service CPU ms/call | totals check | target < ${USAGE_TARGET_MS} ms |`,
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |',
  )
  for (const result of rows)
    for (const c of result.usage!.calls) {
      const s = result.usage!.seed.totals
      const totalsOk = c.totalsRuns === s.runs && c.totalsTokens === s.totalTokens
      lines.push(
        `| ${modeName(result.mode)} | \`${c.query}\` | ${fmt(c.rows)} | ${fmt(c.bytes / 1024, 1)} | ${ms(c.p50, 1)} | ${ms(c.p99, 1)} | ${ms(c.max, 1)} | ` +
          `${c.serviceCpuMsPerCall === null ? 'n/a' : ms(c.serviceCpuMsPerCall)} | ${totalsOk ? `${fmt(c.totalsRuns)} runs, as stored` : `**${fmt(c.totalsRuns)} runs, stored ${fmt(s.runs)}**`} | ${verdict(c.p50 < USAGE_TARGET_MS)} |`,
      )
    }
  return [...lines, '']
}

function exactMarkdown(e: ExactResult | null): string[] {
  if (!e) return []
  const c = e.crossing
  return [
    `### (3) Exactness: ${fmt(e.requests)} run requests over two processes, ${e.connections} connections, one \`block\` budget`,
    '',
    '| measure | result |',
    '| --- | --- |',
    `| tokens per run; the budget's limit | ${e.tokensPerRun}; ${fmt(e.limitTokens)} tokens (about ${fmt(e.limitTokens / e.tokensPerRun)} runs) |`,
    `| answers by status | ${Object.entries(e.statuses)
      .map(([status, count]) => `${status}: ${fmt(count)}`)
      .join(
        ', ',
      )} (429 naming the budget: ${fmt(e.budgetRefusals)}); requests per process ${e.byServer.join(' / ')}; ${fmt(e.wallMs / 1000, 1)} s |`,
    `| stored runs | ${fmt(e.stored.runs)} (${fmt(e.stored.succeeded)} succeeded, ${fmt(e.stored.failedOverBudget)} failed \`budget_exceeded\`), ${fmt(e.stored.totalTokens)} tokens |`,
    `| budget \`spent_tokens\` read through each process | ${e.spentTokens.map((spent) => fmt(spent)).join(' / ')} |`,
    `| rollup; \`GET usage\` totals | ${fmt(e.rollupTokens)}; ${fmt(e.usageTotalTokens)} |`,
    `| spent = sum of the stored runs' \`total_tokens\` | ${e.exact ? '**yes**' : '**no**'} |`,
    `| overshoot past the limit (spent − limit) | ${fmt(e.overshootTokens)} tokens (${fmt(e.overshootTokens / e.tokensPerRun, 1)} runs' worth) |`,
    ...(c
      ? [
          `| runs in flight when the limit was crossed (stored before, finished after the settle that crossed it) | ${c.inFlight} |`,
          `| runs stored after the crossing (their check read the spend before it was stored) | ${c.startedAfter} |`,
          `| overshoot = the crossing run's excess + the runs finished after it | ${fmt(c.excess)} + ${fmt(c.tokensAfter)} tokens (${c.finishedAfter} runs) |`,
          `| requests in flight at the crossing (sent before, answered after: admitted or refused) | ${c.requestsInFlight} |`,
          `| 429s answered before the crossing | ${c.refusedBefore} |`,
        ]
      : ['| runs in flight when the limit was crossed | the limit was not crossed |']),
    '',
  ]
}

// ---------------------------------------------------------------------------------------------

async function main(bench: Bench) {
  const loadBefore = os.loadavg()
  const started = now()
  const upstream = await startUpstreamChild()
  bench.children.push(upstream)
  console.log(`upstream ${upstream.url}`)
  const results: ModeResult[] = []
  if (settings.phases.has('check') || settings.phases.has('usage'))
    for (const mode of settings.modes) results.push(await measureMode(bench, mode, upstream.url))
  const exact = settings.phases.has('exact') ? await exactPhase(bench, upstream.url) : null

  const date = new Date().toISOString()
  const machine = machineOf(bench.postgres)
  const md = [
    `Budgets benchmark of ${date}: ${machine.line}; PostgreSQL ${bench.postgres}; load average ${loadBefore.map((load) => load.toFixed(2)).join(', ')} before, ` +
      `${machine.json.loadAverage.map((load) => load.toFixed(2)).join(', ')} after; ${fmt((now() - started) / 1000)} s in all. ` +
      `Service CPU per \`GET /api/v1/ping\` (about 0.17 ms on a quiet machine): ${results.map((result) => `${modeName(result.mode)} ${result.pingCpuMs === null ? 'n/a' : ms(result.pingCpuMs)} ms`).join(', ')}.`,
    '',
    ...checkMarkdown(results),
    ...usageMarkdown(results),
    ...exactMarkdown(exact),
  ].join('\n')
  console.log(`\n${md}`)
  writeResults(
    ['budgets-latest'],
    { date, machine: machine.json, loadAverageBefore: loadBefore, settings: { ...settings, phases: [...settings.phases] }, results, exact },
    md + '\n',
  )
}

await runBench('aw_bench_budgets', main)
