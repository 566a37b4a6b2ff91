/**
 * `npm run bench:tracing`: what OpenTelemetry tracing (docs/operations.md, "Traces") costs the
 * service, on PostgreSQL, all over 127.0.0.1. Two services as child processes, each on its own
 * fresh database (`aw_bench_tracing_*`, dropped at the end), both with the runs benchmark's
 * upstream (bench/runs-upstream.ts, answering `Echo: <input>` at once) as their model provider:
 *
 *   off  no OTEL_* variable (any in this process's environment is removed first);
 *   on   OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:<port> of a minimal OTLP/HTTP receiver in
 *        this process, every other OTEL_* at its default (OTLP/HTTP protobuf, the batch span
 *        processor exporting every 5,000 ms or at 512 spans, 2,048 queued at most, every trace
 *        sampled). The receiver answers 200 with an empty body to `POST /v1/traces`, counts
 *        requests and bytes by the process that sent them (the TCP connection's owner, from
 *        /proc), and counts spans by name from the protobuf's framing (nothing else decoded).
 *
 * Measured, the two services taking turns in BENCH_SLICES slices (the order swapped each slice),
 * so that a drifting machine reaches both alike:
 *
 *   (c)  the foundation benchmark's row (c), `GET /api/v1/ping`, with autocannon through the
 *        harness (BENCH_CONNECTIONS connections, a BENCH_WARMUP s warm-up, then BENCH_DURATION s
 *        per slice), each slice on a fresh process of each service (on its database, stopped
 *        after its slice, its last spans flushed): one process's speed differs from the next
 *        one's by up to a third (ping at 196 to 261 µs of CPU in successive starts of the same
 *        tree), so one pair of processes would compare two draws, not tracing. A service's row sums its slices: throughput = requests / measured seconds,
 *        p50 the median of the slices', p99 the highest, service CPU per request over the
 *        measured windows (/proc), other load the mean of the slices'.
 *   run  the runs benchmark's measure (bench/runs.ts): `POST /api/v1/agents/{uuid}/run` answered
 *        when done, sequential, and the upstream called directly with the same streaming request;
 *        the latency the service adds = run - upstream full answer, at p50 and p90.
 *        BENCH_TRACING_RUNS runs on each service and as many direct calls, in the same slices,
 *        after BENCH_TRACING_WARMUP of each, on one process of each service started after (c);
 *        service CPU per run from the first slice to the last (the other service's turns
 *        included, so the traced one's background exports count).
 *
 * After the last slice the receiver is given OTEL_BSP_SCHEDULE_DELAY plus a second for the last
 * batch; it must have got spans from the traced service and no request from the untraced one.
 *
 * Targets: with tracing on, (c) throughput >= 90% of off, and the run's added latency at p50 <=
 * 110% of off. The exit code is 0 whether or not a target is met (a measurement, not a test), 1
 * on an error. Results: bench/results/tracing-latest.{json,md}.
 *
 * Environment:
 *   BENCH_DATABASE_URL    admin connection of the PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres)
 *   BENCH_DURATION        seconds of each measured (c) slice (default 10)
 *   BENCH_WARMUP          seconds of warm-up before each (c) slice (default 2)
 *   BENCH_CONNECTIONS     autocannon connections (default 50)
 *   BENCH_SLICES          turns of each service (default 5)
 *   BENCH_TRACING_RUNS    sequential runs measured on each service (default 500)
 *   BENCH_TRACING_WARMUP  sequential runs (and direct calls) before measuring (default 30)
 *   BENCH_TRACING_SAMPLER_RATIO  a ratio in (0, 1]: the traced service samples that share of new
 *                         traces (OTEL_TRACES_SAMPLER=parentbased_traceidratio, OTEL_TRACES_SAMPLER_ARG);
 *                         unset, every trace (the default sampler); what an operator does for whom
 *                         a span on every cheap request costs too much
 *   BENCH_PROFILE         a folder: every service process runs under `node --cpu-prof`, writing
 *                         tracing-<off|on>-c<slice>.cpuprofile (the (c) slices' processes) and
 *                         tracing-<off|on>-runs.cpuprofile there; each slice's windows are in the results
 *                         JSON as rows "<off|on>:c<slice>" and "<off|on>:run<slice>" (npx tsx
 *                         bench/profile-summary.ts DIR/tracing-on-c2.cpuprofile --row=on:c2
 *                         --results=bench/results/tracing-latest.json)
 */
