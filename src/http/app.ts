/**
 * The one HTTP server (docs/architecture.md): Fastify with what every surface shares (request
 * ids, JSON bodies, error answers, draining and closing), and each surface as a plugin of its
 * own: probes, documentation, `/trpc` (HTTP and WebSocket), the REST surface, uploads, run event
 * streams, single sign-on's redirects, workflow webhooks, the OpenAI-compatible API, MCP (with
 * its OAuth authorization server) and A2A.
 */
import type { ServerResponse } from 'node:http'
import Fastify, { LogController, type FastifyInstance } from 'fastify'
import type { Frontend } from '../app.ts'
import { createContextFactory, type AppDeps } from '../trpc/context.ts'
import { consolePlugin } from './console.plugin.ts'
import { docsPlugin } from './docs.plugin.ts'
import {
  DRAIN_RETRY_AFTER_SECONDS,
  errorBody,
  handleClientError,
  handleHostError,
  JsonTooDeepError,
  jsonDeeperThan,
  MAX_JSON_DEPTH,
} from './errors.ts'
import { addIdempotencyHooks } from './idempotency.ts'
import { mcpRoutes } from './mcp.routes.ts'
import { a2aRoutes } from './a2a.routes.ts'
import { mediaRoutes } from './media.routes.ts'
import { oauthRoutes } from './oauth.routes.ts'
import { openAiRoutes } from './openai.routes.ts'
import { probesPlugin } from './probes.plugin.ts'
import { prometheusPlugin } from './prometheus.plugin.ts'
import { requestIdOf, type CreateContext } from './request-context.ts'
import { restPlugin } from './rest.plugin.ts'
import { runEventsRoutes } from './run-events.routes.ts'
import { ssoRoutes } from './sso.routes.ts'
import { auditExportRoutes } from './audit-export.routes.ts'
import { trpcPlugin } from './trpc.plugin.ts'
import { webhookRoutes } from './webhook.routes.ts'
import { routeTemplateOf } from './route-template.ts'
import { addRequestTracing } from './request-tracing.ts'

/** A fastify app with every surface; `close()` also closes WebSocket connections. */
export interface HttpApp {
  app: FastifyInstance
  createContext: CreateContext
  /** The host's part in a shutdown (docs/operations.md, "Shutdown"), for `Runtime.close`. */
  front: Frontend
}

/**
 * Fastify's JSON parser plus a nesting limit: tRPC re-serializes each body with the recursive
 * JSON.stringify, which a few thousand levels of `[[[...]]]` overflow (a 500, not a 400).
 */
function parseJsonWithDepthLimit(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) =>
    parseJson(request, typeof body === 'string' ? body : body.toString('utf8'), (error, value) => {
      if (error) return done(error)
      if (jsonDeeperThan(value, MAX_JSON_DEPTH)) return done(new JsonTooDeepError())
      done(null, value)
    }),
  )
}

/**
 * Every answer carries its request id (docs/api/conventions.md, "Request ids"). Draining (the
 * first step of a shutdown, docs/operations.md): the server keeps listening, but every new
 * request except `/health` is answered 503 with `Retry-After` (a load balancer sends it to
 * another process, `/ready` included), every answer closes its keep-alive connection, and
 * `draining` aborts, which tells the streams to reconnect: the plugins' run-event streams and
 * WebSockets listen to it, and tRPC's own Server-Sent Event subscriptions are cut (EventSource
 * reconnects by itself). Requests in flight are counted until their answer is sent, so shutdown
 * can wait for them.
 */
function addHostHooks(app: FastifyInstance, draining: AbortController): Frontend {
  let open = 0
  let waiters: (() => void)[] = []
  const streams = new Set<ServerResponse>()
  const closed = () => {
    open -= 1
    if (open === 0) for (const wake of waiters.splice(0)) wake()
  }
  app.addHook('onRequest', (request, reply, done) => {
    void reply.header('x-request-id', request.id)
    if (draining.signal.aborted && request.url !== '/health') {
      void reply
        .status(503)
        .header('retry-after', String(DRAIN_RETRY_AFTER_SECONDS))
        .header('connection', 'close')
        .send(errorBody(503, 'The service is shutting down; retry shortly', request.id))
      return
    }
    open += 1
    const res = reply.raw
    res.once('close', closed)
    if (request.url.startsWith('/trpc') && request.headers.accept?.includes('text/event-stream')) {
      streams.add(res)
      res.once('close', () => streams.delete(res))
    }
    done()
  })
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (draining.signal.aborted) void reply.header('connection', 'close')
    done(null, payload)
  })
  const drain = () => {
    if (draining.signal.aborted) return
    draining.abort()
    for (const res of streams) res.destroy()
  }
  // A plain app.close() (tests) drains first too.
  app.addHook('preClose', (done) => {
    drain()
    done()
  })
  return {
    drain,
    idle: (deadline) => {
      const ms = deadline - Date.now()
      if (open === 0 || ms <= 0) return Promise.resolve()
      return new Promise<void>((resolve) => {
        const timer = setTimeout(wake, ms)
        function wake() {
          clearTimeout(timer)
          waiters = waiters.filter((w) => w !== wake)
          resolve()
        }
        waiters.push(wake)
      })
    },
    get active() {
      return open
    },
    close: async () => {
      const closing = app.close()
      // What is still open by now is a stream or an idle keep-alive socket: nothing to wait for.
      app.server.closeAllConnections()
      await closing
    },
  }
}

