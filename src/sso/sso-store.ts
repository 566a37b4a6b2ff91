/**
 * What single sign-on keeps in the database (docs/api/sso.md): sign-ins waiting for the
 * provider's answer (10 minutes), one-time codes of finished sign-ins (60 seconds), both keyed by
 * a SHA-256 of their value and deleted when used; and the identities linked to users. No sweep
 * runs for the short-lived rows: writing one deletes the expired ones of its table (an indexed
 * range, near empty), so the tables hold at most the last few minutes' sign-ins.
 */
import { randomBytes } from 'node:crypto'
import { queries, type Em } from '../platform/db.ts'
import { hashToken } from '../platform/tokens.ts'
import type { PendingSignIn } from './oidc-client.ts'

/** How long a sign-in may stay at the provider. */
export const STATE_TTL_MS = 10 * 60_000
/** How long the console has to exchange a one-time code. */
export const LOGIN_CODE_TTL_MS = 60_000

/** Keeps a new sign-in's secrets and console path until the provider answers. */
export async function saveState(em: Em, pending: PendingSignIn, redirect: string): Promise<void> {
  const db = queries(em)
  const now = new Date()
  await db.deleteFrom('oidc_states').where('expires_at', '<=', now).execute()
  await db
    .insertInto('oidc_states')
    .values({
      state_hash: hashToken(pending.state),
      code_verifier: pending.codeVerifier,
      nonce: pending.nonce,
      redirect,
      expires_at: new Date(now.getTime() + STATE_TTL_MS),
      created_at: now,
    })
    .execute()
}

/**
 * The sign-in of `state`, deleted in the same statement so that it is used once, whoever asks
 * concurrently; null when unknown, used or expired.
 */
export async function takeState(em: Em, state: string): Promise<(PendingSignIn & { redirect: string }) | null> {
  const row = await queries(em)
    .deleteFrom('oidc_states')
    .where('state_hash', '=', hashToken(state))
    .returning(['code_verifier', 'nonce', 'redirect', 'expires_at'])
    .executeTakeFirst()
  if (!row || row.expires_at.getTime() <= Date.now()) return null
  return { state, nonce: row.nonce, codeVerifier: row.code_verifier, redirect: row.redirect }
}

/** A new one-time code of user `userId` (its hash stored with `em`, in the caller's transaction). */
export async function issueLoginCode(em: Em, userId: number): Promise<string> {
  const db = queries(em)
  const now = new Date()
  const code = randomBytes(32).toString('base64url')
  await db.deleteFrom('oidc_login_codes').where('expires_at', '<=', now).execute()
  await db
    .insertInto('oidc_login_codes')
    .values({ code_hash: hashToken(code), user_id: userId, expires_at: new Date(now.getTime() + LOGIN_CODE_TTL_MS), created_at: now })
    .execute()
  return code
}

/** The user of one-time code `code`, which is deleted in the same statement; null when unknown, used or expired. */
export async function takeLoginCode(em: Em, code: string): Promise<number | null> {
  const row = await queries(em)
    .deleteFrom('oidc_login_codes')
    .where('code_hash', '=', hashToken(code))
    .returning(['user_id', 'expires_at'])
    .executeTakeFirst()
  return row && row.expires_at.getTime() > Date.now() ? row.user_id : null
}

/** The user linked to the provider identity (`issuer`, `subject`), or null. */
export async function linkedUser(em: Em, issuer: string, subject: string): Promise<number | null> {
  const row = await queries(em)
    .selectFrom('user_identities')
    .select('user_id')
    .where('issuer', '=', issuer)
    .where('subject', '=', subject)
    .executeTakeFirst()
  return row?.user_id ?? null
}

/** Links the provider identity to user `userId`. @throws the unique violation when it is linked already (a concurrent sign-in). */
export async function linkIdentity(em: Em, userId: number, identity: { issuer: string; subject: string; email: string }): Promise<void> {
  await queries(em)
    .insertInto('user_identities')
    .values({ user_id: userId, issuer: identity.issuer, subject: identity.subject, email: identity.email, created_at: new Date() })
    .execute()
}
