/**
 * The connection-loss phases of `npm run bench:faults` (bench/redis-outage.ts; docs/benchmarks.md,
 * "Redis outage benchmark"; docs/operations.md, "Database deadlines"): the same closed loop with
 * agent runs added to its mix, first as it is, then while every connection the service holds to
 * its PostgreSQL database is ended every 1-2 s (`pg_terminate_backend`, as a failover or a pooler
 * restart ends them), then after.
 *
 * The model is the tests' OpenAI-compatible upstream (test/helpers/upstream.ts), in this process,
 * answering each call in full after 100-300 ms, so that runs are mid-call when their connections
 * end. After the load, once every run has ended, the database is read on a connection of the
 * benchmark's own: a run answered 2xx that is not stored, a 200 whose run had not succeeded, and
 * a stored run that did not end `succeeded` with its answer are runs lost; a run whose event log
 * is not `seq` 1..`events_count` is a gap (test/helpers/database-faults.ts, shared with
 * test/faults-database.test.ts).
 */
import pg from 'pg'
import { fmt } from './harness.ts'
import {
  driverTextIn,
  endConnections,
  openWork,
  runsWithoutEcho,
  startTerminator,
  storedWork,
  type Terminator,
} from '../test/helpers/database-faults.ts'
import { startUpstream } from '../test/helpers/upstream.ts'

/** The requests these phases add to the mix: a run answered when done, and one in the background. */
export const RUN_KINDS = ['run', 'run background'] as const
export type RunKind = (typeof RUN_KINDS)[number]

/** Pause before each round of ended connections, a random one in the range. */
export const END_EVERY_MS: [number, number] = [1_000, 2_000]
/** How long the model takes to answer, a random time in the range. */
const MODEL_MS: [number, number] = [100, 300]
/** How long to wait for the runs still going when the load stops. */
const SETTLE_MS = 60_000

/** What a phase of the loop answered, as far as these phases read it. */
export interface RunSample {
  kind: string
  /** Milliseconds since the start of the load when it was sent. */
  at: number
  ms: number
  status: number
  retryAfter: boolean
  /** For a run answered 2xx: its uuid and status as the answer gave them. */
  run?: { uuid: string; status: string }
}

/** The body of a run request: `n` makes each input its own, so its answer tells its run. */
export const runBody = (kind: RunKind, n: number): string =>
  JSON.stringify(kind === 'run' ? { input: `bench ${n}` } : { input: `bench ${n}`, background: true })

/** The run an answer's body names (`{data: {run: {uuid, status}}}`), if any. */
export function runOf(body: string): RunSample['run'] {
  try {
    const run = (JSON.parse(body) as { data?: { run?: { uuid?: unknown; status?: unknown } } }).data?.run
    return typeof run?.uuid === 'string' ? { uuid: run.uuid, status: String(run.status) } : undefined
  } catch {
    return undefined
  }
}

/** The model of these phases, served from this process; `close` stops it. */
export async function startModel(): Promise<{ url: string; close: () => Promise<void> }> {
  const upstream = await startUpstream()
  upstream.respondWith(() => ({ kind: 'slow', delayMs: MODEL_MS[0] + Math.floor(Math.random() * (MODEL_MS[1] - MODEL_MS[0])) }))
  // Nothing reads the recorded requests: forget them (reset() would forget the reply too).
  const forget = setInterval(() => (upstream.requests.length = 0), 1_000)
  return {
    url: upstream.url,
    close: async () => {
      clearInterval(forget)
      await upstream.close()
    },
  }
}

/** The benchmark's own connection to its database, and why the phases cannot run (null when they can). */
export interface DatabaseFaults {
  client: pg.Client
  skip: string | null
  /** Starts ending every other connection to the database for `seconds`. */
  start: (seconds: number) => Terminator
}

/**
 * Connects to the benchmark's database and ends the service's connections once, before any load,
 * to learn whether this role may (it needs to be a superuser, the service's role, or a member of
 * `pg_signal_backend`); the service opens new ones on its next request.
 */
export async function openDatabaseFaults(databaseUrl: string, database: string): Promise<DatabaseFaults> {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  let skip: string | null = null
  try {
    await endConnections(client, database)
  } catch (error) {
    skip = `skipping the connection-loss phases: this PostgreSQL role may not end the service's connections (${String(error)}); run with a BENCH_DATABASE_URL whose role may`
  }
  return { client, skip, start: (seconds) => startTerminator(client, database, { everyMs: END_EVERY_MS, forMs: seconds * 1000 }) }
}

/** What became of the runs of the load. */
export interface RunsOutcome {
  /** Runs stored, and answers of run requests by class. */
  stored: number
  answers: { ok: number; unavailable: number; other: number }
  /** Runs answered 2xx but not stored, or answered 200 though not succeeded; stored runs that did not succeed with their answer. */
  lost: string[]
  /** Runs whose event log has a gap. */
  gaps: string[]
  /** Stored errors with the driver's text in them. */
  driverText: string[]
  /** Work still queued or running after {@link SETTLE_MS}. */
  unsettled: number
}

