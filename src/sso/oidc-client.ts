/**
 * The OpenID Connect relying party (docs/api/sso.md, "The flow"), through `openid-client`: the
 * provider's metadata discovered from its issuer on first use and kept, the authorization URL
 * (code flow, PKCE S256, `state`, `nonce`), and the code exchanged for a verified ID token.
 *
 * openid-client 6 checks issuer, audience, nonce and expiry of an ID token from the token
 * endpoint, but skips its signature unless told otherwise (the TLS connection to the token
 * endpoint is deemed enough); `enableNonRepudiationChecks` makes it verify the signature with the
 * provider's JWKS as well, so a token altered between the provider and us is refused.
 *
 * Every failure of the provider becomes a {@link SignInFailure} with its reason code; what
 * openid-client says of it is logged by the caller, never the client secret (openid-client keeps
 * it in the client authentication it is given, which no error carries).
 */
import * as oidc from 'openid-client'
import type { OidcConfig } from '../platform/config.ts'

/** Why a sign-in at the provider did not end with a usable identity (the console's `error=`). */
export type SignInFailureReason =
  | 'access_denied'
  | 'provider_error'
  | 'provider_unavailable'
  | 'invalid_id_token'
  | 'email_missing'
  | 'email_not_verified'
  | 'sign_up_disabled'

/** A sign-in that ends at the console's sign-in screen with `error=<reason>`; `detail` is for the log only. */
export class SignInFailure extends Error {
  override name = 'SignInFailure'
  constructor(
    readonly reason: SignInFailureReason,
    readonly detail: string,
  ) {
    super(`single sign-on failed: ${reason}`)
  }
}

/** Seconds one request to the provider may take (discovery, token, JWKS, userinfo). */
const PROVIDER_TIMEOUT_SECONDS = 10

/**
 * Each configuration's discovered client, kept for the life of its configuration object (one per
 * process; tests start several). A failed discovery is not kept: the next sign-in tries again.
 */
const clients = new WeakMap<OidcConfig, Promise<oidc.Configuration>>()

/** The provider's client of `config`, discovering it on first use. */
function clientOf(config: OidcConfig): Promise<oidc.Configuration> {
  let client = clients.get(config)
  if (!client) {
    client = discover(config)
    clients.set(config, client)
    client.catch(() => clients.delete(config))
  }
  return client
}

async function discover(config: OidcConfig): Promise<oidc.Configuration> {
  const auth = config.clientSecret === undefined ? oidc.None() : oidc.ClientSecretPost(config.clientSecret)
  const execute = [oidc.enableNonRepudiationChecks, ...(config.allowHttp ? [oidc.allowInsecureRequests] : [])]
  try {
    return await oidc.discovery(new URL(config.issuer), config.clientId, undefined, auth, { execute, timeout: PROVIDER_TIMEOUT_SECONDS })
  } catch (error) {
    // Whatever went wrong (unreachable, not JSON, an issuer that does not match), there is no provider to send anyone to.
    throw new SignInFailure('provider_unavailable', `discovery: ${describe(error)}`)
  }
}

/** What a sign-in keeps while the person is at the provider (stored with its state). */
export interface PendingSignIn {
  state: string
  nonce: string
  codeVerifier: string
}

/**
 * The provider's authorization URL of a new sign-in and the secrets its answer must match.
 * @throws SignInFailure (`provider_unavailable`) when the provider's metadata cannot be discovered.
 */
export async function authorizationUrl(config: OidcConfig, redirectUri: string): Promise<{ url: URL; pending: PendingSignIn }> {
  const client = await clientOf(config)
  const pending = { state: oidc.randomState(), nonce: oidc.randomNonce(), codeVerifier: oidc.randomPKCECodeVerifier() }
  const url = oidc.buildAuthorizationUrl(client, {
    redirect_uri: redirectUri,
    scope: config.scopes,
    response_type: 'code',
    code_challenge: await oidc.calculatePKCECodeChallenge(pending.codeVerifier),
    code_challenge_method: 'S256',
    state: pending.state,
    nonce: pending.nonce,
  })
  return { url, pending }
}

/** The person the provider vouches for: its `sub`, and the e-mail and names it gave. */
export interface ProviderIdentity {
  issuer: string
  subject: string
  email: string | null
  emailVerified: boolean
  name: string | null
  givenName: string | null
  familyName: string | null
}

