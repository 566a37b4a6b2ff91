/**
 * Authentication (docs/api/authentication.md): sign-up, sign-in, logout, and resolving a bearer token to
 * the caller in one query.
 */
import type { AuthContext, ServiceCtx } from '../context.ts'
import { hash as argon2Hash, verify as argon2Verify } from '@node-rs/argon2'
import { AccessToken, User, Workspace, WorkspaceMember, type WorkspaceRole } from '../../entities/index.ts'
import { ForbiddenError, UnauthorizedError, ValidationError } from '../platform/errors.ts'
import { toUser, type UserRow, type WorkspaceRow } from '../access/user-workspace.schema.ts'
import { usersInScope } from '../access/resource-access.ts'
import { prepared, queries, type Em } from '../platform/db.ts'
import { authCacheKey } from '../platform/auth-cache.ts'
import { unprefix, userColumns, workspaceColumns, toDate } from '../platform/sql.ts'
import { hashToken, newToken } from '../platform/tokens.ts'
import { uniqueSlug } from '../platform/slugs.ts'
import { audit, auditAlone, type AuditActor, type Changes } from '../access/audit.ts'

/** argon2id with the OWASP parameters (19 MiB, 2 passes). */
const ARGON2 = { algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const
/** Verified against when the e-mail is unknown, so both failures take the same time. */
const DUMMY_HASH = await argon2Hash('not-a-real-password', ARGON2)

/**
 * The `password_hash` of a user who has no password (made by single sign-on, docs/api/sso.md).
 * The column is not nullable, and this is no argon2 hash (those start with `$argon2`), so no
 * password can match it: sign-in treats it as a wrong password without verifying anything
 * against it (argon2 would throw on it).
 */
export const NO_PASSWORD = '!no-password'

/** Hashes a password with argon2id. */
export const hashPassword = (password: string) => argon2Hash(password, ARGON2)

/** How often `last_used_at` is written at most, so authenticated reads stay reads. */
const LAST_USED_RESOLUTION_MS = 60_000

const AUTH_SQL = `
select t.id::float8 as "t_id", t.uuid as "t_uuid", t.kind as "t_kind", t.name as "t_name", t.prefix as "t_prefix",
       t.abilities as "t_abilities", t.workspace_id::float8 as "t_workspaceId", bw.uuid as "t_workspaceUuid",
       t.expires_at as "t_expiresAt", t.last_used_at as "t_lastUsedAt", t.created_at as "t_createdAt",
       ${userColumns('u', 'u_')}, ${workspaceColumns('w', 'w_')}, pm.role as "primaryRole"
from access_tokens t
join users u on u.id = t.user_id
left join workspaces w on w.id = u.primary_workspace_id and w.deleted_at is null
left join workspace_members pm on pm.workspace_id = w.id and pm.user_id = u.id
left join workspaces bw on bw.id = t.workspace_id
where t.token_hash = ? and t.revoked_at is null and (t.expires_at is null or t.expires_at > now())
  and u.service_id is not distinct from ?`
/** Runs on every authenticated request: prepared once per connection on PostgreSQL. */
const authQuery = prepared('authenticate', AUTH_SQL)

const BEARER = /^Bearer +([A-Za-z0-9_-]{16,200})$/i

/**
 * Resolves `Authorization: Bearer <token>` to the caller: from this process's token cache
 * (src/platform/auth-cache.ts) when it holds the token, else one indexed query for token, user
 * and primary workspace, whose answer is then cached. A token of another service scope is as
 * unknown as a wrong one (the scope is part of the cache key and of the query).
 * The answer is frozen: concurrent requests with the same token share it.
 * @throws UnauthorizedError for a missing, malformed, unknown, expired or revoked token.
 */
export async function authenticate(ctx: ServiceCtx): Promise<AuthContext> {
  const header = ctx.headers.authorization
  const match = header ? BEARER.exec(header) : null
  if (!match) throw new UnauthorizedError(header ? 'Invalid bearer token' : 'Missing bearer token')
  const tokenHash = hashToken(match[1])
  const key = authCacheKey(tokenHash, ctx.serviceId)
  const auth = ctx.deps.authCache.get(key) ?? (await loadAuth(ctx, key, tokenHash))
  recordUse(ctx, key, auth)
  return auth
}

/** The authentication query; caches a hit. */
async function loadAuth(ctx: ServiceCtx, key: string, tokenHash: string): Promise<AuthContext> {
  const cache = ctx.deps.authCache
  const generation = cache.generation
  const rows = await authQuery(ctx.deps.orm, () => ctx.em, [tokenHash, ctx.serviceId])
  const row = rows[0]
  if (!row) throw new UnauthorizedError('Invalid, expired or revoked token')
  const token = unprefix<AuthContext['token']>(row, 't_')
  const user = unprefix<UserRow>(row, 'u_')
  const primary = row.w_uuid ? unprefix<WorkspaceRow>(row, 'w_') : null
  // Instants as Dates once here, rather than parsing PostgreSQL's text form on every cached use.
  token.expiresAt = token.expiresAt === null ? null : toDate(token.expiresAt)
  token.lastUsedAt = token.lastUsedAt === null ? null : toDate(token.lastUsedAt)
  token.createdAt = toDate(token.createdAt)
  user.createdAt = toDate(user.createdAt)
  user.updatedAt = toDate(user.updatedAt)
  if (primary) {
    primary.createdAt = toDate(primary.createdAt)
    primary.updatedAt = toDate(primary.updatedAt)
  }
  const primaryRole = primary && row.primaryRole ? (String(row.primaryRole) as WorkspaceRole) : null
  const auth = freezeAuth({ user, primaryWorkspace: primary, primaryRole, token })
  cache.set(key, auth, generation)
  return auth
}

/**
 * Writes `last_used_at` when the stored one is more than a minute old, without awaiting it (a
 * bookkeeping write must not slow or fail the request it belongs to). The cached caller gets the
 * new time, so later requests served from the cache do not write again; this request still
 * answers the time it found.
 */
function recordUse(ctx: ServiceCtx, key: string, auth: AuthContext): void {
  const lastUsed = auth.token.lastUsedAt ? toDate(auth.token.lastUsedAt).getTime() : 0
  const now = Date.now()
  if (now - lastUsed <= LAST_USED_RESOLUTION_MS) return
  ctx.deps.authCache.replace(key, freezeAuth({ ...auth, token: { ...auth.token, lastUsedAt: new Date(now) } }))
  queries(ctx.deps.orm.em.fork())
    .updateTable('access_tokens')
    .set((eb) => ({ last_used_at: eb.fn<Date>('now') }))
    .where('id', '=', auth.token.id)
    .execute()
    .catch((error: unknown) => ctx.log.warn({ err: error }, 'could not record token use'))
}

/** Freezes a caller (and the objects it holds) so that no request can change what others share. */
function freezeAuth(auth: AuthContext): AuthContext {
  Object.freeze(auth.user)
  Object.freeze(auth.token.abilities)
  Object.freeze(auth.token)
  if (auth.primaryWorkspace) {
    deepFreeze(auth.primaryWorkspace.metadata)
    Object.freeze(auth.primaryWorkspace)
  }
  return Object.freeze(auth)
}

function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return
  for (const child of Object.values(value)) deepFreeze(child)
  Object.freeze(value)
}