/** Waits (up to {@link SETTLE_MS}) for every run to end, then reads what the runs of `samples` left. */
export async function runsOutcome(client: pg.Client, samples: RunSample[]): Promise<RunsOutcome> {
  const deadline = Date.now() + SETTLE_MS
  let open = await openWork(client)
  while (open.runs + open.executions + open.firings > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 500))
    open = await openWork(client)
  }
  const work = await storedWork(client)
  const stored = new Set(work.runs.map((run) => run.uuid))
  const runSamples = samples.filter((sample) => (RUN_KINDS as readonly string[]).includes(sample.kind))
  const answeredLost = runSamples
    .filter((sample) => sample.run && (!stored.has(sample.run.uuid) || (sample.status === 200 && sample.run.status !== 'succeeded')))
    .map(
      (sample) =>
        `${sample.run!.uuid} answered ${sample.status} (${sample.run!.status})${stored.has(sample.run!.uuid) ? '' : ', not stored'}`,
    )
  return {
    stored: work.runs.length,
    answers: {
      ok: runSamples.filter((sample) => sample.status >= 200 && sample.status < 300).length,
      unavailable: runSamples.filter((sample) => sample.status === 503).length,
      other: runSamples.filter((sample) => sample.status !== 503 && !(sample.status >= 200 && sample.status < 300)).length,
    },
    lost: [...new Set([...answeredLost, ...runsWithoutEcho(work)])],
    gaps: work.gaps.map(
      (gap) => `${gap.uuid}: ${gap.events} events of ${gap.events_count}, seq ${gap.first_seq}..${gap.last_seq}, last ${gap.last_type}`,
    ),
    driverText: driverTextIn(work),
    unsettled: open.runs + open.executions + open.firings,
  }
}

/** Answers of one kind of request in one phase: by class (2xx, 503 with Retry-After, anything else) and p99. */
export interface KindAnswers {
  kind: string
  requests: number
  ok: number
  unavailable: number
  other: number
  p99Ms: number
}

/** {@link KindAnswers} of each of `kinds` among `samples` sent in [from, to). */
export function answersByKind(samples: RunSample[], kinds: string[], from: number, to: number): KindAnswers[] {
  return kinds.map((kind) => {
    const mine = samples.filter((sample) => sample.kind === kind && sample.at >= from && sample.at < to)
    const times = mine.map((sample) => sample.ms).sort((a, b) => a - b)
    const ok = mine.filter((sample) => sample.status >= 200 && sample.status < 300).length
    const unavailable = mine.filter((sample) => sample.status === 503 && sample.retryAfter).length
    return {
      kind,
      requests: mine.length,
      ok,
      unavailable,
      other: mine.length - ok - unavailable,
      p99Ms: times.length ? times[Math.min(times.length - 1, Math.ceil(0.99 * times.length) - 1)] : 0,
    }
  })
}

/**
 * The verdict of the connection loss against its targets (no answer but 2xx and 503 with
 * Retry-After, no run lost, no gap, no driver text stored), with its throughput against the phase
 * before it (the same mix, nothing ended) and its p99.
 */
export function databaseVerdict(
  ended: { requestsPerSecond: number; p99Ms: number },
  baseline: { requestsPerSecond: number },
  answers: KindAnswers[],
  outcome: RunsOutcome,
): string {
  const other = answers.reduce((sum, a) => sum + a.other, 0)
  const misses = [
    other > 0 ? `${other} answers neither 2xx nor 503 with Retry-After` : null,
    outcome.lost.length > 0 ? `${outcome.lost.length} runs lost` : null,
    outcome.gaps.length > 0 ? `${outcome.gaps.length} event logs with a gap` : null,
    outcome.driverText.length > 0 ? `${outcome.driverText.length} stored errors with driver text` : null,
  ].filter(Boolean)
  const verdict = misses.length
    ? `target missed (${misses.join('; ')})`
    : 'targets met (only 2xx and 503 with Retry-After, no run lost, no gap)'
  return `ended: ${verdict}; throughput ${fmt((ended.requestsPerSecond / baseline.requestsPerSecond) * 100)}% of the runs phase, p99 ${fmt(ended.p99Ms)} ms`
}

/** The connection-loss part of the results: answers per kind of each phase, and the runs' outcome. */
export function databaseMarkdown(
  phases: { name: string; answers: KindAnswers[] }[],
  outcome: RunsOutcome,
  terminated: { rounds: number; ended: number },
): string {
  return [
    `Connection loss: ${terminated.ended} connections ended in ${terminated.rounds} rounds, ${END_EVERY_MS[0] / 1000}-${END_EVERY_MS[1] / 1000} s apart; the model answers in ${MODEL_MS[0]}-${MODEL_MS[1]} ms.`,
    '',
    '| phase | request | answers | 2xx | 503 + Retry-After | other | p99 ms |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: |',
    ...phases.flatMap((phase) =>
      phase.answers.map(
        (a) => `| ${phase.name} | ${a.kind} | ${a.requests} | ${a.ok} | ${a.unavailable} | ${a.other} | ${fmt(a.p99Ms, 1)} |`,
      ),
    ),
    '',
    `Runs: ${outcome.stored} stored; run requests answered ${outcome.answers.ok} 2xx, ${outcome.answers.unavailable} 503, ${outcome.answers.other} other; ` +
      `lost ${outcome.lost.length}, event log gaps ${outcome.gaps.length}, stored errors with driver text ${outcome.driverText.length}` +
      `${outcome.unsettled ? `, ${outcome.unsettled} still unfinished after ${SETTLE_MS / 1000} s` : ''}.`,
    ...[...outcome.lost, ...outcome.gaps, ...outcome.driverText].slice(0, 20).map((line) => `- ${line}`),
    '',
  ].join('\n')
}
