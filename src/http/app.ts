/**
 * The one HTTP server (API.md section 1): `/trpc` (queries, mutations, batching; subscriptions
 * over WebSocket through `ws`), the REST surface of trpc-to-openapi, `/openapi.json`, `/docs`,
 * `/health` and `/ready`.
 */
import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import { fastifyTRPCPlugin } from '@trpc/server/adapters/fastify'
import { applyWSSHandler } from '@trpc/server/adapters/ws'
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import { fastifyTRPCOpenApiPlugin, generateOpenApiDocument } from 'trpc-to-openapi'
import { WebSocketServer } from 'ws'
import { appRouter } from '../../routers/index.ts'
import { createContextFactory, type AppDeps, type Ctx } from '../trpc/context.ts'
import { renderDocs } from './docs.ts'
import { MEDIA_OPENAPI_PATHS, mediaRoutes } from './media.routes.ts'
import { RUN_EVENTS_OPENAPI_PATHS, runEventsRoutes } from './run-events.routes.ts'
import { WEBHOOK_OPENAPI_PATHS, webhookRoutes } from './webhook.routes.ts'
import {
  errorBody,
  flattenRestError,
  handleClientError,
  handleHostError,
  JsonTooDeepError,
  jsonDeeperThan,
  MAX_JSON_DEPTH,
} from './errors.ts'

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/**
 * A path the WHATWG URL parser leaves as it is (no `.`, `%` or backslash, no leading `//`, nothing it
 * percent-encodes): most requests, which so skip building a URL to compare.
 */
const PLAIN_PATH = /^\/(?!\/)[\w\-~!$&'()*+,;=:@/]*$/

/** Reuses a caller's well-formed X-Request-Id, else makes one. */
function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id']
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID()
}

/** The headers a WebSocket client may pass as connectionParams, lower-cased. */
const WS_HEADERS = ['authorization', 'x-service-authorization', 'x-workspace-uuid'] as const

function wsHeaders(params: Record<string, string | undefined> | null): Record<string, string> {
  const headers: Record<string, string> = {}
  for (const [key, value] of Object.entries(params ?? {})) {
    const name = key.toLowerCase()
    if ((WS_HEADERS as readonly string[]).includes(name) && typeof value === 'string') headers[name] = value
  }
  return headers
}

/** Builds the OpenAPI 3.1 document from the routers (once per process). */
export function openApiDocument(baseUrl: string) {
  return generateOpenApiDocument(appRouter, {
    title: 'Agent Workspace Service',
    version: '1.0.0',
    description:
      'Multi-tenant backend for AI assistants in workspaces. Every operation is also a tRPC procedure at /trpc/<router>.<procedure>.',
    baseUrl,
    securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } },
    // The upload and download routes are plain Fastify routes beside the procedures.
    paths: { ...MEDIA_OPENAPI_PATHS, ...RUN_EVENTS_OPENAPI_PATHS, ...WEBHOOK_OPENAPI_PATHS },
  })
}

/** A fastify app with every surface; `close()` also closes WebSocket connections. */
export interface HttpApp {
  app: FastifyInstance
  createContext: ReturnType<typeof createContextFactory>
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

