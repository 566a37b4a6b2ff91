/**
 * The one HTTP server (docs/architecture.md): Fastify with what every surface shares (request
 * ids, JSON bodies, error answers, closing), and each surface as a plugin of its own: probes,
 * documentation, `/trpc` (HTTP and WebSocket), the REST surface, uploads, run event streams and
 * workflow webhooks.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import { createContextFactory, type AppDeps } from '../trpc/context.ts'
import { docsPlugin } from './docs.plugin.ts'
import { errorBody, handleClientError, handleHostError, JsonTooDeepError, jsonDeeperThan, MAX_JSON_DEPTH } from './errors.ts'
import { mediaRoutes } from './media.routes.ts'
import { probesPlugin } from './probes.plugin.ts'
import { requestIdOf, type CreateContext } from './request-context.ts'
import { restPlugin } from './rest.plugin.ts'
import { runEventsRoutes } from './run-events.routes.ts'
import { trpcPlugin } from './trpc.plugin.ts'
import { webhookRoutes } from './webhook.routes.ts'

/** A fastify app with every surface; `close()` also closes WebSocket connections. */
export interface HttpApp {
  app: FastifyInstance
  createContext: CreateContext
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
 * Every answer carries its request id (docs/api/conventions.md, "Request ids"). While closing,
 * answers end their keep-alive connections, so close() is not held up by idle sockets of
 * clients whose requests were in flight when shutdown began.
 */
function addHostHooks(app: FastifyInstance): void {
  let closing = false
  app.addHook('onRequest', (request, reply, done) => {
    void reply.header('x-request-id', request.id)
    done()
  })
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) void reply.header('connection', 'close')
    done(null, payload)
  })
  app.addHook('preClose', (done) => {
    closing = true
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
  addHostHooks(app)
  app.setErrorHandler(handleHostError)
  app.setNotFoundHandler((request, reply) => reply.status(404).send(errorBody(404, 'Route not found', request.id)))

  await app.register(probesPlugin, { deps })
  await app.register(docsPlugin, { config })
  await app.register(trpcPlugin, { deps, createContext })
  await app.register(restPlugin, { deps, createContext })
  // Uploads: plain routes in their own scope (multipart, not JSON procedures).
  await app.register(mediaRoutes, { createContext, config })
  // Run events for REST clients: Server-Sent Events, no JSON procedure.
  await app.register(runEventsRoutes, { createContext })
  // Workflow webhooks: any content type, raw body kept for signatures.
  await app.register(webhookRoutes, { deps })

  return { app, createContext }
}