/** The sign-in answer (docs/api/authentication.md). */
export interface SignInResult {
  data: { access_token: string; token_type: 'Bearer'; expires_at: string; user: ReturnType<typeof toUser> }
}

/** The actor of a sign-in's audit event: the user signing in, with the token they get (null: none, a failure). */
const signInActor = (ctx: ServiceCtx, userId: number | null, tokenUuid: string | null): AuditActor => ({
  type: 'user',
  userId,
  tokenKind: tokenUuid ? 'basic' : null,
  tokenUuid,
  serviceId: ctx.serviceId,
})

/** The primary workspace of user `userId` (the workspace of their sign-in events), or null. */
async function primaryWorkspaceId(em: ServiceCtx['em'], userId: number): Promise<number | null> {
  const [row] = await em.execute<{ id: number | null }[]>(`select primary_workspace_id::float8 as id from users where id = ?`, [userId])
  return row?.id ?? null
}

/** A new basic token of `userId`, with its `auth.sign_in` audit event (`method`: how they signed in). */
async function issueBasicToken(ctx: ServiceCtx, userId: number, method: string): Promise<{ plaintext: string; expiresAt: Date }> {
  const token = newToken('basic')
  const expiresAt = new Date(Date.now() + ctx.config.basicTokenTtlDays * 86_400_000)
  await ctx.em.transactional(async (em) => {
    const created = em.create(AccessToken, {
      user: userId,
      kind: 'basic',
      name: 'sign-in',
      tokenHash: token.hash,
      prefix: token.prefix,
      abilities: ['read', 'write'],
      serviceId: ctx.serviceId,
      expiresAt,
    })
    await em.flush()
    await audit(em, ctx, {
      action: 'auth.sign_in',
      actor: signInActor(ctx, userId, created.uuid),
      workspaceId: await primaryWorkspaceId(em, userId),
      resource: { type: 'user', id: userId },
      changes: { method: { from: null, to: method } },
    })
  })
  return { plaintext: token.plaintext, expiresAt }
}

