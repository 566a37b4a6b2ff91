/**
 * `npm run bench:audit`: what the audit log (docs/api/audit.md) costs a change, and how fast it
 * reads. On PostgreSQL, over 127.0.0.1, two services as child processes, each on its own fresh
 * database:
 *
 *   write  the service of this tree, and the same service at BENCH_AUDIT_BASELINE (a git revision;
 *          default: the commit before the audit log was added), checked out into a temporary
 *          worktree sharing this tree's node_modules. One agent each; then, interleaved request by
 *          request (the order rotating each round), `PUT /api/v1/agents/{uuid}` changing its
 *          description on each service, N of each after W of warm-up, sequential on keep-alive
 *          connections. Target: p50 with the audit at most 0.5 ms over the baseline's.
 *   read   1,000,000 events in the workspace of this tree's service (written with SQL as the
 *          service writes them: 10,000 resources of 100 events each, over a year), analysed; then
 *          `GET /api/v1/audit-events?resource_uuid=<one of them>` R times (a different resource
 *          each time), and for comparison the unfiltered first page and `action=agent.*`. Target:
 *          the resource filter's p50 under 50 ms.
 *
 * The exit code is 0 whether or not a target is met (a measurement, not a test), 1 on an error.
 * Results: bench/results/audit-latest.{json,md}.
 *
 * Environment:
 *   BENCH_DATABASE_URL      admin connection of the PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres)
 *   BENCH_AUDIT_BASELINE    the baseline's git revision (default: the parent of the commit that added src/platform/audit.ts)
 *   BENCH_AUDIT_REQUESTS    N (default 2,000)
 *   BENCH_AUDIT_WARMUP      W (default 200)
 *   BENCH_AUDIT_EVENTS      events written for the read round (default 1,000,000)
 *   BENCH_AUDIT_READS       R (default 200)
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import pg from 'pg'
import { startChild } from './processes.ts'
import { CHILD_ENV, envNumber, extraDatabase, fmt, machineOf, runBench, signUp, startService, writeResults } from './harness.ts'
import { randomBytes } from 'node:crypto'

const settings = {
  requests: Math.max(1, envNumber('BENCH_AUDIT_REQUESTS', 2_000)),
  warmup: Math.max(0, envNumber('BENCH_AUDIT_WARMUP', 200)),
  events: Math.max(100, envNumber('BENCH_AUDIT_EVENTS', 1_000_000)),
  reads: Math.max(1, envNumber('BENCH_AUDIT_READS', 200)),
}
const WRITE_TARGET_MS = 0.5
const READ_TARGET_MS = 50
const EVENTS_PER_RESOURCE = 100

/** p50, p95 and p99 of `values` (ms). */
function percentiles(values: number[]): { p50: number; p95: number; p99: number } {
  const sorted = [...values].sort((a, b) => a - b)
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
  return { p50: at(50), p95: at(95), p99: at(99) }
}

const git = (...args: string[]) => execFileSync('git', args, { encoding: 'utf8' }).trim()

/** The baseline revision: BENCH_AUDIT_BASELINE, else the parent of the commit that added the audit log's recorder. */
function baselineRevision(): string {
  const given = process.env.BENCH_AUDIT_BASELINE
  if (given) return git('rev-parse', given)
  const added = git('log', '--diff-filter=A', '--format=%H', '--', 'src/platform/audit.ts').split('\n').filter(Boolean).at(-1)
  if (!added) throw new Error('src/platform/audit.ts is not committed yet: set BENCH_AUDIT_BASELINE to a revision without the audit log')
  return git('rev-parse', `${added}^`)
}

