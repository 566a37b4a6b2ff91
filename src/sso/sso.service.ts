/**
 * Single sign-on with an OpenID Connect provider (docs/api/sso.md): which ways of signing in the
 * server offers, the start of a sign-in (off to the provider), its callback (back from the
 * provider: the person found, linked or made, and a one-time code for the console) and the code's
 * exchange for a basic token.
 */
import { timingSafeEqual } from 'node:crypto'
import { UniqueConstraintViolationException } from '@mikro-orm/core'
import { z } from 'zod'
import type { ServiceCtx } from '../context.ts'
import type { Config, OidcConfig } from '../platform/config.ts'
import { NotFoundError, ValidationError } from '../platform/errors.ts'
import { audit } from '../access/audit.ts'
import { storableText } from '../access/wire.ts'
import { usersInScope } from '../access/resource-access.ts'
import { auth } from '../tenancy/index.ts'
import { CONSOLE_SIGN_IN, consoleUrl, isConsolePath } from './console-path.ts'
import { authorizationUrl, exchangeCode, SignInFailure, type ProviderIdentity } from './oidc-client.ts'
import { issueLoginCode, linkedUser, linkIdentity, saveState, takeLoginCode, takeState } from './sso-store.ts'
import type { TAuthProvidersResponse, TOidcTokenInput } from './sso.schema.ts'

/** The path of the callback, under APP_URL: the redirect URI to register at the provider. */
export const CALLBACK_PATH = '/api/v1/auth/oidc/callback'

/** The redirect URI this server sends and the provider must have registered. */
export const redirectUriOf = (config: Config) => `${config.appUrl}${CALLBACK_PATH}`

/** `GET /api/v1/auth/providers`: password sign-in on or off, and the provider's button label. */
export function providers(config: Config): TAuthProvidersResponse {
  return { data: { password: config.passwordSignIn, oidc: config.oidc ? { name: config.oidc.name } : null } }
}

/**
 * The provider's settings.
 * @throws NotFoundError (404) when single sign-on is not configured.
 */
export function requireOidc(config: Config): OidcConfig {
  if (!config.oidc) throw new NotFoundError('Single sign-on')
  return config.oidc
}

/** Where a sign-in that failed sends the browser: the console's sign-in screen with the reason. */
const failedUrl = (config: Config, failure: SignInFailure) => consoleUrl(config.appUrl, CONSOLE_SIGN_IN, { error: failure.reason })

/**
 * `GET /api/v1/auth/oidc`: a new sign-in, kept 10 minutes for its callback. `location` is the
 * provider's authorization URL, or the console's sign-in with `error=provider_unavailable` when
 * the provider cannot be discovered; `state` is what the browser must bring back (null then).
 * @throws NotFoundError when single sign-on is off; ValidationError (`redirect`) for a path that is
 *   not the console's.
 */
export async function start(ctx: ServiceCtx, redirect: string | undefined): Promise<{ location: string; state: string | null }> {
  const oidc = requireOidc(ctx.config)
  const path = redirect ?? CONSOLE_SIGN_IN
  if (!isConsolePath(path)) {
    throw new ValidationError(['redirect'], 'redirect must be a path of the console on this server, starting with /console')
  }
  try {
    const { url, pending } = await authorizationUrl(oidc, redirectUriOf(ctx.config))
    await saveState(ctx.em, pending, path)
    return { location: url.href, state: pending.state }
  } catch (error) {
    if (!(error instanceof SignInFailure)) throw error
    ctx.log.warn({ reason: error.reason, detail: error.detail }, 'single sign-on could not start')
    return { location: failedUrl(ctx.config, error), state: null }
  }
}

/** Whether the state the provider sent back is the one this browser started with (compared in constant time). */
function sameState(sent: string, kept: string | null): boolean {
  const a = Buffer.from(sent)
  const b = Buffer.from(kept ?? '')
  return a.length === b.length && timingSafeEqual(a, b)
}

/** The refusal of a callback whose sign-in is not one this browser started in the last 10 minutes. */
const unknownState = () =>
  new ValidationError(['state'], 'This sign-in is unknown, expired, already finished or was started in another browser; sign in again')

/**
 * `GET /api/v1/auth/oidc/callback`: the provider's answer to a sign-in. Its state must be the one
 * `browserState` (this browser's cookie) holds and unused, within 10 minutes. Answers where to
 * send the browser: the sign-in's console path with `code=<one-time code>`, or the console's
 * sign-in with `error=<reason>` when the provider refused or failed, the ID token failed a check,
 * the e-mail is missing or unverified, or sign-up is off (then nothing was made or linked).
 * @param query the callback's whole query, passed on to the checks (`iss`, provider extras).
 * @throws NotFoundError when single sign-on is off; ValidationError (`state`) for a wrong, expired
 *   or used state.
 */
export async function callback(ctx: ServiceCtx, query: URLSearchParams, browserState: string | null): Promise<string> {
  const oidc = requireOidc(ctx.config)
  const state = query.get('state')
  if (!state || !sameState(state, browserState)) throw unknownState()
  const pending = await takeState(ctx.em, state)
  if (!pending) throw unknownState()
  try {
    const error = query.get('error')
    if (error)
      throw new SignInFailure(error === 'access_denied' ? 'access_denied' : 'provider_error', `the provider answered error=${error}`)
    const callbackUrl = new URL(redirectUriOf(ctx.config))
    callbackUrl.search = query.toString()
    const identity = await exchangeCode(oidc, callbackUrl, pending)
    const code = await signInAs(ctx, oidc, identity)
    return consoleUrl(ctx.config.appUrl, pending.redirect, { code })
  } catch (error) {
    if (!(error instanceof SignInFailure)) throw error
    ctx.log.warn({ reason: error.reason, detail: error.detail }, 'single sign-on refused')
    return failedUrl(ctx.config, error)
  }
}

