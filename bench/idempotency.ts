/**
 * `npm run bench:idempotency`: what an idempotent replay costs (docs/api/conventions.md,
 * "Idempotency keys") next to a read of the same resource. The service runs as a child process
 * on a fresh PostgreSQL database, over 127.0.0.1. One agent is created with an `Idempotency-Key`;
 * then, interleaved request by request (the order rotating each round), the same `POST
 * /api/v1/agents` with that key and body (a replay: checked to carry `Idempotent-Replayed: true`
 * and the first answer's bytes) and `GET /api/v1/agents/{uuid}` of that agent. N of each after W of
 * warm-up, sequential on one keep-alive connection; p50, p95 and p99 of each. Target: the replay's
 * p50 at most the GET's.
 *
 * The exit code is 0 whether or not the target is met (a measurement, not a test), 1 on an error.
 * Results: bench/results/idempotency-latest.{json,md}.
 *
 * Environment:
 *   BENCH_DATABASE_URL          admin connection of the PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres)
 *   BENCH_IDEMPOTENCY_REQUESTS  N, measured requests of each kind (default 2,000)
 *   BENCH_IDEMPOTENCY_WARMUP    W, warm-up rounds (default 200)
 */
import { performance } from 'node:perf_hooks'
import { type Bench, envNumber, fmt, machineOf, runBench, signUp, startService, writeResults } from './harness.ts'

const settings = {
  requests: Math.max(1, envNumber('BENCH_IDEMPOTENCY_REQUESTS', 2_000)),
  warmup: Math.max(0, envNumber('BENCH_IDEMPOTENCY_WARMUP', 200)),
}

/** The p-th percentile (0..100) of `values`, milliseconds. */
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}

async function main(bench: Bench) {
  const service = await startService(bench)
  const { token } = await signUp(service.url, 'Idempotent', 'idempotent@example.com')
  const body = JSON.stringify({ name: 'Replayed agent', instruction: 'Answer briefly.', metadata: { team: 'bench' } })
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': 'bench-key-1' }
  const created = await fetch(`${service.url}/api/v1/agents`, { method: 'POST', headers, body })
  const first = await created.text()
  if (created.status !== 201) throw new Error(`create answered ${created.status}: ${first}`)
  const uuid = String(JSON.parse(first).data.uuid)

  const replay = async () => {
    const response = await fetch(`${service.url}/api/v1/agents`, { method: 'POST', headers, body })
    const text = await response.text()
    if (response.headers.get('idempotent-replayed') !== 'true' || text !== first) throw new Error('a replay differed from the first answer')
  }
  const read = async () => {
    const response = await fetch(`${service.url}/api/v1/agents/${uuid}`, { headers: { authorization: `Bearer ${token}` } })
    await response.arrayBuffer()
    if (response.status !== 200) throw new Error(`GET answered ${response.status}`)
  }
  const kinds = { replay, read }
  const times: Record<keyof typeof kinds, number[]> = { replay: [], read: [] }
  for (let round = 0; round < settings.warmup + settings.requests; round += 1) {
    const order = (round % 2 === 0 ? ['replay', 'read'] : ['read', 'replay']) as (keyof typeof kinds)[]
    for (const kind of order) {
      const started = performance.now()
      await kinds[kind]()
      if (round >= settings.warmup) times[kind].push(performance.now() - started)
    }
  }
  const row = (kind: keyof typeof kinds) => ({ p50: percentile(times[kind], 50), p95: percentile(times[kind], 95), p99: percentile(times[kind], 99) })
  const results = { replay: row('replay'), read: row('read') }
  const met = results.replay.p50 <= results.read.p50
  const date = new Date().toISOString()
  const md = [
    `# Idempotent replay against a read (${date})`,
    '',
    `Machine: ${JSON.stringify(machineOf(bench.postgres))}`,
    `${settings.requests} of each, interleaved, after ${settings.warmup} rounds of warm-up; one keep-alive connection; PostgreSQL.`,
    '',
    '| request | p50 ms | p95 ms | p99 ms |',
    '|---|---|---|---|',
    `| replay of POST /api/v1/agents (Idempotency-Key) | ${fmt(results.replay.p50, 2)} | ${fmt(results.replay.p95, 2)} | ${fmt(results.replay.p99, 2)} |`,
    `| GET /api/v1/agents/{uuid} | ${fmt(results.read.p50, 2)} | ${fmt(results.read.p95, 2)} | ${fmt(results.read.p99, 2)} |`,
    '',
    `Target (replay p50 at most the GET's): ${met ? 'met' : 'missed'}.`,
  ].join('\n')
  console.log(md)
  writeResults(['idempotency'], { date, settings, results, met }, md)
}

await runBench('aw_bench_idempotency', main)