  // Fastify's JSON parser plus a nesting limit: tRPC re-serializes each body with the recursive
  // JSON.stringify, which a few thousand levels of `[[[...]]]` overflow (a 500, not a 400).
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) =>
    parseJson(request, typeof body === 'string' ? body : body.toString('utf8'), (error, value) => {
      if (error) return done(error)
      if (jsonDeeperThan(value, MAX_JSON_DEPTH)) return done(new JsonTooDeepError())
      done(null, value)
    }),
  )

  const fromFastify = (req: FastifyRequest, res: FastifyReply, singleCall = false, connectionParams: Record<string, string | undefined> | null = null): Ctx =>
    createContext({
      requestId: req.id,
      ip: req.ip,
      // A browser's EventSource cannot set headers either: SSE subscriptions carry them as tRPC connectionParams.
      headers: connectionParams ? { ...req.headers, ...wsHeaders(connectionParams) } : req.headers,
      setHeader: (name, value) => void res.header(name, value),
      singleCall,
    })

  // While closing, answers end their keep-alive connections, so close() is not held up by idle
  // sockets of clients whose requests were in flight when shutdown began.
  let closing = false
  app.addHook('onRequest', (request, reply, done) => {
    void reply.header('x-request-id', request.id)
    done()
  })
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) void reply.header('connection', 'close')
    done(null, payload)
  })
  app.setErrorHandler(handleHostError)
  app.setNotFoundHandler((request, reply) => reply.status(404).send(errorBody(404, 'Route not found', request.id)))

  app.get('/health', () => ({ status: 'ok' }))
  app.get('/ready', async (request, reply) => {
    try {
      await deps.orm.em.fork().execute('select 1')
      return { status: 'ok', database: 'ok' }
    } catch (error) {
      request.log.warn({ err: error }, 'database not reachable')
      return reply.status(503).send({ status: 'unavailable', database: 'unreachable' })
    }
  })

  let openApiJson: string | undefined
  let docsHtml: string | undefined
  app.get('/openapi.json', (_request, reply) => {
    openApiJson ??= JSON.stringify(openApiDocument(config.appUrl))
    return reply.type('application/json').send(openApiJson)
  })
  app.get('/docs', (_request, reply) => {
    docsHtml ??= renderDocs(openApiDocument(config.appUrl))
    return reply.type('text/html; charset=utf-8').send(docsHtml)
  })

  await app.register(fastifyTRPCPlugin, {
    prefix: '/trpc',
    trpcOptions: {
      router: appRouter,
      createContext: ({ req, res, info }: { req: FastifyRequest; res: FastifyReply; info: { connectionParams: Record<string, string | undefined> | null } }) =>
        fromFastify(req, res, false, info.connectionParams),
      onError: ({ error }: { error: { code: string } & Error }) => {
        if (error.code === 'INTERNAL_SERVER_ERROR') deps.log.error({ err: error }, 'procedure failed')
      },
    },
  })

  await app.register(async (rest) => {
    // trpc-to-openapi hands this reply to tRPC's incomingMessageToRequest as if it were a Node
    // ServerResponse. Without `writableEnded` every finished response looked like a client gone
    // away, and each request ended by aborting its signal (a DOMException and an abort event).
    // Our patch of trpc-to-openapi (patches/, README "Patched dependencies") builds that Request only when
    // something reads the call's signal, which nothing does today; this keeps it right if it is.
    rest.decorateReply('writableEnded', {
      getter(this: FastifyReply) {
        return this.raw.writableEnded
      },
    })
    // trpc-to-openapi finds the procedure again in the WHATWG-parsed URL, which resolves `.`, `..`
    // (also as %2e) and `\`: `DELETE .../members/..` would reach `DELETE /workspaces/{uuid}`.
    // A path that parser reads differently from the router's is refused.
    rest.addHook('onRequest', (request, reply, done) => {
      const raw = request.raw.url ?? '/'
      const path = raw.split('?')[0]
      if (!PLAIN_PATH.test(path) && new URL(raw, 'http://localhost').pathname !== path) {
        return void reply.status(400).send(errorBody(400, 'Malformed request path', request.id))
      }
      done()
    })
    rest.addHook('preValidation', (request, reply, done) => {
      if (request.method === 'GET' || request.method === 'DELETE' || request.method === 'HEAD') return done()
      const contentType = request.headers['content-type']
      const hasBody = request.body !== undefined
      if (!contentType && !hasBody) {
        // A bodiless POST (logout) needs no Content-Type (API.md section 2).
        request.headers['content-type'] = 'application/json'
        request.body = {}
        return done()
      }
      if (!contentType?.toLowerCase().startsWith('application/json')) {
        return void reply.status(415).send(errorBody(415, 'Unsupported Content-Type; send application/json', request.id))
      }
      const body = request.body
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        return void reply.status(400).send(errorBody(400, 'The request body must be a JSON object', request.id))
      }
      done()
    })
    rest.addHook('onSend', async (request, reply, payload) => flattenRestError(request, reply, payload))
    await rest.register(fastifyTRPCOpenApiPlugin, {
      router: appRouter,
      // One REST request is one procedure call.
      createContext: ({ req, res }: { req: FastifyRequest; res: FastifyReply }) => fromFastify(req, res, true),
      responseMeta: ({ ctx, errors }: { ctx?: Ctx; errors: unknown[] }) =>
        errors.length === 0 && ctx?.successStatus ? { status: ctx.successStatus } : {},
      onError: ({ error }: { error: { code: string } & Error }) => {
        if (error.code === 'INTERNAL_SERVER_ERROR') deps.log.error({ err: error }, 'procedure failed')
      },
    })
  })

  // Uploads: plain routes in their own scope (multipart, not JSON procedures).
  await app.register(mediaRoutes, { createContext, config })
  // Run events for REST clients: Server-Sent Events, no JSON procedure.
  await app.register(runEventsRoutes, { createContext })
  // Workflow webhooks: any content type, raw body kept for signatures.
  await app.register(webhookRoutes, { deps })

  const wss = new WebSocketServer({ noServer: true, maxPayload: config.bodyLimitBytes })
  const wssHandler = applyWSSHandler({
    wss,
    router: appRouter,
    // Browsers cannot set headers on a WebSocket: tRPC's connectionParams carry them instead.
    createContext: ({ req, info }) =>
      createContext({
        requestId: requestIdOf(req),
        ip: req.socket.remoteAddress ?? '',
        headers: { ...req.headers, ...wsHeaders(info.connectionParams) },
        setHeader: () => {},
      }),
    keepAlive: { enabled: true, pingMs: 30_000, pongWaitMs: 5_000 },
  })
  app.server.on('upgrade', (req, socket, head) => {
    if (!req.url?.startsWith('/trpc')) return void socket.destroy()
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req))
  })
  app.addHook('preClose', (done) => {
    closing = true
    wssHandler.broadcastReconnectNotification()
    for (const client of wss.clients) client.close(1001, 'server shutting down')
    wss.close(() => done())
  })

  return { app, createContext }
}