const Email = z.email().max(320)

/**
 * The user of `identity`, in one transaction with the one-time code: the one linked to it, else
 * the one with its (verified) e-mail, who is linked to it, else a new user and primary workspace
 * when sign-up is allowed. Two first sign-ins of one identity at once: the second's link violates
 * the unique (issuer, subject), and its retry finds the first's.
 * @throws SignInFailure (`email_missing`, `email_not_verified`, `sign_up_disabled`), rolling back all of it.
 */
async function signInAs(ctx: ServiceCtx, oidc: OidcConfig, identity: ProviderIdentity): Promise<string> {
  const email = identity.email?.toLowerCase() ?? ''
  if (!Email.safeParse(email).success)
    throw new SignInFailure('email_missing', 'the provider gave no usable e-mail address (scope "email"?)')
  if (!identity.emailVerified) throw new SignInFailure('email_not_verified', 'the provider does not say the e-mail address is verified')
  // OpenID Connect bounds `sub` to 255 ASCII characters; anything else could not be stored.
  if (identity.subject.length > 255 || identity.issuer.length > 512 || storableText(identity.subject) !== identity.subject) {
    throw new SignInFailure('invalid_id_token', "the ID token's sub or iss is longer than OpenID Connect allows")
  }
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await ctx.em.transactional(async (em) => {
        const scoped = { em, serviceId: ctx.serviceId }
        let userId = await linkedUser(em, identity.issuer, identity.subject)
        if (userId === null) {
          const existing = await usersInScope(scoped).select('id').where('email', '=', email).executeTakeFirst()
          userId = existing?.id ?? (await signUp(em, ctx, oidc, identity, email))
          await linkIdentity(em, userId, { issuer: identity.issuer, subject: identity.subject, email })
          await audit(em, ctx, {
            action: 'auth.link_identity',
            actor: { type: 'user', userId, tokenKind: null, tokenUuid: null, serviceId: ctx.serviceId },
            workspaceId: await primaryWorkspaceOf(em, ctx.serviceId, userId),
            resource: { type: 'user', id: userId },
            changes: {
              issuer: { from: null, to: identity.issuer },
              subject: { from: null, to: identity.subject },
              email: { from: null, to: email },
            },
          })
        }
        return issueLoginCode(em, userId)
      })
    } catch (error) {
      if (!(error instanceof UniqueConstraintViolationException) || attempt > 1) throw error
    }
  }
}

/** A new user (no password: {@link auth.NO_PASSWORD}) and their primary workspace, named as the provider names them. */
async function signUp(em: ServiceCtx['em'], ctx: ServiceCtx, oidc: OidcConfig, identity: ProviderIdentity, email: string): Promise<number> {
  if (!oidc.allowSignUp) throw new SignInFailure('sign_up_disabled', 'no user has this e-mail and OIDC_ALLOW_SIGN_UP=false')
  // The provider's names as text PostgreSQL can store, within the columns' length.
  const clean = (value: string) => storableText(value).slice(0, 255)
  const joined = [identity.givenName, identity.familyName].filter(Boolean).join(' ')
  const name = clean(identity.name ?? (joined || email.slice(0, email.indexOf('@'))))
  const split = auth.splitName(name)
  return auth.createUserWithWorkspace(
    em,
    ctx,
    {
      name,
      firstName: clean(identity.givenName ?? split.first),
      lastName: clean(identity.familyName ?? split.last),
      email,
      passwordHash: auth.NO_PASSWORD,
    },
    { method: { from: null, to: 'oidc' } },
  )
}

/** The primary workspace of user `userId` (the workspace of their sign-in events), or null. */
async function primaryWorkspaceOf(em: ServiceCtx['em'], serviceId: string | null, userId: number): Promise<number | null> {
  const row = await usersInScope({ em, serviceId }).select('primary_workspace_id').where('id', '=', userId).executeTakeFirst()
  return row?.primary_workspace_id ?? null
}

/**
 * `POST /api/v1/auth/oidc/token`: the one-time code of a finished sign-in for a basic token, the
 * answer of `POST /api/v1/auth/sign-in` (docs/api/authentication.md). The code is used up
 * whatever follows.
 * @throws NotFoundError when single sign-on is off; ValidationError (`code`) for an unknown,
 *   expired or used code, or one of another service scope.
 */
export async function exchangeLoginCode(ctx: ServiceCtx, input: TOidcTokenInput): Promise<auth.SignInResult> {
  requireOidc(ctx.config)
  const userId = await takeLoginCode(ctx.em, input.code)
  const user = userId === null ? undefined : await usersInScope(ctx).select('id').where('id', '=', userId).executeTakeFirst()
  if (!user) throw new ValidationError(['code'], 'This code is unknown, expired or already used; sign in again')
  return auth.signedIn(ctx, user.id, 'oidc')
}
