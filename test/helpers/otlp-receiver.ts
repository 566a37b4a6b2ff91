/**
 * A real OTLP/HTTP trace receiver for tests: `POST /v1/traces` decoded as OTLP protobuf (with
 * protobufjs and the messages of opentelemetry-proto's `trace/v1` and `collector/trace/v1`, the
 * subset below, field numbers as published) or OTLP JSON, and kept as flat spans. It can answer
 * slowly or fail, as an unreachable or overloaded collector would.
 */
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import protobuf from 'protobufjs'

/** The OTLP trace request messages (opentelemetry-proto v1), the fields tests read. */
const PROTO = `
syntax = "proto3";
package otlp;
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; string schema_url = 3; }
message Resource { repeated KeyValue attributes = 1; uint32 dropped_attributes_count = 2; }
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; string schema_url = 3; }
message InstrumentationScope { string name = 1; string version = 2; repeated KeyValue attributes = 3; uint32 dropped_attributes_count = 4; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4;
  string name = 5; int32 kind = 6; fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9; uint32 dropped_attributes_count = 10;
  repeated Event events = 11; uint32 dropped_events_count = 12;
  repeated Link links = 13; uint32 dropped_links_count = 14; Status status = 15; fixed32 flags = 16;
}
message Event { fixed64 time_unix_nano = 1; string name = 2; repeated KeyValue attributes = 3; uint32 dropped_attributes_count = 4; }
message Link { bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; repeated KeyValue attributes = 4; uint32 dropped_attributes_count = 5; fixed32 flags = 6; }
message Status { string message = 2; int32 code = 3; }
message KeyValue { string key = 1; AnyValue value = 2; }
message AnyValue {
  oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; ArrayValue array_value = 5; KeyValueList kvlist_value = 6; bytes bytes_value = 7; }
}
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
`
const Request = protobuf.parse(PROTO, { keepCase: false }).root.lookupType('otlp.ExportTraceServiceRequest')

/** One received span, flattened. Kinds: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. Status codes: 0 unset, 1 ok, 2 error. */
export interface ReceivedSpan {
  traceId: string
  spanId: string
  /** Empty for a root span. */
  parentSpanId: string
  name: string
  kind: number
  attributes: Record<string, unknown>
  status: { code: number; message: string }
  events: { name: string; attributes: Record<string, unknown> }[]
  resource: Record<string, unknown>
  scope: string
  /** How the batch came: `protobuf` or `json`. */
  encoding: 'protobuf' | 'json'
}

export interface OtlpReceiver {
  /** Base URL (`OTEL_EXPORTER_OTLP_ENDPOINT`), e.g. `http://127.0.0.1:PORT`. */
  url: string
  spans: ReceivedSpan[]
  /** Export requests received, answered or not. */
  requests: number
  /** `ok` (default), `fail` (503 to every export) or `slow` (answers after `slowMs`). */
  mode: 'ok' | 'fail' | 'slow'
  slowMs: number
  /** Resolves once spans matching `match` arrived (polls every 20 ms; rejects after `timeoutMs`). */
  waitFor(match: (span: ReceivedSpan) => boolean, timeoutMs?: number): Promise<ReceivedSpan>
  close(): Promise<void>
}

type Any = Record<string, unknown>

/** An OTLP AnyValue (protobufjs object or JSON) as a plain value. */
function valueOf(value: Any | undefined): unknown {
  if (!value) return undefined
  if ('stringValue' in value) return value.stringValue
  if ('boolValue' in value) return value.boolValue
  if ('intValue' in value) return Number(value.intValue)
  if ('doubleValue' in value) return Number(value.doubleValue)
  if ('arrayValue' in value) return (((value.arrayValue as Any).values as Any[] | undefined) ?? []).map(valueOf)
  if ('kvlistValue' in value) return attributesOf((value.kvlistValue as Any).values as Any[])
  return undefined
}

function attributesOf(list: Any[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((kv) => [String(kv.key), valueOf(kv.value as Any)]))
}

/** A trace or span id as hex: protobuf gives bytes (base64 in toObject), OTLP JSON gives hex. */
function hexOf(id: unknown): string {
  if (typeof id !== 'string' || id === '') return ''
  return /^[0-9a-f]+$/i.test(id) && (id.length === 32 || id.length === 16) ? id.toLowerCase() : Buffer.from(id, 'base64').toString('hex')
}

function flatten(request: Any, encoding: ReceivedSpan['encoding']): ReceivedSpan[] {
  const out: ReceivedSpan[] = []
  for (const rs of (request.resourceSpans as Any[] | undefined) ?? []) {
    const resource = attributesOf(((rs.resource as Any | undefined)?.attributes as Any[] | undefined) ?? [])
    for (const ss of (rs.scopeSpans as Any[] | undefined) ?? []) {
      const scope = String((ss.scope as Any | undefined)?.name ?? '')
      for (const span of (ss.spans as Any[] | undefined) ?? []) {
        const status = (span.status as Any | undefined) ?? {}
        out.push({
          traceId: hexOf(span.traceId),
          spanId: hexOf(span.spanId),
          parentSpanId: hexOf(span.parentSpanId),
          name: String(span.name),
          kind: Number(span.kind ?? 0),
          attributes: attributesOf(span.attributes as Any[]),
          status: { code: Number(status.code ?? 0), message: String(status.message ?? '') },
          events: ((span.events as Any[] | undefined) ?? []).map((event) => ({
            name: String(event.name),
            attributes: attributesOf(event.attributes as Any[]),
          })),
          resource,
          scope,
          encoding,
        })
      }
    }
  }
  return out
}

async function bodyOf(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

/** Starts the receiver on a free loopback port. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const receiver: OtlpReceiver = {
    url: '',
    spans: [],
    requests: 0,
    mode: 'ok',
    slowMs: 5_000,
    waitFor: async (match, timeoutMs = 10_000) => {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const found = receiver.spans.find(match)
        if (found) return found
        if (Date.now() > deadline) throw new Error(`no matching span within ${timeoutMs} ms; received: ${receiver.spans.map((s) => s.name).join(', ')}`)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
  const server = createServer((request, response) => {
    void (async () => {
      const body = await bodyOf(request)
      if (request.method !== 'POST' || request.url !== '/v1/traces') {
        response.writeHead(404).end()
        return
      }
      receiver.requests += 1
      if (receiver.mode === 'fail') {
        response.writeHead(503).end()
        return
      }
      if (receiver.mode === 'slow') await new Promise((resolve) => setTimeout(resolve, receiver.slowMs))
      const json = String(request.headers['content-type'] ?? '').includes('json')
      const decoded = json
        ? (JSON.parse(body.toString('utf8')) as Any)
        : (Request.toObject(Request.decode(body), { longs: String, bytes: String, defaults: false, oneofs: false }) as Any)
      receiver.spans.push(...flatten(decoded, json ? 'json' : 'protobuf'))
      // An empty ExportTraceServiceResponse: no partial success to report.
      if (json) response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
      else response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end()
    })().catch(() => response.writeHead(400).end())
  })
  server.keepAliveTimeout = 1_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return receiver
}
