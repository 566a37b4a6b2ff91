/**
 * A server span per HTTP request (docs/operations.md, "Traces"), with the stable HTTP semantic
 * conventions: named `{method} {http.route}` once the route is known, `http.route` the template of
 * the operation (./route-template.ts, never the raw path), `http.response.status_code`, status
 * ERROR for a 5xx; a tRPC request adds `rpc.system` `trpc` and `rpc.method`, its procedures. An incoming `traceparent` is continued (an unsampled one exports nothing, a
 * malformed one is ignored and the request starts a trace of its own).
 *
 * The request's context is entered at `onRequest`, and again at `preHandler` when it was lost
 * there: a body is parsed in the socket's callbacks, outside it (a request without a body keeps
 * it, and pays for one entry only). Handlers (and the runs and executions they start, detached or
 * not) then run inside the request's span.
 * Added only when tracing is on; while off, requests pay nothing.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import {
  ATTR_CLIENT_ADDRESS,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVER_ADDRESS,
  ATTR_URL_PATH,
  ATTR_URL_SCHEME,
  ATTR_USER_AGENT_ORIGINAL,
} from '@opentelemetry/semantic-conventions'
import {
  activeContext,
  contextOfCarrier,
  markSpanFailed,
  runInContext,
  SpanKind,
  tracer,
  tracingEnabled,
  type Attributes,
  type Context,
  type Span,
} from '../platform/tracing.ts'
import { trace } from '@opentelemetry/api'
import { routeTemplateOf } from './route-template.ts'

/** Fastify's route of the tRPC endpoint (./trpc.plugin.ts: the adapter's `/:path` under `/trpc`). */
const TRPC_ROUTE = '/trpc/:path'

/** A request's server span and the context it runs in, kept on the request while it is served. */
interface RequestSpan {
  span: Span
  context: Context
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by {@link addRequestTracing}'s hooks while tracing is on; null otherwise and once ended. */
    requestSpan?: RequestSpan | null
  }
}

/** Adds the span hooks to `app` when tracing is on (module comment). */
export function addRequestTracing(app: FastifyInstance): void {
  if (!tracingEnabled()) return
  // Declared on every request up front, so requests keep one shape (a per-request WeakMap cost more).
  app.decorateRequest('requestSpan', null)
  app.addHook('onRequest', (request, _reply, done) => {
    const parent = contextOfCarrier(request.headers)
    const query = request.url.indexOf('?')
    const attributes: Attributes = {
      [ATTR_HTTP_REQUEST_METHOD]: request.method,
      [ATTR_URL_PATH]: query < 0 ? request.url : request.url.slice(0, query),
      [ATTR_URL_SCHEME]: request.protocol,
      [ATTR_SERVER_ADDRESS]: request.hostname,
      [ATTR_CLIENT_ADDRESS]: request.ip,
    }
    const userAgent = request.headers['user-agent']
    if (userAgent) attributes[ATTR_USER_AGENT_ORIGINAL] = userAgent
    const span = tracer.startSpan(request.method, { kind: SpanKind.SERVER, attributes }, parent)
    const context = trace.setSpan(parent, span)
    request.requestSpan = { span, context }
    runInContext(context, done)
  })
  app.addHook('preHandler', (request, _reply, done) => {
    const entry = request.requestSpan
    if (entry && activeContext() !== entry.context) runInContext(entry.context, done)
    else done()
  })
  app.addHook('onResponse', (request, reply, done) => {
    end(request, reply.statusCode)
    done()
  })
  // A client that leaves before the answer: no onResponse follows.
  app.addHook('onRequestAbort', (request, done) => {
    end(request, null)
    done()
  })
}

/** Ends the request's span with its route and status (`status` null: the client left). */
function end(request: FastifyRequest, status: number | null): void {
  const entry = request.requestSpan
  if (!entry) return
  request.requestSpan = null
  const { span } = entry
  const route = routeTemplateOf(request)
  if (route) {
    span.setAttribute(ATTR_HTTP_ROUTE, route)
    span.updateName(`${request.method} ${route}`)
  }
  // A tRPC request names its procedures (a batch: several, comma-separated), a closed set.
  const procedures = route === TRPC_ROUTE ? (request.params as { path?: string }).path : undefined
  if (procedures) span.setAttributes({ 'rpc.system': 'trpc', 'rpc.method': procedures })
  if (status === null) markSpanFailed(span, 'client_aborted')
  else {
    span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status)
    // Server spans fail on 5xx only: a 4xx is the client's (the HTTP conventions).
    if (status >= 500) markSpanFailed(span, String(status))
  }
  span.end()
}
