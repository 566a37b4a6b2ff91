/**
 * The OAuth 2.1 authorization server of the MCP specification's authorization profile
 * (docs/api/mcp.md, "Authorization"), so that MCP clients that only speak OAuth connect to `/mcp`:
 * the metadata documents (RFC 9728, RFC 8414), dynamic client registration (RFC 7591), the checks
 * of an authorization request, the user's consent (a code bound to a workspace) and the token
 * endpoint (authorization code with PKCE S256, refresh with rotation, resource indicators of
 * RFC 8707). The tokens issued are the service's own application access tokens (src/tenancy),
 * listed and revoked as any other; a refresh token lives only as long as its access token.
 *
 * The protocol's pieces come from the MCP SDK (`@modelcontextprotocol/sdk`): its zod schema of
 * client metadata, its redirect URI matching (exact, any port on loopback, RFC 8252), its metadata
 * and token types and its OAuth error classes; PKCE is checked by `pkce-challenge`, the library
 * the SDK's own handlers use. The SDK's handlers themselves are Express middleware, so the routes
 * are thin Fastify ones (src/http/oauth.routes.ts) over the functions here.
 */
import { timingSafeEqual } from 'node:crypto'
import { redirectUriMatches } from '@modelcontextprotocol/sdk/server/auth/handlers/authorize.js'
import {
  InvalidClientError,
  InvalidClientMetadataError,
  InvalidGrantError,
  InvalidRequestError,
  InvalidTargetError,
  OAuthError,
  UnsupportedGrantTypeError,
  UnsupportedResponseTypeError,
} from '@modelcontextprotocol/sdk/server/auth/errors.js'
import {
  OAuthClientMetadataSchema,
  type OAuthClientInformationFull,
  type OAuthMetadata,
  type OAuthProtectedResourceMetadata,
  type OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js'
import { verifyChallenge } from 'pkce-challenge'
import { OAUTH_CLIENT_AUTH_METHODS, type OAuthClientAuthMethod } from '../../entities/index.ts'
import { iso } from '../access/wire.ts'
import { requireWorkspace } from '../access/workspace-access.ts'
import type { AuthedCtx, ServiceCtx } from '../context.ts'
import type { Config } from '../platform/config.ts'
import { ForbiddenError, NotFoundError, ValidationError } from '../platform/errors.ts'
import { hashToken } from '../platform/tokens.ts'
import { tokens } from '../tenancy/index.ts'
import { findClient, issueCode, issueRefreshToken, saveClient, takeCode, takeRefreshToken, type StoredClient } from './oauth-store.ts'
import type { TOAuthClientResponse, TOAuthConsentInput, TOAuthConsentResponse } from './oauth.schema.ts'

/** Where the endpoints are, under APP_URL. */
export const PATHS = {
  resourceMetadata: '/.well-known/oauth-protected-resource',
  serverMetadata: '/.well-known/oauth-authorization-server',
  register: '/oauth/register',
  authorize: '/oauth/authorize',
  token: '/oauth/token',
  consent: '/console/oauth/consent',
  mcp: '/mcp',
} as const

/** How long an access token issued here lasts, in seconds (`expires_in`); the client then refreshes. */
export const ACCESS_TOKEN_TTL_SECONDS = 3600

/** The protected resource: the MCP endpoint, `<APP_URL>/mcp`. */
export const resourceOf = (config: Config) => `${config.appUrl}${PATHS.mcp}`

/** The URL of the protected resource metadata that `/mcp`'s 401 names (RFC 9728, the path-specific form). */
export const resourceMetadataUrlOf = (config: Config) => `${config.appUrl}${PATHS.resourceMetadata}${PATHS.mcp}`

/** `GET /.well-known/oauth-protected-resource[/mcp]` (RFC 9728): this service is the resource's authorization server. */
export function protectedResourceMetadata(config: Config): OAuthProtectedResourceMetadata {
  return {
    resource: resourceOf(config),
    authorization_servers: [config.appUrl],
    bearer_methods_supported: ['header'],
    resource_name: 'Agent Workspace MCP server',
  }
}

/** `GET /.well-known/oauth-authorization-server` (RFC 8414). */
export function serverMetadata(config: Config): OAuthMetadata {
  const base = config.appUrl
  return {
    issuer: base,
    authorization_endpoint: `${base}${PATHS.authorize}`,
    token_endpoint: `${base}${PATHS.token}`,
    registration_endpoint: `${base}${PATHS.register}`,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: [...OAUTH_CLIENT_AUTH_METHODS],
  }
}

/** Loopback hosts, where a native client may listen on plain http (RFC 8252, 7.3). */
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]'])