/** An agent of a new user of `serviceUrl`, and a PUT of it that changes its description each call. */
async function puttable(serviceUrl: string, email: string): Promise<() => Promise<void>> {
  const { token } = await signUp(serviceUrl, 'Audited', email)
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
  const created = await fetch(`${serviceUrl}/api/v1/agents`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name: 'Audited agent', instruction: 'Answer briefly.' }),
  })
  if (created.status !== 201) throw new Error(`create answered ${created.status}: ${await created.text()}`)
  const uuid = String(((await created.json()) as { data: { uuid: string } }).data.uuid)
  let n = 0
  return async () => {
    n += 1
    const response = await fetch(`${serviceUrl}/api/v1/agents/${uuid}`, {
      method: 'PUT',
      headers,
      body: JSON.stringify({ description: `Revision ${n}` }),
    })
    await response.arrayBuffer()
    if (response.status !== 200) throw new Error(`PUT answered ${response.status}`)
  }
}

await runBench('aw_bench_audit', async (bench) => {
  // The write round: this tree against the baseline, side by side.
  const revision = baselineRevision()
  const worktree = mkdtempSync(path.join(tmpdir(), 'aw-audit-baseline-'))
  git('worktree', 'add', '--detach', '--force', worktree, revision)
  bench.closers.push(async () => {
    git('worktree', 'remove', '--force', worktree)
    rmSync(worktree, { recursive: true, force: true })
  })
  symlinkSync(path.resolve('node_modules'), path.join(worktree, 'node_modules'))
  const current = await startService(bench)
  const baselineUrl = await extraDatabase(bench, 'baseline')
  const baseline = await startChild(
    'baseline',
    'src/server.ts',
    {
      ...CHILD_ENV,
      DATABASE_URL: baselineUrl,
      APP_KEY: `base64:${randomBytes(32).toString('base64')}`,
      APP_URL: '',
      REDIS_URL: '',
      SIGN_IN_MAX_PER_ADDRESS: '1000000',
      SIGN_IN_MAX_PER_EMAIL: '1000000',
    },
    { readyPath: '/ready', cwd: worktree },
  )
  bench.children.push(baseline)
  const kinds = { audited: await puttable(current.url, 'audited@example.com'), baseline: await puttable(baseline.url, 'baseline@example.com') }
  const times: Record<keyof typeof kinds, number[]> = { audited: [], baseline: [] }
  for (let round = 0; round < settings.warmup + settings.requests; round += 1) {
    const order = (round % 2 === 0 ? ['audited', 'baseline'] : ['baseline', 'audited']) as (keyof typeof kinds)[]
    for (const kind of order) {
      const started = performance.now()
      await kinds[kind]()
      if (round >= settings.warmup) times[kind].push(performance.now() - started)
    }
  }
  const write = { audited: percentiles(times.audited), baseline: percentiles(times.baseline) }
  const cost = write.audited.p50 - write.baseline.p50
  console.log(`PUT agents p50: ${fmt(write.audited.p50, 2)} ms with the audit log, ${fmt(write.baseline.p50, 2)} ms at ${revision.slice(0, 8)}`)

  // The read round: a million events in the current service's workspace.
  const { token, userId } = await signUp(current.url, 'Reader', 'reader@example.com')
  const db = new pg.Client({ connectionString: bench.databaseUrl })
  await db.connect()
  bench.closers.push(() => db.end())
  const [{ id: workspaceId }] = (
    await db.query<{ id: number }>(`select primary_workspace_id::float8 as id from users where id = $1`, [userId])
  ).rows
  const resources = Math.ceil(settings.events / EVENTS_PER_RESOURCE)
  const written = performance.now()
  await db.query(`create temporary table bench_resources as select g as n, gen_random_uuid() as uuid from generate_series(1, $1::int) g`, [
    resources,
  ])
  for (let from = 1; from <= settings.events; from += 100_000) {
    await db.query(
      `insert into audit_events (uuid, occurred_at, action, actor_type, actor_user_id, token_kind, workspace_id, resource_type, resource_uuid,
         request_id, ip, user_agent, changes)
       select gen_random_uuid(), now() - make_interval(secs => ($3::int - g) * 31.5), (array['agent.create', 'agent.update', 'prompt.update', 'member.add'])[1 + g % 4],
         'user', $1, 'basic', $2, 'agent', r.uuid, 'req-' || g, '127.0.0.1', 'bench',
         jsonb_build_object('description', jsonb_build_object('from', 'Revision ' || g, 'to', 'Revision ' || (g + 1)))
       from generate_series($4::int, least($3::int, $4::int + 99999)) g join bench_resources r on r.n = 1 + g % $5::int
       order by g`,
      [userId, workspaceId, settings.events, from, resources],
    )
  }
  await db.query('analyze audit_events')
  const writeSeconds = (performance.now() - written) / 1000
  const { rows: picks } = await db.query<{ uuid: string }>(`select uuid from bench_resources order by random() limit $1`, [settings.reads])
  const headers = { authorization: `Bearer ${token}` }
  const get = async (query: string): Promise<number> => {
    const started = performance.now()
    const response = await fetch(`${current.url}/api/v1/audit-events?${query}`, { headers })
    const body = (await response.json()) as { meta?: { total: number } }
    if (response.status !== 200) throw new Error(`GET audit-events?${query} answered ${response.status}`)
    const elapsed = performance.now() - started
    if (query.startsWith('resource_uuid') && body.meta?.total !== EVENTS_PER_RESOURCE) throw new Error(`${query}: ${body.meta?.total} events`)
    return elapsed
  }
  for (const pick of picks.slice(0, 20)) await get(`resource_uuid=${pick.uuid}`)
  const byResource: number[] = []
  for (const pick of picks) byResource.push(await get(`resource_uuid=${pick.uuid}`))
  const unfiltered: number[] = []
  const byAction: number[] = []
  for (let i = 0; i < Math.min(50, settings.reads); i += 1) {
    unfiltered.push(await get('per_page=15'))
    byAction.push(await get('action=agent.*'))
  }
  const read = { byResource: percentiles(byResource), unfiltered: percentiles(unfiltered), byAction: percentiles(byAction) }

  const machine = machineOf(bench.postgres)
  const date = new Date().toISOString()
  const line = (p: { p50: number; p95: number; p99: number }) => `${fmt(p.p50, 2)} / ${fmt(p.p95, 2)} / ${fmt(p.p99, 2)}`
  const md = [
    `# Audit log benchmark, ${date}`,
    '',
    `${machine.line}, PostgreSQL ${bench.postgres}; ${fmt(settings.requests)} interleaved requests of each kind after ${fmt(settings.warmup)} of warm-up.`,
    '',
    '| request | p50 / p95 / p99 ms |',
    '| --- | ---: |',
    `| PUT /api/v1/agents/{uuid} with the audit log | ${line(write.audited)} |`,
    `| the same at ${revision.slice(0, 12)} (no audit log) | ${line(write.baseline)} |`,
    '',
    `Audit cost at p50: ${fmt(cost, 2)} ms (target at most ${WRITE_TARGET_MS} ms: ${cost <= WRITE_TARGET_MS ? 'met' : 'NOT met'}).`,
    '',
    `${fmt(settings.events)} events (${fmt(resources)} resources of ${EVENTS_PER_RESOURCE}) written with SQL in ${fmt(writeSeconds, 1)} s; reads of the first page:`,
    '',
    '| GET /api/v1/audit-events | p50 / p95 / p99 ms |',
    '| --- | ---: |',
    `| ?resource_uuid=<one resource> (${fmt(settings.reads)} reads) | ${line(read.byResource)} |`,
    `| no filter (total over every event) | ${line(read.unfiltered)} |`,
    `| ?action=agent.* | ${line(read.byAction)} |`,
    '',
    `Target: the resource filter under ${READ_TARGET_MS} ms at p50: ${read.byResource.p50 < READ_TARGET_MS ? 'met' : 'NOT met'}.`,
  ]
  console.log('\n' + md.join('\n'))
  writeResults(['audit-latest'], { date, machine: machine.json, settings, revision, write, cost, read, writeSeconds }, md.join('\n') + '\n')
})
