/**
 * What bench/metrics.ts uses besides the harness: the seed of its million-row database, timing
 * (medians, interleaved rounds) and a keep-alive HTTP client.
 */
import http from 'node:http'
import type pg from 'pg'

/** The median of `values` (the mean of the middle two for an even count). */
export const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

/**
 * Median durations (ms) of `repeat` rounds after one warm-up round, each round running every
 * function of `fns` once in turn: a drift of the machine (other processes, autovacuum) reaches
 * every column alike instead of the one measured at that moment.
 */
export async function timeInterleaved<K extends string>(repeat: number, fns: Record<K, () => Promise<unknown>>): Promise<Record<K, { medianMs: number; runsMs: number[] }>> {
  const keys = Object.keys(fns) as K[]
  const runs = Object.fromEntries(keys.map((key) => [key, [] as number[]])) as Record<K, number[]>
  for (let round = 0; round <= repeat; round++) {
    for (const key of keys) {
      const start = performance.now()
      await fns[key]()
      if (round > 0) runs[key].push(performance.now() - start)
    }
  }
  return Object.fromEntries(keys.map((key) => [key, { medianMs: median(runs[key]), runsMs: runs[key] }])) as Record<K, { medianMs: number; runsMs: number[] }>
}

/** Median duration (ms) of `repeat` runs of `fn` after one warm-up. */
export async function timeIt(repeat: number, fn: () => Promise<unknown>): Promise<{ medianMs: number; runsMs: number[] }> {
  await fn()
  const runsMs: number[] = []
  for (let i = 0; i < repeat; i++) {
    const start = performance.now()
    await fn()
    runsMs.push(performance.now() - start)
  }
  return { medianMs: median(runsMs), runsMs }
}

/** One keep-alive connection for the serial HTTP measurements. */
export const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })

/** An HTTP request through {@link agent}: status and body. */
export function request(url: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: options.method ?? 'GET', headers: options.headers, agent }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(options.body)
  })
}

/** The body of a 2xx answer; throws naming `what` otherwise. */
export async function ok(what: string, answer: Promise<{ status: number; body: string }>): Promise<string> {
  const { status, body } = await answer
  if (status < 200 || status > 299) throw new Error(`${what}: HTTP ${status} ${body.slice(0, 300)}`)
  return body
}

/** How much the benchmark seeds. */
export interface SeedSizes {
  /** Agents, workflows, executions and threads, each. */
  rowsPerTable: number
  messages: number
  /** Threads the messages are spread over. */
  messageThreads: number
}

/**
 * Timed seeding: `step(name, sql, params)` runs one statement, prints how long it took and
 * records it in `timings` (seconds by step name).
 */
export function seedSteps(db: pg.Client): { timings: Record<string, number>; step: (name: string, sql: string, params?: unknown[]) => Promise<void> } {
  const timings: Record<string, number> = {}
  const step = async (name: string, sql: string, params: unknown[] = []) => {
    const start = performance.now()
    await db.query(sql, params)
    timings[name] = (performance.now() - start) / 1000
    console.log(`  ${name}: ${timings[name]!.toFixed(1)} s`)
  }
  return { timings, step }
}

/**
 * Seeds with set-based SQL through `pg`: `rowsPerTable` agents and workflows (visibility
 * `workspace`), as many executions (one per workflow) and threads (one per agent), spread over the
 * workspaces and the 365 days before now, and `messages` over 365 days in the first
 * `messageThreads` threads; then VACUUM ANALYZE. Answers each step's seconds.
 */
export async function seed(db: pg.Client, userId: number, workspaceIds: number[], sizes: SeedSizes): Promise<Record<string, number>> {
  const { timings, step } = seedSteps(db)
  const n = sizes.rowsPerTable
  // Spread over 365 days before now; `ws[1 + i % 3]` spreads rows over the 3 workspaces.
  const spread = `now() - random() * interval '365 days'`
  // Agents and workflows: the same columns but the counter.
  for (const [table, counter] of [
    ['agents', 'usage_count'],
    ['workflows', 'trigger_count'],
  ] as const) {
    const label = table === 'agents' ? 'Agent' : 'Workflow'
    await step(
      table,
      `insert into ${table} (uuid, name, visibility, ${counter}, user_id, workspace_id, created_at, updated_at)
       select gen_random_uuid(), '${label} ' || i, 'workspace', (random() * 1000)::int, $1, ($2::bigint[])[1 + i % 3], t, t
       from (select i, ${spread} as t from generate_series(1, ${n}) i) s`,
      [userId, workspaceIds],
    )
  }
  await step(
    'workflow_executions',
    `with w as (select id, workspace_id, row_number() over (order by id) as rn from workflows)
     insert into workflow_executions (uuid, workflow_id, user_id, workspace_id, status, duration_ms, created_at, updated_at)
     select gen_random_uuid(), w.id, $1, w.workspace_id, 'succeeded', (random() * 60000)::int, s.t, s.t
     from (select i, ${spread} as t from generate_series(0, ${n - 1}) i) s join w on w.rn = 1 + s.i`,
    [userId],
  )
  await step(
    'threads',
    `with a as (select id, workspace_id, row_number() over (order by id) as rn from agents)
     insert into threads (uuid, name, agent_id, messages_count, user_id, workspace_id, created_at, updated_at)
     select gen_random_uuid(), 'Thread ' || s.i, a.id, (random() * 1000)::int, $1, a.workspace_id, s.t, s.t
     from (select i, ${spread} as t from generate_series(0, ${n - 1}) i) s join a on a.rn = 1 + s.i`,
    [userId],
  )
  await step(
    'messages',
    `with t as (select id, workspace_id, row_number() over (order by id) - 1 as rn from threads order by id limit ${sizes.messageThreads})
     insert into messages (uuid, thread_id, user_id, workspace_id, role, prompt_tokens, completion_tokens, total_tokens, latency_ms, created_at, updated_at)
     select gen_random_uuid(), t.id, $1, t.workspace_id, 'assistant', s.p, s.c, s.p + s.c, (random() * 5000)::int, s.t, s.t
     from (select i, (random() * 2000)::int as p, (random() * 1000)::int as c, ${spread} as t
           from generate_series(0, ${sizes.messages - 1}) i) s
     join t on t.rn = s.i % ${sizes.messageThreads}`,
    [userId],
  )
  // What autovacuum would do to freshly loaded tables, done now rather than during the measurements.
  await step('vacuum analyze', 'vacuum analyze')
  return timings
}