/**
 * Why redirect URI `uri` may not be registered, or null when it may: https, http on a loopback
 * host, or a private-use scheme of a native app (`com.example.app:/callback`); no fragment.
 */
function redirectUriRefusal(uri: string): string | null {
  const url = new URL(uri)
  if (url.hash) return 'must not contain a fragment'
  if (url.protocol === 'http:' && !LOOPBACK.has(url.hostname)) return 'must use https, or http on a loopback host (localhost, 127.0.0.1, [::1])'
  return null
}

/**
 * `POST /oauth/register` (RFC 7591): registers a client from its metadata, checked by the MCP
 * SDK's schema. A client whose `token_endpoint_auth_method` is `none` is public (no secret);
 * any other gets a secret (`client_secret_basic` when not said), answered once, never expiring.
 * @returns the client information, with `client_id` and, for a confidential client, `client_secret`.
 * @throws OAuthError `invalid_client_metadata` or `invalid_redirect_uri`.
 */
export async function register(ctx: ServiceCtx, body: unknown): Promise<OAuthClientInformationFull> {
  const parsed = OAuthClientMetadataSchema.safeParse(body)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    throw new InvalidClientMetadataError(`${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}`)
  }
  const metadata = parsed.data
  if (!metadata.redirect_uris.length) throw new InvalidRedirectUriError('redirect_uris: at least one redirect URI is required')
  for (const uri of metadata.redirect_uris) {
    const refusal = redirectUriRefusal(uri)
    if (refusal) throw new InvalidRedirectUriError(`redirect_uris: ${uri} ${refusal}`)
  }
  const method = (metadata.token_endpoint_auth_method ?? 'client_secret_basic') as OAuthClientAuthMethod
  if (!OAUTH_CLIENT_AUTH_METHODS.includes(method)) {
    throw new InvalidClientMetadataError(`token_endpoint_auth_method: one of ${OAUTH_CLIENT_AUTH_METHODS.join(', ')}`)
  }
  const unsupportedGrant = (metadata.grant_types ?? []).find((grant) => grant !== 'authorization_code' && grant !== 'refresh_token')
  if (unsupportedGrant) throw new InvalidClientMetadataError(`grant_types: ${unsupportedGrant} is not supported`)
  if ((metadata.response_types ?? []).some((type) => type !== 'code')) throw new InvalidClientMetadataError('response_types: only code is supported')
  const registered = {
    ...metadata,
    token_endpoint_auth_method: method,
    grant_types: metadata.grant_types ?? ['authorization_code', 'refresh_token'],
    response_types: ['code'],
  }
  const saved = await saveClient(ctx.em, {
    authMethod: method,
    clientName: metadata.client_name?.slice(0, 255) ?? null,
    redirectUris: metadata.redirect_uris,
    metadata: registered,
  })
  return {
    ...registered,
    client_id: saved.clientId,
    client_id_issued_at: Math.floor(saved.createdAt.getTime() / 1000),
    ...(saved.secret === null ? {} : { client_secret: saved.secret, client_secret_expires_at: 0 }),
  }
}

/** RFC 7591's error for a redirect URI that may not be registered. */
export class InvalidRedirectUriError extends OAuthError {
  static override errorCode = 'invalid_redirect_uri'
}

/** The fields of an authorization request, as `GET /oauth/authorize` and the consent take them. */
type AuthorizationRequest = Pick<
  TOAuthConsentInput,
  'client_id' | 'redirect_uri' | 'response_type' | 'code_challenge' | 'code_challenge_method' | 'state' | 'resource'
>

/** A refused authorization request: the field at fault and the OAuth error naming it. */
class AuthorizationRefusal extends Error {
  constructor(
    readonly field: string,
    readonly error: OAuthError,
  ) {
    super(error.message)
  }
}

/** A checked authorization request: its client and the redirect URI to answer to. */
interface CheckedAuthorization {
  client: StoredClient
  redirectUri: string
}

/** A S256 challenge: base64url of a SHA-256, 43 characters. */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/

