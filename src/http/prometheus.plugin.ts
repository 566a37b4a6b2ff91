/**
 * `GET /metrics` in the Prometheus text format, and the metrics of the HTTP host itself
 * (docs/operations.md, "Metrics"): `http_requests_total` and `http_request_duration_seconds` of
 * every request, by `method`, `route` and `status_code`.
 *
 * `route` is always a route template (./route-template.ts: `/api/v1/agents/{agent_uuid}`,
 * `/health`), never the raw path; a request that reached no operation is {@link UNMATCHED_ROUTE},
 * so paths a scanner makes up add no series.
 *
 * Who may read it: with METRICS_TOKEN set, a caller sending `Authorization: Bearer <token>`
 * (401 with `WWW-Authenticate: Bearer` otherwise), from any address; without it, a caller whose
 * connection comes from a loopback address (403 otherwise). The connection's own address
 * decides, never `X-Forwarded-For`: behind a proxy every caller would look local.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Config } from '../platform/config.ts'
import { collectProcessMetrics, counter, histogram, registry } from '../platform/prometheus.ts'
import { errorBody } from './errors.ts'
import { routeTemplateOf } from './route-template.ts'

/** The `route` label of a request that reached no route or no operation: one value, whatever the path. */
export const UNMATCHED_ROUTE = 'unmatched'

/** Socket addresses that are this machine's loopback interface (IPv4, IPv6, IPv4 mapped into IPv6). */
const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1'])

const LABELS = ['method', 'route', 'status_code'] as const

const requests = counter({
  name: 'http_requests_total',
  help: 'HTTP requests answered, by method, route template and status code',
  labelNames: LABELS,
})

const durations = histogram({
  name: 'http_request_duration_seconds',
  help: 'Seconds from the start of an HTTP request to its answer sent, by method, route template and status code',
  labelNames: LABELS,
  // prom-client's default buckets: 5 ms to 10 s.
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
})

/** The `route` label of `request`: its template, or {@link UNMATCHED_ROUTE}. */
export function routeLabelOf(request: FastifyRequest): string {
  return routeTemplateOf(request) ?? UNMATCHED_ROUTE
}

const sha256 = (value: string): Buffer => createHash('sha256').update(value).digest()

/** The credentials of an `Authorization: Bearer <credentials>` header (scheme in any case), else null. */
function bearerOf(header: string | undefined): string | null {
  const match = /^Bearer +(\S+) *$/i.exec(header ?? '')
  return match ? match[1] : null
}

/**
 * Why `request` may not read the metrics: 401 (no or another token, when one is configured) or
 * 403 (no token configured and a caller that is not local), or null when it may. Tokens are
 * compared as SHA-256 digests with `timingSafeEqual`: same length whatever was sent, and the
 * time taken tells nothing of how much of the token was right.
 */
function refusal(request: FastifyRequest, expected: Buffer | null): { status: 401 | 403; message: string } | null {
  if (expected) {
    const given = bearerOf(request.headers.authorization)
    if (given !== null && timingSafeEqual(sha256(given), expected)) return null
    return { status: 401, message: 'Send the metrics token as Authorization: Bearer <METRICS_TOKEN>' }
  }
  if (LOOPBACK.has(request.socket.remoteAddress ?? '')) return null
  return { status: 403, message: 'Without METRICS_TOKEN the metrics are served to loopback addresses only' }
}

/**
 * Adds `GET /metrics` and the `onResponse` hook that counts every request to the app. Called on
 * the root instance before the surfaces are registered (not through `register`), so that the
 * hook sees the requests of every scope and those that matched no route.
 */
export function prometheusPlugin(app: FastifyInstance, options: { config: Pick<Config, 'metrics'> }): void {
  const token = options.config.metrics.token
  const expected = token === undefined ? null : sha256(token)
  collectProcessMetrics()
  app.addHook('onResponse', (request, reply, done) => {
    const labels = { method: request.method, route: routeLabelOf(request), status_code: String(reply.statusCode) }
    requests.inc(labels)
    durations.observe(labels, reply.elapsedTime / 1000)
    done()
  })
  app.get('/metrics', async (request, reply) => {
    const refused = refusal(request, expected)
    if (refused) {
      if (refused.status === 401) void reply.header('www-authenticate', 'Bearer')
      return reply.status(refused.status).send(errorBody(refused.status, refused.message, request.id))
    }
    const text = await registry.metrics()
    return reply.header('cache-control', 'no-store').type(registry.contentType).send(text)
  })
}
