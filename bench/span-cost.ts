/**
 * `npm run bench:span-cost`: what one HTTP server span costs the OpenTelemetry SDK alone, in this
 * process, with nothing else running: the floor under the tracing benchmark's (c) row
 * (bench/tracing.ts; docs/benchmarks.md, "Tracing"). The service's own span code
 * (src/http/request-tracing.ts) adds its hooks and reads the request's fields on top of it.
 *
 * Three parts, each timed by this process's CPU (`process.cpuUsage`, user + system) over
 * BENCH_SPANS spans after a warm-up of a tenth as many:
 *
 *   start + end  a tracer provider as the service builds it (src/platform/tracing.ts: every trace
 *                sampled, the batch span processor with its default queue and batch of 512),
 *                its exporter taking each batch and keeping nothing; each span started with the
 *                server span's six attributes, then given `http.route`, its name and the status
 *                code, then ended;
 *   context      the span's context entered once around a no-op (`context.with`, the
 *                AsyncLocalStorage context manager; run it under --experimental-async-context-frame,
 *                as the service is, through `npm run`);
 *   serialize    the ended spans encoded as OTLP protobuf export requests of 512 spans (the encoder
 *                the OTLP/HTTP protobuf exporter calls before sending), bytes counted.
 *
 * Prints one Markdown table; exit code 0. BENCH_SPANS (default 200,000).
 */
import { context, SpanKind, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import type { ExportResult } from '@opentelemetry/core'
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { BatchSpanProcessor, TracerProvider, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace'
import os from 'node:os'
import { envNumber, fmt } from './harness.ts'

const spans = Math.floor(envNumber('BENCH_SPANS', 200_000))
const BATCH = 512

/** Keeps the first BATCH * 8 spans it is given (for the serialize part), drops the rest. */
class KeepingExporter implements SpanExporter {
  kept: ReadableSpan[] = []
  export(batch: ReadableSpan[], done: (result: ExportResult) => void): void {
    if (this.kept.length < BATCH * 8) this.kept.push(...batch)
    done({ code: 0 })
  }
  async shutdown(): Promise<void> {}
}

/** CPU µs this process spent in `work`. */
function cpuUsOf(work: () => void): number {
  const before = process.cpuUsage()
  work()
  const used = process.cpuUsage(before)
  return used.user + used.system
}

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
const exporter = new KeepingExporter()
const provider = new TracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'span-cost' }),
  spanProcessors: [new BatchSpanProcessor({ exporter, maxExportBatchSize: BATCH })],
})
const tracer = provider.getTracer('span-cost')

/** One server span as src/http/request-tracing.ts makes it for `GET /api/v1/ping`. */
function serverSpan(): void {
  const span = tracer.startSpan('GET', {
    kind: SpanKind.SERVER,
    attributes: {
      'http.request.method': 'GET',
      'url.path': '/api/v1/ping',
      'url.scheme': 'http',
      'server.address': '127.0.0.1',
      'client.address': '127.0.0.1',
      'user_agent.original': 'autocannon',
    },
  })
  span.setAttribute('http.route', '/api/v1/ping')
  span.updateName('GET /api/v1/ping')
  span.setAttribute('http.response.status_code', 200)
  span.end()
}

const parent = trace.setSpan(context.active(), tracer.startSpan('parent'))
const noop = () => undefined
const times = (count: number, work: () => void) => () => {
  for (let i = 0; i < count; i++) work()
}

// Warm-ups: the JIT, and batches that filled during them exported.
cpuUsOf(times(spans / 10, serverSpan))
cpuUsOf(times(spans / 10, () => context.with(parent, noop)))
await provider.forceFlush()

const startEndUs = cpuUsOf(times(spans, serverSpan))
const contextUs = cpuUsOf(times(spans, () => context.with(parent, noop)))
await provider.forceFlush()
const batches: ReadableSpan[][] = []
for (let at = 0; at + BATCH <= exporter.kept.length; at += BATCH) batches.push(exporter.kept.slice(at, at + BATCH))
let bytes = 0
const rounds = Math.max(1, Math.ceil(spans / (batches.length * BATCH)))
cpuUsOf(() => batches.forEach((batch) => ProtobufTraceSerializer.serializeRequest(batch)))
const serializeUs = cpuUsOf(() => {
  for (let round = 0; round < rounds; round++) for (const batch of batches) bytes += ProtobufTraceSerializer.serializeRequest(batch)?.length ?? 0
})
const serialized = rounds * batches.length * BATCH
await provider.shutdown()

const perSpan = (us: number, count: number) => fmt(us / count, 2)
const total = startEndUs / spans + contextUs / spans + serializeUs / serialized
console.log(
  [
    `Span cost of ${new Date().toISOString()}: ${os.cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}, ` +
      `execArgv ${process.execArgv.join(' ') || '(none)'}; ${fmt(spans)} spans, load average ${os.loadavg().map((v) => v.toFixed(2)).join(', ')}.`,
    '',
    '| part | CPU µs per span |',
    '| --- | ---: |',
    `| start (6 attributes) + route, name, status + end, batched | ${perSpan(startEndUs, spans)} |`,
    `| context entered once (\`context.with\`) | ${perSpan(contextUs, spans)} |`,
    `| OTLP protobuf encoding, batches of ${BATCH} (${fmt(bytes / serialized)} bytes a span) | ${perSpan(serializeUs, serialized)} |`,
    `| sum | ${fmt(total, 2)} |`,
  ].join('\n'),
)