/**
 * The checks of an authorization request, in the order RFC 6749 asks: the client and its redirect
 * URI first (refused without ever redirecting), then the rest.
 * @throws AuthorizationRefusal naming the field.
 */
async function checkAuthorization(ctx: ServiceCtx, request: Partial<AuthorizationRequest>): Promise<CheckedAuthorization> {
  if (!request.client_id) throw new AuthorizationRefusal('client_id', new InvalidRequestError('client_id is required'))
  const client = await findClient(ctx.em, request.client_id)
  if (!client) throw new AuthorizationRefusal('client_id', new InvalidClientError('Unknown client_id'))
  let redirectUri: string
  if (request.redirect_uri !== undefined) {
    const requested = request.redirect_uri
    if (!client.redirectUris.some((registered) => redirectUriMatches(requested, registered))) {
      throw new AuthorizationRefusal('redirect_uri', new InvalidRequestError('redirect_uri is not registered for this client'))
    }
    redirectUri = requested
  } else if (client.redirectUris.length === 1) redirectUri = client.redirectUris[0]!
  else throw new AuthorizationRefusal('redirect_uri', new InvalidRequestError('redirect_uri is required: the client registered several'))
  if (request.response_type !== 'code') {
    throw new AuthorizationRefusal('response_type', new UnsupportedResponseTypeError('response_type must be code'))
  }
  if (request.code_challenge_method !== 'S256') {
    throw new AuthorizationRefusal('code_challenge_method', new InvalidRequestError('code_challenge_method must be S256 (plain is not accepted)'))
  }
  if (!request.code_challenge || !S256_CHALLENGE.test(request.code_challenge)) {
    throw new AuthorizationRefusal('code_challenge', new InvalidRequestError('code_challenge must be the base64url SHA-256 of the code verifier'))
  }
  if (request.resource !== undefined && request.resource !== resourceOf(ctx.config)) {
    throw new AuthorizationRefusal('resource', new InvalidTargetError(`resource must be ${resourceOf(ctx.config)}`))
  }
  return { client, redirectUri }
}

/**
 * `GET /oauth/authorize`: checks the request, and answers where the browser goes next: the
 * console's consent screen with the same query.
 * @param query the request's query string, passed on as it came.
 * @throws OAuthError (a 400; never a redirect, to a registered URI or any other).
 */
export async function authorize(ctx: ServiceCtx, query: URLSearchParams): Promise<string> {
  const request: Partial<Record<string, string>> = {}
  for (const key of ['client_id', 'redirect_uri', 'response_type', 'code_challenge', 'code_challenge_method', 'resource']) {
    const values = query.getAll(key)
    if (values.length > 1) throw new InvalidRequestError(`${key} must not be repeated`)
    if (values.length) request[key] = values[0]
  }
  try {
    await checkAuthorization(ctx, request)
  } catch (error) {
    if (error instanceof AuthorizationRefusal) throw error.error
    throw error
  }
  return `${ctx.config.appUrl}${PATHS.consent}?${query.toString()}`
}

/** Whether `ctx` was authenticated by a sign-in: consent is the user's, never an integration's. */
function requireSession(ctx: AuthedCtx): void {
  if (ctx.auth.token.kind !== 'basic') throw new ForbiddenError('Consent is given with a sign-in (basic) token')
}