/**
 * Issues a basic token of user `userId` and answers it as sign-in does (docs/api/authentication.md),
 * with its `auth.sign_in` event; `method` says how they signed in (`password`, `oidc`).
 */
export async function signedIn(ctx: ServiceCtx, userId: number, method: string): Promise<SignInResult> {
  const { plaintext, expiresAt } = await issueBasicToken(ctx, userId, method)
  const [row] = await ctx.em.execute(
    `select ${userColumns('u', 'u_')}, ${workspaceColumns('w', 'w_')} from users u
     left join workspaces w on w.id = u.primary_workspace_id and w.deleted_at is null where u.id = ?`,
    [userId],
  )
  const user = unprefix<UserRow>(row, 'u_')
  const primary = row.w_uuid ? unprefix<WorkspaceRow>(row, 'w_') : null
  return {
    data: {
      access_token: plaintext,
      token_type: 'Bearer',
      expires_at: expiresAt.toISOString(),
      user: toUser(user, primary, userId, ctx.config.appUrl),
    },
  }
}

/** Input of sign-up. */
export interface SignUpInput {
  name: string
  email: string
  password: string
  first_name?: string
  last_name?: string
}

/** Splits a display name into first and last name at the first space. */
export function splitName(name: string): { first: string; last: string } {
  const trimmed = name.trim()
  const space = trimmed.indexOf(' ')
  return space < 0 ? { first: trimmed, last: '' } : { first: trimmed.slice(0, space), last: trimmed.slice(space + 1).trim() }
}

/** A user to create: names and e-mail as stored (trimmed, e-mail lower-cased), and the password's hash. */
export interface NewUser {
  name: string
  firstName: string
  lastName: string
  email: string
  /** An argon2id hash, or {@link NO_PASSWORD} for a user who signs in only through a provider. */
  passwordHash: string
}

/**
 * Creates a user and their primary workspace (they own it, docs/api/tenancy.md) with `em`, which
 * must be in a transaction, and records their `auth.sign_up` event in it; `changes` adds to the
 * event's fields (how they signed up). Sign-up and single sign-on (docs/api/sso.md) both make
 * users through here.
 * @returns the new user's id.
 * @throws the insert's error when the e-mail is taken in the scope (a unique index), which rolls
 *   the transaction back.
 */
