/**
 * Distributed tracing through the OpenTelemetry SDK (docs/operations.md, "Traces"): configured
 * only by the standard `OTEL_*` variables (read into `Config.tracing` by ./config.ts), off unless
 * an OTLP endpoint is set. When on, this process has a tracer provider that batches spans to the
 * OTLP/HTTP exporter (`http/protobuf` or `http/json`), W3C `traceparent` propagation, an
 * AsyncLocalStorage context manager, and the undici instrumentation, so that every outbound
 * `fetch` (model, tool, MCP and webhook requests) is a client span and carries `traceparent`.
 *
 * It knows no capability: capabilities name their own spans through {@link inSpan} and
 * {@link startSpan}; jobs carry their sender's context through {@link traceCarrier} and
 * {@link contextOfCarrier}. When tracing is off every helper here is a cheap no-op: no provider,
 * no context manager, no instrumentation.
 */
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api'
import type { ExportResult } from '@opentelemetry/core'
import type { ReadableSpan, Sampler, SpanExporter, TracerProvider } from '@opentelemetry/sdk-trace'
import { ATTR_ERROR_TYPE, ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions'
import type { TracingConfig } from './config.ts'
import type { Logger } from './logger.ts'
import { counter } from './prometheus.ts'

/** `otel_spans_dropped_total` (docs/operations.md, "Metrics"): spans the exporter could not deliver. */
const droppedSpansMetric = counter({
  name: 'otel_spans_dropped_total',
  help: 'Spans dropped because the OTLP endpoint did not take them (unreachable, failing or too slow)',
})

/** `service.name` when neither `OTEL_SERVICE_NAME` nor `OTEL_RESOURCE_ATTRIBUTES` names one. */
export const DEFAULT_SERVICE_NAME = 'agent-workspace-service'

/** The instrumentation scope of every span the service makes. */
const SCOPE = 'agent-workspace-service'

/** Whether this process exports spans; set once by {@link startTracing}. */
let enabled = false
let captureContent = false
let provider: TracerProvider | null = null
/** Spans handed to the exporter that it could not deliver (the endpoint down or too slow). */
let droppedSpans = 0

/** The one span handed out while tracing is off: it records nothing, so it is shared (the all-zero, invalid span context). */
const NOOP_SPAN: Span = trace.wrapSpanContext({ traceId: '00000000000000000000000000000000', spanId: '0000000000000000', traceFlags: TraceFlags.NONE })

/** The tracer capabilities start their spans with (a no-op tracer while tracing is off). */
export const tracer: Tracer = trace.getTracer(SCOPE)

/** True when this process exports spans. */
export const tracingEnabled = (): boolean => enabled

/** True when prompt, answer and tool texts may be recorded on spans (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`). */
export const captureMessageContent = (): boolean => enabled && captureContent

/** Spans this process could not export since it started (counted, then dropped: nothing waits for an endpoint). */
export const droppedSpanCount = (): number => droppedSpans

/**
 * Starts tracing for this process when `config` asks for it (once: later calls, such as a second
 * runtime in one test process, keep the first provider). Nothing is started for null.
 * @param version the service's version, as `service.version`.
 */
export async function startTracing(config: TracingConfig | null, log: Logger, version: string): Promise<void> {
  if (!config || provider) return
  // Loaded only here: a process without tracing never loads the SDK.
  const [{ AsyncLocalStorageContextManager }, { W3CTraceContextPropagator }, json, protobuf, { UndiciInstrumentation }, resources, sdk] =
    await Promise.all([
      import('@opentelemetry/context-async-hooks'),
      import('@opentelemetry/core'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/exporter-trace-otlp-proto'),
      import('@opentelemetry/instrumentation-undici'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/sdk-trace'),
    ])
  if (provider) return
  const exporter = new CountingExporter(
    config.protocol === 'http/json' ? new json.OTLPTraceExporter({ url: config.url }) : new protobuf.OTLPTraceExporter({ url: config.url }),
    (count, error) => {
      const first = droppedSpans === 0
      droppedSpans += count
      droppedSpansMetric.inc(count)
      // One line when exporting starts failing, not one per batch: the endpoint is an operator's to fix.
      if (first) log.warn({ err: error, dropped: count }, 'trace export failed: spans are dropped until the OTLP endpoint answers')
    },
  )
  const resource = resources
    .resourceFromAttributes({ [ATTR_SERVICE_NAME]: DEFAULT_SERVICE_NAME, [ATTR_SERVICE_VERSION]: version })
    .merge(resources.detectResources({ detectors: [resources.envDetector] }))
  provider = new sdk.TracerProvider({
    resource,
    sampler: samplerOf(config, sdk),
    // A full queue drops spans rather than holding requests.
    spanProcessors: [
      new sdk.BatchSpanProcessor({
        exporter,
        scheduledDelayMillis: config.batch.scheduleDelayMs,
        maxQueueSize: config.batch.maxQueueSize,
        maxExportBatchSize: Math.min(512, config.batch.maxQueueSize),
        exportTimeoutMillis: config.batch.exportTimeoutMs,
      }),
    ],
  })
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  propagation.setGlobalPropagator(new W3CTraceContextPropagator())
  trace.setGlobalTracerProvider(provider)
  // Outbound fetch: a client span per request and its `traceparent` header. The exporter's own
  // requests go through node:http, not fetch, so they are never traced themselves.
  new UndiciInstrumentation()
  enabled = true
  captureContent = config.captureMessageContent
}

/** Sends the spans still batched (at shutdown); resolves even when the endpoint fails. */
export async function flushTracing(): Promise<void> {
  await provider?.forceFlush().catch(() => undefined)
}

/** The sampler `OTEL_TRACES_SAMPLER` names. */
function samplerOf(config: TracingConfig, sdk: typeof import('@opentelemetry/sdk-trace')): Sampler {
  const { AlwaysOffSampler, AlwaysOnSampler, ParentBasedSampler, TraceIdRatioBasedSampler } = sdk
  const ratio = new TraceIdRatioBasedSampler(config.samplerRatio)
  switch (config.sampler) {
    case 'always_on':
      return new AlwaysOnSampler()
    case 'always_off':
      return new AlwaysOffSampler()
    case 'traceidratio':
      return ratio
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() })
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio })
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() })
  }
}