import { mkdirSync, readdirSync, readFileSync, readlinkSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { cpuSeconds } from './cpu.ts'
import {
  type Bench,
  cannonSettings,
  envNumber,
  extraDatabase,
  fmt,
  machineOf,
  measure,
  type Row,
  runBench,
  serviceBaselines,
  startService,
  summariseP90,
  writeResults,
} from './harness.ts'
import { median } from './metrics-support.ts'
import { type Child, startUpstreamChild, stopChild } from './processes.ts'
import { type Api, runnerApi, runOnce, sequential, upstreamOnce } from './runs.ts'

const settings = {
  ...cannonSettings,
  slices: Math.floor(envNumber('BENCH_SLICES', 5)),
  runs: Math.floor(envNumber('BENCH_TRACING_RUNS', 500)),
  runWarmup: Math.floor(envNumber('BENCH_TRACING_WARMUP', 30)),
  /** The traced service's sampling ratio of new traces; null: the default sampler (every trace). */
  samplerRatio: process.env.BENCH_TRACING_SAMPLER_RATIO ? envNumber('BENCH_TRACING_SAMPLER_RATIO', 1) : null,
  /** The batch span processor's default delay (OTEL_BSP_SCHEDULE_DELAY, not set for the traced service). */
  scheduleDelayMs: 5_000,
}
/** BENCH_PROFILE: a folder for the services' CPU profiles. */
const profileDir = process.env.BENCH_PROFILE ? path.resolve(process.env.BENCH_PROFILE) : undefined
/** A service process's Node arguments: none, or a CPU profile named after its side and its part (`c2`, `runs`). */
const nodeArgsOf = (side: Side, part: string) =>
  profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=tracing-${side}-${part}.cpuprofile`] : []
/** (c) with tracing on at least this share of off's throughput. */
const THROUGHPUT_TARGET = 0.9
/** The run's added latency at p50 with tracing on at most this multiple of off's. */
const ADDED_TARGET = 1.1

type Side = 'off' | 'on'
const SIDES: readonly Side[] = ['off', 'on']
/** The sides in slice `index`'s order: off first in even slices, on first in odd ones. */
const orderOf = (index: number): readonly Side[] => (index % 2 === 0 ? SIDES : [...SIDES].reverse())
const now = () => performance.now()
/** The monotonic clock in µs, which V8's CPU profiles use on Linux. */
const monotonicUs = () => Number(process.hrtime.bigint() / 1000n)
/** A measured window of one side in one slice: `<side>:c<slice>` or `<side>:run<slice>` (bench/profile-summary.ts --row). */
type Window = { key: string; window: { startUs: number; endUs: number } }

// ---------------------------------------------------------------------------------------------
// The OTLP receiver

/** What the receiver got from one sender. */
interface Received {
  requests: number
  bytes: number
  spans: number
}

interface Receiver {
  url: string
  /** By sender: a service's side, or `unknown` (a process of neither service, or no /proc). */
  bySender: Record<Side | 'unknown', Received>
  /** Spans by name, all senders. */
  spanNames: Map<string, number>
  /** Bodies whose framing could not be walked (their spans are not counted). */
  unreadable: number
  server: Server
}

/** A protobuf varint at `at` of `buf`: its value and the offset after it. */
function varint(buf: Buffer, at: number): [number, number] {
  let value = 0
  for (let shift = 0; ; shift += 7) {
    const byte = buf[at++]
    if (byte === undefined) throw new Error('truncated varint')
    value += (byte & 0x7f) * 2 ** shift
    if (byte < 0x80) return [value, at]
  }
}

/** The [start, end) ranges of the length-delimited fields numbered `field` of the message in buf[start, end). */
function fieldsOf(buf: Buffer, start: number, end: number, field: number, first = false): [number, number][] {
  const ranges: [number, number][] = []
  for (let at = start; at < end;) {
    const [key, next] = varint(buf, at)
    at = next
    const wire = key % 8
    if (wire === 0) at = varint(buf, at)[1]
    else if (wire === 1) at += 8
    else if (wire === 5) at += 4
    else if (wire === 2) {
      const [length, body] = varint(buf, at)
      at = body + length
      if (Math.floor(key / 8) === field) {
        ranges.push([body, at])
        if (first) break
      }
    } else throw new Error(`wire type ${wire}`)
  }
  return ranges
}

/**
 * Counts the spans of an OTLP `ExportTraceServiceRequest` by name: resource_spans (1) ->
 * scope_spans (2) -> spans (2) -> name (5), skipping every other field by its length.
 */
function countSpans(body: Buffer, names: Map<string, number>): number {
  let spans = 0
  for (const [rs, rsEnd] of fieldsOf(body, 0, body.length, 1)) {
    for (const [ss, ssEnd] of fieldsOf(body, rs, rsEnd, 2)) {
      for (const [span, spanEnd] of fieldsOf(body, ss, ssEnd, 2)) {
        const [name] = fieldsOf(body, span, spanEnd, 5, true)
        const text = name ? body.toString('utf8', name[0], name[1]) : ''
        names.set(text, (names.get(text) ?? 0) + 1)
        spans += 1
      }
    }
  }
  return spans
}

/** The side whose process holds the loopback TCP connection from `port` to `peerPort` (Linux /proc), else `unknown`. */
function senderOf(port: number, peerPort: number, pids: Map<Side, number>): Side | 'unknown' {
  const hex = (value: number) => `:${value.toString(16).toUpperCase().padStart(4, '0')}`
  try {
    const row = readFileSync('/proc/net/tcp', 'utf8')
      .split('\n')
      .map((line) => line.trim().split(/\s+/))
      .find((fields) => fields[1]?.endsWith(hex(port)) && fields[2]?.endsWith(hex(peerPort)))
    const socket = row ? `socket:[${row[9]}]` : undefined
    for (const [side, pid] of pids) {
      let fds: string[]
      try {
        fds = readdirSync(`/proc/${pid}/fd`)
      } catch {
        continue // that process has exited
      }
      const holds = fds.some((fd) => {
        try {
          return readlinkSync(`/proc/${pid}/fd/${fd}`) === socket
        } catch {
          return false // closed meanwhile
        }
      })
      if (socket && holds) return side
    }
  } catch {
    // no /proc
  }
  return 'unknown'
}

/** Starts the receiver on a free loopback port; `pids` are the services' processes, filled in as they start. */
async function startReceiver(pids: Map<Side, number>): Promise<Receiver> {
  const empty = (): Received => ({ requests: 0, bytes: 0, spans: 0 })
  const senders = new WeakMap<Socket, Side | 'unknown'>()
  const server = createServer((request, response) => {
    const sender = senders.get(request.socket) ?? 'unknown'
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const body = Buffer.concat(chunks)
      const got = receiver.bySender[sender]
      got.requests += 1
      got.bytes += body.length
      if (request.method !== 'POST' || request.url !== '/v1/traces') {
        response.writeHead(404).end()
        return
      }
      try {
        got.spans += countSpans(body, receiver.spanNames)
      } catch {
        receiver.unreadable += 1
      }
      // An empty ExportTraceServiceResponse.
      response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end()
    })
  })
  server.on('connection', (socket: Socket) => {
    senders.set(socket, senderOf(socket.remotePort ?? 0, (server.address() as AddressInfo).port, pids))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const receiver: Receiver = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bySender: { off: empty(), on: empty(), unknown: empty() },
    spanNames: new Map(),
    unreadable: 0,
    server,
  }
  return receiver
}

// ---------------------------------------------------------------------------------------------
// (c) GET /api/v1/ping

interface PingRow {
  requestsPerSecond: number
  latencyP50Ms: number
  latencyP99Ms: number
  /** Over the measured windows; null without /proc. */
  serverCpuUsPerRequest: number | null
  otherLoadCores: number | null
  /** Answers in the warm-ups and the measured windows, and requests sent (some in flight at a run's end). */
  answered: number
  sent: number
  non2xx: number
  errors: number
  perSliceRequestsPerSecond: number[]
}

/** A service's (c) row from its slices (the module comment says how they are summed). */
function pingRowOf(slices: Row[]): PingRow {
  const sum = (of: (row: Row) => number) => slices.reduce((total, row) => total + of(row), 0)
  const requests = sum((row) => row.requests)
  const seconds = sum((row) => (row.window.endUs - row.window.startUs) / 1e6)
  const cpuKnown = slices.every((row) => row.serverCpuUsPerRequest !== null)
  const loads = slices.map((row) => row.otherLoadCores).filter((load): load is number => load !== null)
  return {
    requestsPerSecond: requests / seconds,
    latencyP50Ms: median(slices.map((row) => row.latencyP50Ms)),
    latencyP99Ms: Math.max(...slices.map((row) => row.latencyP99Ms)),
    serverCpuUsPerRequest: cpuKnown && requests ? sum((row) => (row.serverCpuUsPerRequest ?? 0) * row.requests) / requests : null,
    otherLoadCores: loads.length ? loads.reduce((a, b) => a + b, 0) / loads.length : null,
    answered: sum((row) => row.requests + row.warmup.requests),
    sent: sum((row) => row.sent + row.warmup.sent),
    non2xx: sum((row) => row.non2xx + row.warmup.non2xx),
    errors: sum((row) => row.errors + row.warmup.errors),
    perSliceRequestsPerSecond: slices.map((row) => (row.requests * 1e6) / (row.window.endUs - row.window.startUs)),
  }
}

/**
 * Both services' (c) rows, and each slice's measured window (`<side>:c<slice>`, for
 * bench/profile-summary.ts). Each slice of each side runs on a process `start` makes for it,
 * stopped after its slice (the module comment says why).
 */
async function measurePing(bench: Bench, start: (side: Side, part: string) => Promise<Child>) {
  const slices: Record<Side, Row[]> = { off: [], on: [] }
  const windows: Window[] = []
  for (let index = 0; index < settings.slices; index++) {
    for (const side of orderOf(index)) {
      const service = await start(side, `c${index + 1}`)
      process.stdout.write(`slice ${index + 1}/${settings.slices}, tracing ${side}: `)
      const target = serviceBaselines(service).ping
      const row = await measure(bench, { ...target, request: `${target.request}, tracing ${side}` })
      await stopChild(service)
      slices[side].push(row)
      windows.push({ key: `${side}:c${index + 1}`, window: row.window })
    }
  }
  return { off: pingRowOf(slices.off), on: pingRowOf(slices.on), windows }
}

// ---------------------------------------------------------------------------------------------
// Runs

interface RunSide {
  run: { n: number; p50: number; p90: number }
  added: { p50: number; p90: number }
  /** The added p50 of each slice (against that slice's direct calls). */
  perSliceAddedP50: number[]
  /** Service CPU per run from the first slice to the last (the other side's turns included), null without /proc. */
  serviceCpuMsPerRun: number | null
}

async function measureRuns(apis: Record<Side, Api>, upstreamUrl: string, pids: Map<Side, number>, windows: Window[]) {
  const warm = settings.runWarmup
  process.stdout.write(`runs: warm-up ${warm} of each ... `)
  await sequential(warm, () => upstreamOnce(upstreamUrl))
  for (const side of SIDES) await sequential(warm, () => runOnce(apis[side]))
  const cpu0 = new Map(SIDES.map((side) => [side, cpuSeconds(pids.get(side)!)]))
  const perSlice = Math.max(1, Math.ceil(settings.runs / settings.slices))
  const direct: number[][] = []
  const runs: Record<Side, number[][]> = { off: [], on: [] }
  for (let index = 0; index < settings.slices; index++) {
    process.stdout.write(`slice ${index + 1} ... `)
    direct.push((await sequential(perSlice, () => upstreamOnce(upstreamUrl))).map((call) => call.full))
    for (const side of orderOf(index)) {
      const startUs = monotonicUs()
      runs[side].push((await sequential(perSlice, () => runOnce(apis[side]))).map((run) => run.elapsed))
      windows.push({ key: `${side}:run${index + 1}`, window: { startUs, endUs: monotonicUs() } })
    }
  }
  const upstream = summariseP90(direct.flat())
  const sideOf = (side: Side): RunSide => {
    const run = summariseP90(runs[side].flat())
    const cpu1 = cpuSeconds(pids.get(side)!)
    const cpu = cpu0.get(side)
    return {
      run,
      added: { p50: run.p50 - upstream.p50, p90: run.p90 - upstream.p90 },
      perSliceAddedP50: runs[side].map((slice, index) => summariseP90(slice).p50 - summariseP90(direct[index]).p50),
      serviceCpuMsPerRun: cpu === undefined || cpu === null || cpu1 === null ? null : ((cpu1 - cpu) * 1000) / (perSlice * settings.slices),
    }
  }
  const result = { upstream, perSlice, off: sideOf('off'), on: sideOf('on') }
  console.log(`added p50: off ${fmt(result.off.added.p50, 2)} ms, on ${fmt(result.on.added.p50, 2)} ms`)
  return result
}

// ---------------------------------------------------------------------------------------------

const pctOf = (ratio: number) => `${fmt(ratio * 100, 1)}%`
const ratioOf = (on: number | null, off: number | null) => (on === null || off === null || off === 0 ? null : on / off)
const met = (pass: boolean) => (pass ? '**met**' : '**not met**')
const orNa = (value: number | null, digits = 0) => (value === null ? 'n/a' : fmt(value, digits))

await runBench('aw_bench_tracing', async (bench) => {
  const loadBefore = os.loadavg()
  const started = now()
  for (const name of Object.keys(process.env)) if (name.startsWith('OTEL_')) delete process.env[name]
  const pids = new Map<Side, number>()
  const receiver = await startReceiver(pids)
  bench.closers.push(() => new Promise((resolve) => receiver.server.close(resolve)))
  const upstream = await startUpstreamChild()
  bench.children.push(upstream)
  const model = { OPENAI_API_KEY: 'sk-bench-tracing', OPENAI_BASE_URL: upstream.url }
  if (profileDir) mkdirSync(profileDir, { recursive: true })
  const envOf: Record<Side, Record<string, string>> = {
    off: model,
    on: {
      ...model,
      DATABASE_URL: await extraDatabase(bench, 'traced'),
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      ...(settings.samplerRatio === null
        ? {}
        : { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: String(settings.samplerRatio) }),
    },
  }
  /** A process of `side`'s service, known to the receiver by its pid (one of each side at a time). */
  const start = async (side: Side, part: string): Promise<Child> => {
    const service = await startService(bench, nodeArgsOf(side, part), envOf[side])
    pids.set(side, service.process.pid!)
    return service
  }
  console.log(`upstream ${upstream.url}; OTLP receiver ${receiver.url}`)

  const { windows, ...ping } = await measurePing(bench, start)
  const services: Record<Side, Child> = { off: await start('off', 'runs'), on: await start('on', 'runs') }
  console.log(`runs: tracing off ${services.off.url}, on ${services.on.url}`)
  const apis = { off: await runnerApi(services.off.url), on: await runnerApi(services.on.url) }
  const runs = await measureRuns(apis, upstream.url, pids, windows)
  const settleMs = settings.scheduleDelayMs + 1_000
  process.stdout.write(`waiting ${settleMs / 1000} s for the last batch ... `)
  await new Promise((resolve) => setTimeout(resolve, settleMs))
  console.log('done')

  const throughputRatio = ping.on.requestsPerSecond / ping.off.requestsPerSecond
  const addedRatio = runs.on.added.p50 / runs.off.added.p50
  const throughputPass = throughputRatio >= THROUGHPUT_TARGET
  const addedPass = addedRatio <= ADDED_TARGET
  const got = receiver.bySender
  const tracedForSure = got.on.requests > 0 && got.on.spans > 0 && got.off.requests === 0
  const spanNames = [...receiver.spanNames.entries()].sort((a, b) => b[1] - a[1])
  const pingSpans = receiver.spanNames.get('GET /api/v1/ping') ?? 0

  const date = new Date().toISOString()
  const machine = machineOf(bench.postgres)
  const load = (values: number[]) => values.map((value) => value.toFixed(2)).join(', ')
  const row = (what: string, off: string, on: string, ratio: string, target = '') => `| ${what} | ${off} | ${on} | ${ratio} | ${target} |`
  const ms2 = (value: number) => fmt(value, 2)
  const md = [
    `Tracing benchmark of ${date}: ${machine.line}; PostgreSQL ${bench.postgres}; load average ${load(loadBefore)} before, ` +
      `${load(machine.json.loadAverage)} after; ${fmt((now() - started) / 1000)} s in all.`,
    `Tracing on: OTEL_EXPORTER_OTLP_ENDPOINT=${receiver.url} (OTLP/HTTP protobuf, default batch: every ${settings.scheduleDelayMs} ms or 512 spans, ` +
      `${settings.samplerRatio === null ? 'every trace sampled' : `OTEL_TRACES_SAMPLER=parentbased_traceidratio with OTEL_TRACES_SAMPLER_ARG=${settings.samplerRatio}`}), ` +
      `a receiver in the bench process. ${settings.slices} slices, the order swapped each slice; (c): a fresh process of each service per slice, autocannon ${settings.connections} connections, ` +
      `${settings.warmupSeconds} s warm-up then ${settings.durationSeconds} s per slice; runs: one process of each service, ${runs.perSlice} sequential per slice and service ` +
      `(${runs.perSlice * settings.slices} each) after ${settings.runWarmup} of warm-up, against as many direct upstream calls.`,
    '',
    '| measurement | tracing off | tracing on | on / off | target |',
    '| --- | ---: | ---: | ---: | --- |',
    row(
      '(c) `GET /api/v1/ping` req/s',
      fmt(ping.off.requestsPerSecond),
      fmt(ping.on.requestsPerSecond),
      pctOf(throughputRatio),
      `≥ ${pctOf(THROUGHPUT_TARGET)}: ${met(throughputPass)}`,
    ),
    row('(c) p50 / p99 ms', `${ping.off.latencyP50Ms} / ${ping.off.latencyP99Ms}`, `${ping.on.latencyP50Ms} / ${ping.on.latencyP99Ms}`, ''),
    row(
      '(c) service CPU µs/request',
      orNa(ping.off.serverCpuUsPerRequest),
      orNa(ping.on.serverCpuUsPerRequest),
      (() => {
        const ratio = ratioOf(ping.on.serverCpuUsPerRequest, ping.off.serverCpuUsPerRequest)
        return ratio === null ? 'n/a' : pctOf(ratio)
      })(),
    ),
    row('(c) other load during the slices, cores (mean)', orNa(ping.off.otherLoadCores, 2), orNa(ping.on.otherLoadCores, 2), ''),
    row(
      '(c) req/s of each slice',
      ping.off.perSliceRequestsPerSecond.map((value) => fmt(value)).join(', '),
      ping.on.perSliceRequestsPerSecond.map((value) => fmt(value)).join(', '),
      '',
    ),
    row(
      'upstream called directly, full answer p50 / p90 ms (both)',
      `${ms2(runs.upstream.p50)} / ${ms2(runs.upstream.p90)}`,
      `${ms2(runs.upstream.p50)} / ${ms2(runs.upstream.p90)}`,
      '',
    ),
    row(
      '`POST /api/v1/agents/{x}/run` p50 / p90 ms',
      `${ms2(runs.off.run.p50)} / ${ms2(runs.off.run.p90)}`,
      `${ms2(runs.on.run.p50)} / ${ms2(runs.on.run.p90)}`,
      pctOf(runs.on.run.p50 / runs.off.run.p50),
    ),
    row(
      'run: added p50 ms',
      ms2(runs.off.added.p50),
      ms2(runs.on.added.p50),
      pctOf(addedRatio),
      `≤ ${pctOf(ADDED_TARGET)}: ${met(addedPass)}`,
    ),
    row('run: added p90 ms', ms2(runs.off.added.p90), ms2(runs.on.added.p90), pctOf(runs.on.added.p90 / runs.off.added.p90)),
    row(
      'run: added p50 of each slice, ms',
      runs.off.perSliceAddedP50.map(ms2).join(', '),
      runs.on.perSliceAddedP50.map(ms2).join(', '),
      '',
    ),
    row(
      "run: service CPU ms/run (both services' slices)",
      orNa(runs.off.serviceCpuMsPerRun, 2),
      orNa(runs.on.serviceCpuMsPerRun, 2),
      (() => {
        const ratio = ratioOf(runs.on.serviceCpuMsPerRun, runs.off.serviceCpuMsPerRun)
        return ratio === null ? 'n/a' : pctOf(ratio)
      })(),
    ),
    '',
    `OTLP receiver: ${fmt(got.on.requests)} export requests and ${fmt(got.on.bytes / 1024, 1)} KiB from the traced service, ${fmt(got.on.spans)} spans; ` +
      `${fmt(got.off.requests)} requests from the untraced one; ${fmt(got.unknown.requests)} from neither${receiver.unreadable ? `; ${receiver.unreadable} bodies unreadable` : ''}. ` +
      `Spans by name: ${spanNames.map(([name, count]) => `\`${name}\` ${fmt(count)}`).join(', ')}. ` +
      `\`GET /api/v1/ping\` spans ${fmt(pingSpans)} for ${fmt(ping.on.answered)} answers to the traced service (${fmt(ping.on.sent)} sent)` +
      `${ping.off.non2xx + ping.on.non2xx + ping.off.errors + ping.on.errors ? `; ⚠ (c) non-2xx ${ping.off.non2xx + ping.on.non2xx}, errors ${ping.off.errors + ping.on.errors}` : ''}.` +
      (tracedForSure ? '' : ' ⚠ tracing was not shown on (and only on) the traced service.'),
    '',
    `Targets: (c) throughput with tracing on ≥ ${pctOf(THROUGHPUT_TARGET)} of off: ${pctOf(throughputRatio)} ${met(throughputPass)}; ` +
      `a run's added latency at p50 with tracing on ≤ ${pctOf(ADDED_TARGET)} of off: ${pctOf(addedRatio)} (${ms2(runs.on.added.p50)} against ${ms2(runs.off.added.p50)} ms) ${met(addedPass)}.`,
    '',
  ].join('\n')
  console.log(`\n${md}`)
  writeResults(
    ['tracing-latest'],
    {
      date,
      machine: machine.json,
      loadAverageBefore: loadBefore,
      settings,
      ping,
      runs,
      receiver: { url: receiver.url, bySender: got, spanNames: Object.fromEntries(spanNames), unreadable: receiver.unreadable },
      profileDir: profileDir ?? null,
      rows: windows,
      targets: {
        throughput: { threshold: THROUGHPUT_TARGET, ratio: throughputRatio, pass: throughputPass },
        addedP50: { threshold: ADDED_TARGET, ratio: addedRatio, pass: addedPass },
        tracedForSure,
      },
    },
    md,
  )
})
