/**
 * `npm run bench`: throughput of the service against baselines measured in the same
 * run, on PostgreSQL, all over 127.0.0.1.
 *
 *   (a) bare node:http route answering the bytes of `GET /api/v1/ping`  (Node's HTTP ceiling)
 *   (b) bare node:http route doing one primary-key SELECT through `pg`  (one DB round trip)
 *   (c) `GET /api/v1/ping`: a procedure without database, through the REST layer (stack ceiling)
 *   (d) `GET /health`: a plain Fastify route of the service
 *   (e) `GET /api/v1/user` with a bearer token: the token resolved through the per-process token
 *       cache (src/platform/auth-cache.ts: one authentication query per token per 5 s) + procedure
 *   (f) `GET /api/v1/agents/{uuid}`: one agent with 3 tools (bound account), 2 workflows, 1 share
 *   (g) `GET /api/v1/agents?per_page=15&with=tools,workflows`: a page of 15 agents with relations
 *
 * Rows (f) and (g) read agents seeded through the REST API (bench/seed-agents.ts).
 * Each server is a child process (a fresh database `aw_bench_*` is created and dropped); autocannon
 * runs here with the same settings for every row: 50 connections, pipelining 1, a 2 s warm-up,
 * then BENCH_DURATION seconds (default 10). Results are ratios to (c); the target is (e) >= 80% of
 * (c) and (f) >= 60% of (c). The exit code is 0 whether or not the target is met: this is a measurement, not a test.
 *
 * Besides throughput and latency, each row reports the CPU one request cost the server process
 * and the PostgreSQL backends of the benchmark database (read from /proc, Linux only), and how
 * busy the rest of the machine was meanwhile ("other load", in cores): a noisy neighbour shows
 * there instead of silently lowering a ratio.
 *
 * Environment:
 *   BENCH_DATABASE_URL  admin connection of the PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres)
 *   BENCH_DURATION      seconds per measured run (default 10)
 *   BENCH_WARMUP        seconds of warm-up before each run (default 2)
 *   BENCH_CONNECTIONS   autocannon connections (default 50)
 *   BENCH_ONLY          rows to run, e.g. "c,e" (default all)
 *   BENCH_PROFILE       a folder: run the service under `node --cpu-prof` writing there; each row's
 *                       measured window is in the results JSON (see bench/profile-summary.ts)
 */
import { randomBytes } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import path from 'node:path'
import {
  type Bench,
  cannonSettings as settings,
  CHILD_ENV,
  envList,
  expectOk,
  fmt,
  machineOf,
  measure,
  ms,
  pct,
  type Row,
  runBench,
  serviceBaselines,
  signUp,
  startService,
  type Target,
  us,
  writeResults,
} from './harness.ts'
import { type Child, startChild } from './processes.ts'
import { seedAgents } from './seed-agents.ts'

const TARGET_RATIO = 0.8
/** Target (docs/benchmarks.md): the single agent read (f) at least 60% of (c). */
const AGENT_TARGET_RATIO = 0.6
const only = envList('BENCH_ONLY', 'a,b,c,d,e,f,g')
const profileDir = process.env.BENCH_PROFILE ? path.resolve(process.env.BENCH_PROFILE) : undefined

function markdown(rows: Row[], meta: { date: string; machine: string; postgres: string }, verdict: string): string {
  const lines = [
    `Benchmark of ${meta.date}: ${meta.machine}; ${meta.postgres}.`,
    `autocannon: ${settings.connections} connections, pipelining ${settings.pipelining}, ${settings.warmupSeconds} s warm-up then ${settings.durationSeconds} s per row; request logging off (LOG_LEVEL=warn).`,
    '',
    '| row | request | req/s | p50 ms | p99 ms | vs (c) | server CPU µs/req | PostgreSQL CPU µs/req | other load |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (row) =>
        `| (${row.key}) ${row.name} | \`${row.request}\` | ${fmt(row.requestsPerSecond)} | ${ms(row.latencyP50Ms)} | ${ms(row.latencyP99Ms)} | ` +
        `${pct(row.vsPing)} | ${us(row.serverCpuUsPerRequest)} | ${us(row.postgresCpuUsPerRequest)} | ` +
        `${row.otherLoadCores === null ? 'n/a' : fmt(row.otherLoadCores, 2)} |` +
        (row.non2xx || row.errors ? ` ⚠ ${row.non2xx} non-2xx, ${row.errors} errors` : ''),
    ),
    '',
    'Latency has 1 ms resolution. CPU per request: of the server process, and of the PostgreSQL backends connected to the',
    'benchmark database; "other load": cores that everything else on the machine kept busy during the row (noise).',
    '',
    verdict,
    '',
  ]
  return lines.join('\n')
}

