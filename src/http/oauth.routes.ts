/**
 * The OAuth 2.1 authorization server of the MCP specification's authorization profile
 * (docs/api/mcp.md, "Authorization"), as plain routes: the metadata documents, dynamic client
 * registration, the authorization endpoint (a redirect to the console's consent screen) and the
 * token endpoint (a form-encoded body). They speak OAuth, not the REST API: errors are
 * `{error, error_description}` (RFC 6749, 5.2), `invalid_client` a 401. What they do is
 * src/oauth/; the consent itself is a procedure (`POST /api/v1/oauth/consent`).
 *
 * The metadata, registration and token endpoints answer any origin (CORS, no credentials), as
 * the MCP SDK's own handlers do, so that an MCP client running in a browser can use them; they
 * take no cookie, so no other site can act with a user's session through them.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { OAuthError, InvalidClientError, InvalidRequestError, ServerError } from '@modelcontextprotocol/sdk/server/auth/errors.js'
import { oauth } from '../oauth/index.ts'
import { consume } from '../trpc/rate-limit.ts'
import { handleRouteError } from './errors.ts'
import type { CreateContext } from './request-context.ts'
import { contextOf } from './route-auth.ts'

/** What the routes need from the host. */
export interface OAuthRoutesOptions {
  createContext: CreateContext
}

const { PATHS } = oauth

/**
 * An OAuth error answer: 500 for `server_error`, else 400; at the token endpoint, where the client
 * authenticates, `invalid_client` is a 401 with a Basic challenge (RFC 6749, 5.2).
 */
function sendOAuthError(request: FastifyRequest, reply: FastifyReply, error: OAuthError) {
  const clientAuthFailed = error instanceof InvalidClientError && request.routeOptions.url === PATHS.token
  const status = clientAuthFailed ? 401 : error instanceof ServerError ? 500 : 400
  if (status === 401) void reply.header('www-authenticate', 'Basic realm="oauth"')
  return reply.status(status).header('cache-control', 'no-store').send(error.toResponseObject())
}

/** OAuth errors in OAuth's shape; the rest (rate limits, a lost database) as every plain route answers them. */
function handleOAuthRouteError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof OAuthError) return sendOAuthError(request, reply, error)
  // A body the parsers refused (malformed JSON or form, wrong content type) is a malformed request.
  if (error.statusCode === 400 || error.statusCode === 415) return sendOAuthError(request, reply, new InvalidRequestError(error.message))
  return handleRouteError(error, request, reply)
}

/** CORS for browser-based clients: any origin, no credentials. */
function allowAnyOrigin(reply: FastifyReply): void {
  void reply.header('access-control-allow-origin', '*')
}

/** The form fields of a token request; a repeated one is refused (RFC 6749, 3.2). */
function formFields(body: unknown): Record<string, string> {
  if (!(body instanceof URLSearchParams)) throw new InvalidRequestError('The body must be application/x-www-form-urlencoded')
  const fields: Record<string, string> = {}
  for (const key of new Set(body.keys())) {
    const values = body.getAll(key)
    if (values.length > 1) throw new InvalidRequestError(`${key} must not be repeated`)
    fields[key] = values[0]!
  }
  return fields
}

/** Registers the well-known documents and `/oauth/*`. */
export async function oauthRoutes(scope: FastifyInstance, options: OAuthRoutesOptions): Promise<void> {
  scope.setErrorHandler(handleOAuthRouteError)
  scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) =>
    done(null, new URLSearchParams(typeof body === 'string' ? body : body.toString('utf8'))),
  )

  const cors = [PATHS.resourceMetadata, `${PATHS.resourceMetadata}${PATHS.mcp}`, PATHS.serverMetadata, PATHS.register, PATHS.token]
  for (const path of cors) {
    scope.options(path, async (_request, reply) =>
      reply
        .status(204)
        .header('access-control-allow-origin', '*')
        .header('access-control-allow-methods', 'GET, POST, OPTIONS')
        .header('access-control-allow-headers', 'authorization, content-type, mcp-protocol-version')
        .header('access-control-max-age', '86400')
        .send(),
    )
  }

  const resourceMetadata = async (request: FastifyRequest, reply: FastifyReply) => {
    allowAnyOrigin(reply)
    return reply.send(oauth.protectedResourceMetadata(contextOf(options.createContext, request, reply).config))
  }
  scope.get(PATHS.resourceMetadata, resourceMetadata)
  scope.get(`${PATHS.resourceMetadata}${PATHS.mcp}`, resourceMetadata)

  scope.get(PATHS.serverMetadata, async (request, reply) => {
    allowAnyOrigin(reply)
    return reply.send(oauth.serverMetadata(contextOf(options.createContext, request, reply).config))
  })

  scope.post(PATHS.register, async (request, reply) => {
    allowAnyOrigin(reply)
    const ctx = contextOf(options.createContext, request, reply)
    // Anyone may register, and each registration stores a row: limited per address as sign-up is.
    await consume([[ctx.deps.limits.signInPerAddress, ctx.ip]])
    const registered = await oauth.register(ctx, request.body)
    return reply.status(201).header('cache-control', 'no-store').send(registered)
  })

  scope.get(PATHS.authorize, async (request, reply) => {
    const ctx = contextOf(options.createContext, request, reply)
    const query = new URLSearchParams(request.raw.url?.split('?')[1] ?? '')
    const location = await oauth.authorize(ctx, query)
    return reply.header('cache-control', 'no-store').redirect(location, 302)
  })

  scope.post(PATHS.token, async (request, reply) => {
    allowAnyOrigin(reply)
    const ctx = contextOf(options.createContext, request, reply)
    const tokens = await oauth.token(ctx, formFields(request.body), request.headers.authorization)
    return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(tokens)
  })
}
