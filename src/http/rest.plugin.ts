/**
 * The REST surface: every procedure with an OpenAPI path under `/api/v1`, through the handler of
 * src/http/rest-handler.ts (docs/architecture.md). Its hooks hold it to docs/api/conventions.md:
 * paths read one way only, 404 and 405 by the document's paths, JSON object bodies ("Content
 * types") and the flat error body ("Errors").
 */
import { setRouteTemplate } from './route-template.ts'
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import type { AppDeps } from '../trpc/context.ts'
import { openApiDocument } from './openapi-document.ts'
import { errorBody } from './errors.ts'
import { REST_METHODS, restHandler } from './rest-handler.ts'
import { aliasRewriter, pathAliases } from './path-aliases.ts'
import { restRoutes } from './rest-routes.ts'
import { runAnswerStream } from './run-event-stream.ts'
import { contextOfRequest, type CreateContext } from './request-context.ts'

/** What the REST surface needs from the host. */
export interface RestOptions {
  /** `log` for procedure faults; `config.appUrl` names the OpenAPI document the routes are read from. */
  deps: Pick<AppDeps, 'log' | 'config'>
  createContext: CreateContext
  /** Aborted when the host starts draining (shutdown): run event streams are told to reconnect, then end. */
  draining?: AbortSignal
}

/**
 * A path the WHATWG URL parser leaves as it is (no `.`, `%` or backslash, no leading `//`, nothing it
 * percent-encodes): most requests, which so skip building a URL to compare.
 */
const PLAIN_PATH = /^\/(?!\/)[\w\-~!$&'()*+,;=:@/]*$/

/**
 * The WHATWG URL parser resolves `.`, `..` (also as %2e) and `\`: a client, proxy or tool that
 * normalises URLs reads `DELETE .../members/..` as `DELETE /workspaces/{uuid}`. A path that parser
 * reads differently from the raw path is refused, so the path the REST handler matches
 * (src/http/rest-handler.ts) is the one every reader sees. True when it answered the request.
 */
function refuseAmbiguousPath(request: FastifyRequest, reply: FastifyReply): boolean {
  const raw = request.raw.url ?? '/'
  const path = raw.split('?')[0]
  if (PLAIN_PATH.test(path) || new URL(raw, 'http://localhost').pathname === path) return false
  void reply.status(400).send(errorBody(400, 'Malformed request path', request.id))
  return true
}

/**
 * A procedure's second path (the specification's `/v1/<resource>/metrics`, src/http/path-aliases.ts)
 * becomes its own path before the route check and the REST handler read the URL: one procedure
 * answers both. Fastify has already routed the request to this scope's catch-all route by then.
 */
function rewriteAlias(request: FastifyRequest, rewrite: (url: string) => string): void {
  const url = request.raw.url
  if (url !== undefined) request.raw.url = rewrite(url)
}

/**
 * The paths of the OpenAPI document decide what reaches the REST handler (src/http/rest-routes.ts):
 * a path none of them has is a 404 (so is a word where a uuid belongs), a method the path does not
 * have a 405 with `Allow`. HEAD goes on (the handler answers 204, as trpc-to-openapi's does).
 * True when it answered the request.
 */
function refuseUnroutable(request: FastifyRequest, reply: FastifyReply, methodsOf: (path: string) => string[]): boolean {
  if (request.method === 'HEAD') return false
  const methods = methodsOf((request.raw.url ?? '/').split('?')[0])
  if (methods.includes(request.method)) return false
  if (methods.length === 0) {
    void reply.status(404).send(errorBody(404, 'Route not found', request.id))
    return true
  }
  const allow = methods.join(', ')
  void reply
    .status(405)
    .header('allow', allow)
    .send(errorBody(405, `${request.method} is not allowed on this path; it allows ${allow}`, request.id))
  return true
}

/**
 * The path checks of every REST request, in order, as one `onRequest` hook (each hook Fastify
 * runs costs every request): an ambiguous path is refused, a second path rewritten, then an
 * unroutable path or method refused.
 */
function checkPath(rewrite: (url: string) => string, methodsOf: (path: string) => string[]) {
  return (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    // No operation until the handler finds one (./rest-handler.ts records its template): logs,
    // metrics and spans never take the catch-all's `/*` for one.
    setRouteTemplate(request, null)
    if (refuseAmbiguousPath(request, reply)) return
    rewriteAlias(request, rewrite)
    if (refuseUnroutable(request, reply, methodsOf)) return
    done()
  }
}

/** A body must be a JSON object; a bodiless POST (logout) needs no Content-Type. */
function requireJsonObject(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
  if (request.method === 'GET' || request.method === 'DELETE' || request.method === 'HEAD') return done()
  const contentType = request.headers['content-type']
  const hasBody = request.body !== undefined
  if (!contentType && !hasBody) {
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
}

/** Registers the REST surface in its own scope, so its hooks touch no other route. */
export async function restPlugin(scope: FastifyInstance, options: RestOptions): Promise<void> {
  const { deps, createContext, draining } = options
  // The routes of the same build `GET /openapi.json` serves (its paths depend on no base URL).
  scope.addHook('onRequest', checkPath(aliasRewriter(pathAliases()), restRoutes(openApiDocument(deps.config.appUrl))))
  scope.addHook('preValidation', requireJsonObject)
  const handler = restHandler({
    // One REST request is one procedure call.
    createContext: (request, reply) => contextOfRequest(createContext, request, reply, true),
    onError: (error) => {
      if (error.code === 'INTERNAL_SERVER_ERROR') deps.log.error({ err: error }, 'procedure failed')
      // A lost database connection (a 503): worth a line, not a fault of the code.
      else if (error.code === 'SERVICE_UNAVAILABLE') deps.log.warn({ err: error.cause ?? error }, 'procedure unavailable')
    },
    // A run request asked for its events answers them on the same request (docs/api/runs.md, "One-request streaming").
    streamAnswer: runAnswerStream(draining),
  })
  // HEAD comes with GET (Fastify's exposeHeadRoutes).
  scope.route({ method: [...REST_METHODS], url: '/*', handler })
}