async function main(bench: Bench) {
  if (profileDir) mkdirSync(profileDir, { recursive: true })
  const service = await startService(bench, profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [])

  const ping = await fetch(`${service.url}/api/v1/ping`)
  const pingBody = await expectOk(ping, 'GET /api/v1/ping')
  const contentType = ping.headers.get('content-type') ?? 'application/json; charset=utf-8'

  const email = `bench-${randomBytes(4).toString('hex')}@example.com`
  const me = await signUp(service.url, 'Bench User', email)
  const authorization = { authorization: `Bearer ${me.token}` }
  await expectOk(await fetch(`${service.url}/api/v1/user`, { headers: authorization }), 'GET /api/v1/user')
  const friend = await signUp(service.url, 'Bench Friend', `friend-${email}`)
  const seeded = only.has('f') || only.has('g') ? await seedAgents(service.url, me.token, friend.userId) : null

  const bare = await startChild('bare-http', 'bench/static-server.ts', {
    ...CHILD_ENV,
    BENCH_BODY_BASE64: pingBody.toString('base64'),
    BENCH_CONTENT_TYPE: contentType,
  })
  bench.children.push(bare)
  const barePg = await startChild('bare-pg', 'bench/pg-server.ts', {
    ...CHILD_ENV,
    DATABASE_URL: bench.databaseUrl,
    BENCH_USER_ID: String(me.userId),
  })
  bench.children.push(barePg)
  const bareBody = await expectOk(await fetch(bare.url), 'bare route')
  if (!bareBody.equals(pingBody)) throw new Error('the bare route does not answer the bytes of GET /api/v1/ping')

  const pid = (child: Child) => child.process.pid!
  const targets: Target[] = [
    { key: 'a', name: 'bare node:http, same bytes', request: 'GET / (bare)', url: `${bare.url}/`, pid: pid(bare) },
    { key: 'b', name: 'bare node:http + pg SELECT by id', request: 'GET / (bare pg)', url: `${barePg.url}/`, pid: pid(barePg) },
    serviceBaselines(service).ping,
    serviceBaselines(service).health,
    {
      key: 'e',
      name: 'authenticated procedure (token cache)',
      request: 'GET /api/v1/user',
      url: `${service.url}/api/v1/user`,
      headers: authorization,
      pid: pid(service),
    },
  ]
  if (seeded) {
    targets.push(
      {
        key: 'f',
        name: 'one agent with 3 tools, 2 workflows, 1 share',
        request: 'GET /api/v1/agents/{uuid}',
        url: `${service.url}/api/v1/agents/${seeded.agentUuid}`,
        headers: authorization,
        pid: pid(service),
      },
      {
        key: 'g',
        name: `a page of 15 of ${seeded.agents} agents with tools and workflows`,
        request: 'GET /api/v1/agents?per_page=15&with=tools,workflows',
        url: `${service.url}/api/v1/agents?per_page=15&with=tools,workflows`,
        headers: authorization,
        pid: pid(service),
      },
    )
  }
  const rows: Row[] = []
  for (const target of targets) if (only.has(target.key)) rows.push(await measure(bench, target))

  const baseline = rows.find((row) => row.key === 'c')
  for (const row of rows) row.vsPing = baseline ? row.requestsPerSecond / baseline.requestsPerSecond : null
  const ratio = rows.find((row) => row.key === 'e')?.vsPing ?? null
  const pass = ratio === null ? null : ratio >= TARGET_RATIO
  const verdict =
    ratio === null
      ? 'Target (e) >= 80% of (c): not measured (run rows c and e).'
      : `Target (e) >= 80% of (c): (e)/(c) = ${pct(ratio)} -> **${pass ? 'PASS' : 'FAIL'}**`
  const agentRatio = rows.find((row) => row.key === 'f')?.vsPing ?? null
  const agentPass = agentRatio === null ? null : agentRatio >= AGENT_TARGET_RATIO
  const agentVerdict =
    agentRatio === null
      ? 'Target (f) >= 60% of (c): not measured (run rows c and f).'
      : `Target (f) >= 60% of (c): (f)/(c) = ${pct(agentRatio)} -> **${agentPass ? 'PASS' : 'FAIL'}**`

  const date = new Date().toISOString()
  const machine = machineOf(bench.postgres)
  const md = markdown(rows, { date, machine: machine.line, postgres: `PostgreSQL ${bench.postgres}` }, `${verdict}\n\n${agentVerdict}`)
  console.log(`\n${md}`)

  const json = {
    date,
    machine: machine.json,
    settings,
    rows,
    target: { ratio, threshold: TARGET_RATIO, pass },
    agentTarget: { ratio: agentRatio, threshold: AGENT_TARGET_RATIO, pass: agentPass },
    profileDir: profileDir ?? null,
  }
  writeResults([`bench-${date.replace(/[:.]/g, '-')}`, 'latest'], json, md)
}

await runBench('aw_bench', main)