export async function createUserWithWorkspace(em: Em, ctx: ServiceCtx, input: NewUser, changes: Changes = {}): Promise<number> {
  const user = em.create(User, { ...input, serviceId: ctx.serviceId, primaryWorkspace: null })
  await em.flush()
  const workspaceName = `${user.firstName || user.name}'s Workspace`
  const workspace = em.create(Workspace, {
    name: workspaceName,
    slug: await uniqueSlug(em, workspaceName),
    serviceId: ctx.serviceId,
    user,
    metadata: {},
  })
  em.create(WorkspaceMember, { workspace, user, role: 'owner' })
  user.primaryWorkspace = workspace
  await em.flush()
  await audit(em, ctx, {
    action: 'auth.sign_up',
    actor: signInActor(ctx, user.id, null),
    workspaceId: workspace.id,
    resource: { type: 'user', id: user.id },
    changes: { name: { from: null, to: user.name }, email: { from: null, to: user.email }, ...changes },
  })
  return user.id
}

/**
 * Creates a user, their primary workspace (they own it) and a basic token.
 * @throws ForbiddenError when sign-up is turned off; ValidationError (`email`) when taken.
 */
export async function signUp(ctx: ServiceCtx, input: SignUpInput): Promise<SignInResult> {
  if (!ctx.config.signUpEnabled) throw new ForbiddenError('Sign-up is disabled on this server')
  const email = input.email.trim().toLowerCase()
  const taken = await usersInScope(ctx).select('id').where('email', '=', email).executeTakeFirst()
  if (taken) throw new ValidationError(['email'], 'The email has already been taken')
  const split = splitName(input.name)
  const passwordHash = await hashPassword(input.password)
  const newUser: NewUser = {
    name: input.name.trim(),
    firstName: input.first_name?.trim() ?? split.first,
    lastName: input.last_name?.trim() ?? split.last,
    email,
    passwordHash,
  }
  const userId = await ctx.em.transactional((em) =>
    createUserWithWorkspace(em, ctx, newUser, { password: { from: null, to: input.password } }),
  )
  return signedIn(ctx, userId, 'password')
}

/**
 * Checks e-mail and password and issues a basic token. Unknown e-mail, wrong password and a user
 * without a password (made by single sign-on) answer the same 401 after the same work.
 * @throws ForbiddenError when PASSWORD_SIGN_IN=false (docs/api/sso.md); UnauthorizedError on bad credentials.
 */
export async function signIn(ctx: ServiceCtx, input: { email: string; password: string }): Promise<SignInResult> {
  if (!ctx.config.passwordSignIn) throw new ForbiddenError('Password sign-in is disabled on this server; use single sign-on')
  const email = input.email.trim().toLowerCase()
  const row = await usersInScope(ctx).select(['id', 'password_hash']).where('email', '=', email).executeTakeFirst()
  const hasPassword = row !== undefined && row.password_hash !== NO_PASSWORD
  const valid = (await argon2Verify(hasPassword ? row.password_hash : DUMMY_HASH, input.password)) && hasPassword
  if (!row || !valid) {
    // Kept for both; an unknown e-mail belongs to no workspace, so no list shows it (docs/api/audit.md).
    await auditAlone(ctx, {
      action: 'auth.sign_in_failed',
      actor: signInActor(ctx, row?.id ?? null, null),
      workspaceId: row ? await primaryWorkspaceId(ctx.em, row.id) : null,
      resource: row ? { type: 'user', id: row.id } : null,
      changes: { email: { from: null, to: email } },
    })
    throw new UnauthorizedError('Invalid credentials')
  }
  return signedIn(ctx, row.id, 'password')
}

/**
 * Revokes the token the caller used, and drops the caller's cached tokens here and in every
 * process (src/platform/auth-cache.ts), so the token answers 401 from the next request on.
 */
export async function logout(ctx: ServiceCtx & { auth: AuthContext }): Promise<void> {
  await ctx.em.transactional(async (em) => {
    await queries(em)
      .updateTable('access_tokens')
      .set((eb) => ({ revoked_at: eb.fn<Date>('now'), updated_at: eb.fn<Date>('now') }))
      .where('id', '=', ctx.auth.token.id)
      .execute()
    await audit(em, ctx, {
      action: 'auth.logout',
      workspaceId: ctx.auth.primaryWorkspace?.id ?? null,
      resource: { type: 'access_token', uuid: ctx.auth.token.uuid },
    })
  })
  await ctx.deps.authCache.invalidate({ users: [ctx.auth.user.id] })
}
