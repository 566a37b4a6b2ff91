/**
 * The browser's round trip through the OpenID Connect provider (docs/api/sso.md, "The flow"):
 * `GET /api/v1/auth/oidc` sends it to the provider, `GET /api/v1/auth/oidc/callback` takes the
 * provider's answer and sends it on to the console. Plain routes, since both answer redirects
 * (302 with `Location`) where a procedure answers JSON; refusals before a redirect are the usual
 * JSON errors. What they do is src/sso/.
 *
 * The start also sets a cookie holding the sign-in's state, which the callback requires: a
 * callback URL made in one browser (an attacker's, with the attacker's code) finishes nowhere
 * else, so nobody can be signed in to someone else's account by following a link.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { z } from 'zod'
import { publicIssue } from '../access/issues.ts'
import { OidcCallbackQuery, OidcStartQuery, sso, STATE_TTL_MS } from '../sso/index.ts'
import { consume } from '../trpc/rate-limit.ts'
import { VALIDATION_MESSAGE } from '../trpc/errors.ts'
import type { Config } from '../platform/config.ts'
import { errorBody, handleRouteError } from './errors.ts'
import type { CreateContext } from './request-context.ts'
import { contextOf } from './route-auth.ts'

/** What the routes need from the host. */
export interface SsoRoutesOptions {
  createContext: CreateContext
}

/** The cookie that binds a sign-in to the browser that started it. */
const STATE_COOKIE = 'aw_oidc_state'

/**
 * The state cookie's `Set-Cookie`: sent only to the callback, unreadable by scripts, sent on the
 * provider's top-level redirect back (`Lax`), `Secure` when APP_URL is https. An empty value with
 * no lifetime clears it.
 */
function stateCookie(config: Config, state: string | null): string {
  const path = new URL(sso.redirectUriOf(config)).pathname
  const secure = config.appUrl.startsWith('https:') ? '; Secure' : ''
  const age = state === null ? 0 : Math.floor(STATE_TTL_MS / 1000)
  return `${STATE_COOKIE}=${state ?? ''}; Path=${path}; Max-Age=${age}; HttpOnly; SameSite=Lax${secure}`
}

/** The value of cookie `name` of the request, or null. */
function cookieOf(request: FastifyRequest, name: string): string | null {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const separator = part.indexOf('=')
    if (separator > 0 && part.slice(0, separator).trim() === name) return part.slice(separator + 1).trim()
  }
  return null
}

/** Registers both routes; errors go through the host's handler (the documented error bodies). */
export async function ssoRoutes(scope: FastifyInstance, options: SsoRoutesOptions): Promise<void> {
  scope.setErrorHandler(handleRouteError)

  scope.get<{ Querystring: Record<string, unknown> }>('/api/v1/auth/oidc', async (request, reply) => {
    const ctx = contextOf(options.createContext, request, reply)
    sso.requireOidc(ctx.config)
    const parsed = OidcStartQuery.safeParse(request.query)
    if (!parsed.success) {
      return reply
        .status(400)
        .header('x-request-id', request.id)
        .send(errorBody(400, VALIDATION_MESSAGE, request.id, parsed.error.issues.map(publicIssue)))
    }
    // Each start stores a row: limited per address as sign-in and sign-up are.
    await consume([[ctx.deps.limits.signInPerAddress, ctx.ip]])
    const started = await sso.start(ctx, parsed.data.redirect)
    if (started.state !== null) void reply.header('set-cookie', stateCookie(ctx.config, started.state))
    return reply.header('cache-control', 'no-store').redirect(started.location, 302)
  })

  scope.get('/api/v1/auth/oidc/callback', async (request, reply) => {
    const ctx = contextOf(options.createContext, request, reply)
    sso.requireOidc(ctx.config)
    const query = new URLSearchParams(request.raw.url?.split('?')[1] ?? '')
    const browserState = cookieOf(request, STATE_COOKIE)
    // Used once whatever the outcome: a later callback in this browser is a new sign-in's.
    void reply.header('set-cookie', stateCookie(ctx.config, null))
    const location = await sso.callback(ctx, query, browserState)
    return reply.header('cache-control', 'no-store').redirect(location, 302)
  })
}

const location = z.object({ Location: z.string().meta({ description: 'Where the browser goes next (an absolute URL).' }) })
const startHeaders = location.extend({
  'Set-Cookie': z
    .string()
    .optional()
    .meta({ description: "The sign-in's state, for the callback only (HttpOnly, SameSite=Lax, 10 minutes)." }),
})

/** The routes in the OpenAPI document (they are no procedures). */
export const SSO_OPENAPI_PATHS = {
  '/api/v1/auth/oidc': {
    get: {
      operationId: 'auth-oidc-start',
      summary: 'Start a single sign-on: redirect to the OpenID Connect provider',
      description:
        "A browser navigation, not an API call: answers 302 to the provider's authorization endpoint (authorization code " +
        'flow with PKCE S256, `state` and `nonce`) and sets a cookie that binds the sign-in to this browser for 10 minutes. ' +
        'When the provider cannot be reached, 302 to `/console/sign-in?error=provider_unavailable` (docs/api/sso.md). ' +
        'Public: no token needed. Rate limited per address: 429 with Retry-After.',
      tags: ['Authentication'],
      requestParams: { query: OidcStartQuery },
      responses: {
        '302': {
          description: "To the provider's authorization endpoint, or to the console's sign-in with `error=`",
          headers: startHeaders,
        },
        '400': { description: '`redirect` is not a path of the console, or an unknown query parameter (named in `issues`)' },
        '404': { description: 'Single sign-on is not configured (OIDC_ISSUER, OIDC_CLIENT_ID)' },
        '429': { description: 'Too many sign-in attempts from this address' },
      },
    },
  },
  '/api/v1/auth/oidc/callback': {
    get: {
      operationId: 'auth-oidc-callback',
      summary: "The provider's answer to a single sign-on: redirect to the console with a one-time code",
      description:
        'The redirect URI to register at the provider (`<APP_URL>/api/v1/auth/oidc/callback`). Checks the state (this ' +
        "browser's, unused, at most 10 minutes old), exchanges the code, verifies the ID token (signature through the " +
        "provider's JWKS, issuer, audience, nonce, expiry) and requires a verified e-mail; then 302 to the sign-in's " +
        'console path with `code=<one-time code>` (60 seconds, once; `POST /api/v1/auth/oidc/token` exchanges it), or to ' +
        '`/console/sign-in?error=<reason>` with nothing made or linked (docs/api/sso.md, "Reasons"). Public: no token needed.',
      tags: ['Authentication'],
      requestParams: { query: OidcCallbackQuery },
      responses: {
        '302': { description: "To the console path with `code=`, or to the console's sign-in with `error=`", headers: location },
        '400': { description: "A state that is unknown, expired, used or not this browser's (`issues` names `state`)" },
        '404': { description: 'Single sign-on is not configured' },
      },
    },
  },
}