/** Requests logged at `debug`: the probes a load balancer polls and the console's static files. */
const QUIET_PATHS = /^\/(?:health|ready|metrics)(?:[?/]|$)|^\/console\/assets\//

/**
 * One log line per request when its answer is sent (docs/operations.md, "Logs"): `request
 * completed` with the request (method, URL with credential-bearing query values redacted, host,
 * address), the route template (`route`), the status (`res.statusCode`) and `responseTime` in
 * milliseconds; at `info`, or at `debug` for {@link QUIET_PATHS}, so polling does not drown the log.
 */
function logRequests(app: FastifyInstance): void {
  app.addHook('onResponse', (request, reply, done) => {
    const line = {
      req: request,
      route: routeTemplateOf(request),
      res: { statusCode: reply.statusCode },
      responseTime: Math.round(reply.elapsedTime * 10) / 10,
    }
    if (QUIET_PATHS.test(request.url)) request.log.debug(line, 'request completed')
    else request.log.info(line, 'request completed')
    done()
  })
}

/**
 * Builds the HTTP app over shared dependencies. It does not listen; call `app.listen`.
 */
export async function buildHttpApp(deps: AppDeps): Promise<HttpApp> {
  const { config } = deps
  const createContext = createContextFactory(deps)
  const app = Fastify({
    loggerInstance: deps.log,
    // One line per request, written by {@link logRequests} (Fastify's own writes two).
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.bodyLimitBytes,
    trustProxy: config.trustProxy,
    genReqId: requestIdOf,
    return503OnClosing: true,
    routerOptions: { maxParamLength: 1000, ignoreTrailingSlash: true },
    // Malformed percent-encoding, over-long parameters, oversized headers: our error body too.
    frameworkErrors: handleHostError,
    clientErrorHandler: handleClientError,
  })
  parseJsonWithDepthLimit(app)
  addRequestTracing(app)
  logRequests(app)
  prometheusPlugin(app, { config })
  const draining = new AbortController()
  const front = addHostHooks(app, draining)
  // Every POST of every surface below may carry an Idempotency-Key.
  addIdempotencyHooks(app, deps)
  app.setErrorHandler(handleHostError)
  app.setNotFoundHandler((request, reply) => reply.status(404).send(errorBody(404, 'Route not found', request.id)))

  await app.register(probesPlugin, { deps })
  await app.register(docsPlugin, { config })
  await app.register(consolePlugin)
  await app.register(trpcPlugin, { deps, createContext, draining: draining.signal })
  await app.register(restPlugin, { deps, createContext, draining: draining.signal })
  // Uploads: plain routes in their own scope (multipart, not JSON procedures).
  await app.register(mediaRoutes, { createContext, config })
  // Run events for REST clients: Server-Sent Events, no JSON procedure.
  await app.register(runEventsRoutes, { createContext, draining: draining.signal })
  await app.register(auditExportRoutes, { createContext })
  // Single sign-on's browser round trip: redirects, no JSON procedure.
  await app.register(ssoRoutes, { createContext })
  // The OpenAI-compatible API: plain routes with OpenAI's error shape (docs/api/openai.md).
  await app.register(openAiRoutes, { prefix: '/api/v1/openai', createContext, draining: draining.signal })
  // Workflow webhooks: any content type, raw body kept for signatures.
  await app.register(webhookRoutes, { deps })
  // The MCP server (Streamable HTTP): JSON-RPC handed to the SDK's transport.
  await app.register(mcpRoutes, { createContext, config })
  // The MCP server's OAuth authorization server: metadata, registration, authorize and token (forms, redirects).
  await app.register(oauthRoutes, { createContext })
  // A2A: each agent's card and JSON-RPC endpoint, through the SDK's transport handler (docs/api/a2a.md).
  await app.register(a2aRoutes, { createContext, config, draining: draining.signal })

  return { app, createContext, front }
}