/** `redirectUri` with the answer's parameters added to its query. */
function answerTo(redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri)
  for (const [key, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(key, value)
  return url.href
}

/**
 * `POST /api/v1/oauth/consent`: the signed-in user's decision on an authorization request. The
 * request is checked again as `GET /oauth/authorize` checks it. Approved, a code (60 seconds, used
 * once) bound to the client, the redirect URI, the challenge, the user and the chosen workspace;
 * refused, `error=access_denied`. Either way with `state`, and `iss` (RFC 9207).
 * @throws ForbiddenError for an application token; ValidationError naming the refused field;
 *   NotFoundError for a workspace the user is not a member of.
 */
export async function consent(ctx: AuthedCtx, input: TOAuthConsentInput): Promise<TOAuthConsentResponse> {
  requireSession(ctx)
  let checked: CheckedAuthorization
  try {
    checked = await checkAuthorization(ctx, input)
  } catch (error) {
    if (error instanceof AuthorizationRefusal) throw new ValidationError([error.field], error.message)
    throw error
  }
  const iss = ctx.config.appUrl
  if (!input.approve) {
    return { data: { redirect_uri: answerTo(checked.redirectUri, { error: 'access_denied', state: input.state, iss }) } }
  }
  const { workspace } = await requireWorkspace(ctx, input.workspace_uuid, 'view')
  const code = await issueCode(ctx.em, {
    clientId: checked.client.id,
    userId: ctx.auth.user.id,
    workspaceId: workspace.id,
    redirectUri: checked.redirectUri,
    codeChallenge: input.code_challenge,
    resource: input.resource ?? null,
  })
  return { data: { redirect_uri: answerTo(checked.redirectUri, { code, state: input.state, iss }) } }
}

/**
 * `GET /api/v1/oauth/clients/{client_id}`: a registered client, for the consent screen.
 * @throws NotFoundError for an unknown client.
 */
export async function client(ctx: AuthedCtx, clientId: string): Promise<TOAuthClientResponse> {
  const found = await findClient(ctx.em, clientId)
  if (!found) throw new NotFoundError('OAuth client')
  const clientUri = found.metadata.client_uri
  return {
    data: {
      client_id: found.clientId,
      client_name: found.clientName,
      client_uri: typeof clientUri === 'string' ? clientUri : null,
      redirect_uris: found.redirectUris,
      created_at: iso(found.createdAt),
    },
  }
}

/** Whether `presented` is the secret whose hash is `hash` (compared in constant time). */
function sameSecret(presented: string, hash: string): boolean {
  return timingSafeEqual(Buffer.from(hashToken(presented)), Buffer.from(hash))
}

/** `value` URL-decoded as RFC 6749 (2.3.1) asks of Basic credentials, or null when malformed. */
function formDecoded(value: string): string | null {
  try {
    return decodeURIComponent(value.replaceAll('+', ' '))
  } catch {
    return null
  }
}

/**
 * The client of a token request (RFC 6749, 2.3): HTTP Basic credentials, else `client_id` (and
 * `client_secret`) in the body. A confidential client must present its secret, by either way.
 * @throws InvalidClientError (the route answers 401).
 */
async function authenticateClient(ctx: ServiceCtx, form: Record<string, string>, authorization: string | undefined): Promise<StoredClient> {
  let clientId = form.client_id
  let secret = form.client_secret
  if (authorization?.toLowerCase().startsWith('basic ')) {
    const decoded = Buffer.from(authorization.slice(6).trim(), 'base64').toString('utf8')
    const colon = decoded.indexOf(':')
    const id = colon > 0 ? formDecoded(decoded.slice(0, colon)) : null
    const password = colon > 0 ? formDecoded(decoded.slice(colon + 1)) : null
    if (id === null || password === null) throw new InvalidClientError('Malformed Basic credentials')
    if (clientId !== undefined && clientId !== id) throw new InvalidClientError('client_id differs from the Basic credentials')
    clientId = id
    secret = password
  }
  if (!clientId) throw new InvalidClientError('Client authentication is required (client_id)')
  const found = await findClient(ctx.em, clientId)
  if (!found) throw new InvalidClientError('Unknown client')
  if (found.secretHash !== null) {
    if (!secret) throw new InvalidClientError('This client must authenticate with its client_secret')
    if (!sameSecret(secret, found.secretHash)) throw new InvalidClientError('Client authentication failed')
  }
  return found
}

/** A PKCE code verifier (RFC 7636, 4.1): 43 to 128 unreserved characters. */
const CODE_VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/

/**
 * The resource a token request names (RFC 8707), which must be this server's `/mcp`, and that of
 * the grant when it named one.
 * @throws InvalidTargetError.
 */
function checkResource(ctx: ServiceCtx, requested: string | undefined, granted: string | null): string | null {
  if (requested === undefined) return granted
  if (requested !== resourceOf(ctx.config) || (granted !== null && granted !== requested)) {
    throw new InvalidTargetError(`resource must be ${granted ?? resourceOf(ctx.config)}`)
  }
  return requested
}

/** The token answer (RFC 6749, 5.1). */
const answer = (accessToken: string, refreshToken: string): OAuthTokens => ({
  access_token: accessToken,
  token_type: 'Bearer',
  expires_in: ACCESS_TOKEN_TTL_SECONDS,
  refresh_token: refreshToken,
})

/** What the token name in the list says: the client's name. */
const tokenName = (client: StoredClient) => `${client.clientName ?? 'MCP client'} (OAuth)`.slice(0, 255)

/**
 * `POST /oauth/token`: `authorization_code` (with the PKCE verifier of its S256 challenge, the
 * redirect URI it was issued for when that is sent) or `refresh_token` (rotated: the token used
 * is replaced; refused once its access token is revoked). Answers a new application access token
 * bound to the consented workspace, valid {@link ACCESS_TOKEN_TTL_SECONDS}, and a refresh token.
 * @param form the form-encoded body's fields (a repeated field is refused by the route).
 * @param authorization the request's Authorization header (client_secret_basic).
 * @throws OAuthError: `invalid_client`, `invalid_request`, `invalid_grant`, `invalid_target`, `unsupported_grant_type`.
 */
export async function token(ctx: ServiceCtx, form: Record<string, string>, authorization: string | undefined): Promise<OAuthTokens> {
  const grantType = form.grant_type
  if (!grantType) throw new InvalidRequestError('grant_type is required')
  if (grantType !== 'authorization_code' && grantType !== 'refresh_token') {
    throw new UnsupportedGrantTypeError('grant_type must be authorization_code or refresh_token')
  }
  const found = await authenticateClient(ctx, form, authorization)
  return grantType === 'authorization_code' ? exchangeCode(ctx, found, form) : refresh(ctx, found, form)
}

/** The `authorization_code` grant of {@link token}. */
async function exchangeCode(ctx: ServiceCtx, found: StoredClient, form: Record<string, string>): Promise<OAuthTokens> {
  if (!form.code) throw new InvalidRequestError('code is required')
  if (!form.code_verifier) throw new InvalidRequestError('code_verifier is required')
  if (!CODE_VERIFIER.test(form.code_verifier)) throw new InvalidRequestError('code_verifier must be 43 to 128 unreserved characters')
  const { code, code_verifier: verifier } = form
  // The code is spent by this request whatever its outcome: a wrong verifier does not leave it to try again.
  const grant = await ctx.em.transactional((em) => takeCode(em, code))
  if (!grant || grant.clientId !== found.id) throw new InvalidGrantError('The code is unknown, expired, already used or not this client’s')
  if (!(await verifyChallenge(verifier, grant.codeChallenge))) throw new InvalidGrantError('code_verifier does not match the code_challenge')
  if (form.redirect_uri !== undefined && form.redirect_uri !== grant.redirectUri) {
    throw new InvalidGrantError('redirect_uri differs from the one the code was issued for')
  }
  const resource = checkResource(ctx, form.resource, grant.resource)
  return ctx.em.transactional(async (em) => {
    const issued = await tokens.issueGranted(em, ctx, {
      userId: grant.userId,
      workspaceId: grant.workspaceId,
      name: tokenName(found),
      expiresAt: new Date(Date.now() + ACCESS_TOKEN_TTL_SECONDS * 1000),
    })
    const refreshToken = await issueRefreshToken(em, found.id, issued.id, resource)
    return answer(issued.plaintext, refreshToken)
  })
}

/** The `refresh_token` grant of {@link token}. */
async function refresh(ctx: ServiceCtx, found: StoredClient, form: Record<string, string>): Promise<OAuthTokens> {
  if (!form.refresh_token) throw new InvalidRequestError('refresh_token is required')
  const presented = form.refresh_token
  const renewed = await ctx.em.transactional(async (em) => {
    const kept = await takeRefreshToken(em, presented)
    if (!kept || kept.clientId !== found.id) throw new InvalidGrantError('The refresh token is unknown, expired, already used or not this client’s')
    const resource = checkResource(ctx, form.resource, kept.resource)
    const access = await tokens.renewGranted(em, kept.accessTokenId, new Date(Date.now() + ACCESS_TOKEN_TTL_SECONDS * 1000))
    if (!access) throw new InvalidGrantError('The access token of this grant was revoked')
    const refreshToken = await issueRefreshToken(em, found.id, kept.accessTokenId, resource)
    return { tokens: answer(access.plaintext, refreshToken), userId: access.userId }
  })
  await ctx.deps.authCache.invalidate({ users: [renewed.userId] })
  return renewed.tokens
}