/** An exporter that counts the spans of every batch its inner exporter could not deliver. */
class CountingExporter implements SpanExporter {
  constructor(
    private readonly inner: SpanExporter,
    private readonly onDropped: (count: number, error: Error | undefined) => void,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      // ExportResultCode.SUCCESS is 0 (@opentelemetry/core, loaded only with tracing on).
      if (result.code !== 0) this.onDropped(spans.length, result.error)
      done(result)
    })
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown()
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve()
  }
}

/**
 * Runs `work` inside a new span `name` (a child of the active context, or of `o.parent`), which
 * ends when `work` settles: a thrown error is recorded on it (`error.type`, status ERROR) and
 * rethrown. While tracing is off `work` runs as it is, given a no-op span.
 */
export async function inSpan<T>(
  name: string,
  o: { kind?: SpanKind; attributes?: Attributes; parent?: Context },
  work: (span: Span) => Promise<T>,
): Promise<T> {
  if (!enabled) return work(NOOP_SPAN)
  const parent = o.parent ?? context.active()
  const span = tracer.startSpan(name, { kind: o.kind ?? SpanKind.INTERNAL, attributes: o.attributes }, parent)
  try {
    return await context.with(trace.setSpan(parent, span), () => work(span))
  } catch (error) {
    failSpan(span, error)
    throw error
  } finally {
    span.end()
  }
}

/**
 * Starts span `name` as a child of the active context and answers it with the context to run its
 * work in, for work whose end another callback sees (a stream, a detached promise): the caller
 * ends the span. While tracing is off: a no-op span and the active context.
 */
export function startSpan(name: string, o: { kind?: SpanKind; attributes?: Attributes } = {}): { span: Span; context: Context } {
  const active = context.active()
  if (!enabled) return { span: NOOP_SPAN, context: active }
  const span = tracer.startSpan(name, { kind: o.kind ?? SpanKind.INTERNAL, attributes: o.attributes }, active)
  return { span, context: trace.setSpan(active, span) }
}

/** The active context (the root context while tracing is off). */
export const activeContext = (): Context => context.active()

/** Runs `work` in `ctx` (a context from {@link startSpan}); as it is while tracing is off. */
export function runInContext<T>(ctx: Context, work: () => T): T {
  return enabled ? context.with(ctx, work) : work()
}

/** Marks `span` failed by `error`: its class as `error.type`, the exception recorded, status ERROR. */
export function failSpan(span: Span, error: unknown): void {
  if (!span.isRecording()) return
  span.setAttribute(ATTR_ERROR_TYPE, error instanceof Error ? error.name : 'Error')
  if (error instanceof Error) span.recordException(error)
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) })
}

/** Sets status ERROR with `errorType` as `error.type` (an outcome that is a failure without an exception). */
export function markSpanFailed(span: Span, errorType: string, message?: string): void {
  if (!span.isRecording()) return
  span.setAttribute(ATTR_ERROR_TYPE, errorType)
  span.setStatus({ code: SpanStatusCode.ERROR, ...(message ? { message } : {}) })
}

/**
 * The trace id of the active span when it is sampled (its spans are exported), else null: what
 * runs and workflow executions store as `trace_id`. Null while tracing is off.
 */
export function activeTraceId(): string | null {
  if (!enabled) return null
  const spanContext = trace.getSpanContext(context.active())
  if (!spanContext || !trace.isSpanContextValid(spanContext)) return null
  return (spanContext.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED ? spanContext.traceId : null
}

/**
 * The active context as W3C trace-context headers (`traceparent`, and `tracestate` when set), to
 * carry it where no HTTP request does (a queued job). Undefined while tracing is off or when no
 * span is active.
 */
export function traceCarrier(): Record<string, string> | undefined {
  if (!enabled) return undefined
  const carrier: Record<string, string> = {}
  propagation.inject(context.active(), carrier)
  return carrier.traceparent ? carrier : undefined
}

/**
 * The active context as outbound request headers (`traceparent`, `tracestate`), for requests that
 * do not go through `fetch` (whose instrumentation adds them itself): tool calls and webhook
 * deliveries over node:http. Empty while tracing is off or when no span is active.
 */
export function traceHeaders(): Record<string, string> {
  return traceCarrier() ?? {}
}

/**
 * The context `carrier` (headers, or what {@link traceCarrier} made) continues: a malformed or
 * absent `traceparent` is ignored, giving a root context.
 */
export function contextOfCarrier(carrier: Record<string, string | string[] | undefined> | undefined): Context {
  if (!enabled || !carrier) return ROOT_CONTEXT
  return propagation.extract(ROOT_CONTEXT, carrier)
}


export { SpanKind, type Span, type Context, type Attributes }