/**
 * Exchanges the authorization response at `callbackUrl` (its code, with the PKCE verifier) and
 * verifies the ID token: signature through the provider's JWKS, issuer, audience, nonce, expiry.
 * The e-mail and its verification come from the ID token, else from the userinfo endpoint (many
 * providers put profile claims only there when an access token is issued as well).
 * @throws SignInFailure with the reason: `provider_unavailable`, `provider_error` or `invalid_id_token`.
 */
export async function exchangeCode(config: OidcConfig, callbackUrl: URL, pending: PendingSignIn): Promise<ProviderIdentity> {
  const client = await clientOf(config)
  try {
    const tokens = await oidc.authorizationCodeGrant(client, callbackUrl, {
      pkceCodeVerifier: pending.codeVerifier,
      expectedState: pending.state,
      expectedNonce: pending.nonce,
      idTokenExpected: true,
    })
    const claims = tokens.claims()
    if (!claims) throw new SignInFailure('invalid_id_token', 'no ID token in the token response')
    let profile: Record<string, unknown> = claims
    if (typeof claims.email !== 'string' || claims.email_verified === undefined) {
      if (client.serverMetadata().userinfo_endpoint) {
        profile = { ...(await oidc.fetchUserInfo(client, tokens.access_token, claims.sub)), ...definedOf(claims) }
      }
    }
    return identityOf(client.serverMetadata().issuer, claims.sub, profile)
  } catch (error) {
    throw failureOf(error)
  }
}

/** The claims of `claims` that have a value (the ID token's win over userinfo's). */
const definedOf = (claims: Record<string, unknown>) => Object.fromEntries(Object.entries(claims).filter(([, value]) => value !== undefined))

const stringOf = (value: unknown): string | null => (typeof value === 'string' && value.trim() !== '' ? value.trim() : null)

/**
 * `email_verified` as providers send it: a boolean, or the string "true" (some send strings).
 * Microsoft Entra ID sends no `email_verified`; its optional claim `xms_edov` (the e-mail's domain
 * is verified by the tenant) says the same and is taken when `email_verified` is absent
 * (docs/operations.md, "Single sign-on").
 */
function verifiedOf(claims: Record<string, unknown>): boolean {
  const flag = claims.email_verified ?? claims.xms_edov
  return flag === true || flag === 'true'
}

function identityOf(issuer: string, subject: string, claims: Record<string, unknown>): ProviderIdentity {
  return {
    issuer,
    subject,
    email: stringOf(claims.email),
    emailVerified: verifiedOf(claims),
    name: stringOf(claims.name),
    givenName: stringOf(claims.given_name),
    familyName: stringOf(claims.family_name),
  }
}

/** An error as one log line: its class, message and openid-client's code. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const code = 'code' in error && typeof error.code === 'string' ? ` [${error.code}]` : ''
  return `${error.name}: ${error.message}${code}`
}

/** openid-client's codes of an answer that is no OAuth answer at all: the provider is broken or not the provider. */
const UNUSABLE_ANSWER = new Set(['OAUTH_RESPONSE_IS_NOT_CONFORM', 'OAUTH_RESPONSE_IS_NOT_JSON', 'OAUTH_PARSE_ERROR'])

/**
 * The reason code of an error of openid-client: a network failure, a timeout or an answer that is
 * not OAuth is `provider_unavailable`; an OAuth error the provider answered is `provider_error`;
 * everything else failed a check of the token response or its ID token.
 */
function failureOf(error: unknown): SignInFailure {
  if (error instanceof SignInFailure) return error
  const detail = describe(error)
  if (error instanceof oidc.ResponseBodyError || error instanceof oidc.AuthorizationResponseError) {
    return new SignInFailure('provider_error', `${detail} (${error.error})`)
  }
  const code = error instanceof oidc.ClientError ? error.code : undefined
  // fetch's own failures are TypeErrors without a code; openid-client's argument errors carry one.
  const unreachable =
    (error instanceof TypeError && !('code' in error)) ||
    (error instanceof DOMException && (error.name === 'TimeoutError' || error.name === 'AbortError'))
  if (unreachable || (code !== undefined && UNUSABLE_ANSWER.has(code))) return new SignInFailure('provider_unavailable', detail)
  return new SignInFailure('invalid_id_token', detail)
}
