/**
 * Application access tokens (docs/api/authentication.md): created by a user for an integration, named,
 * optionally expiring, optionally bound to one workspace, optionally read-only. The plaintext is
 * answered once, at creation.
 */
import { audit } from '../access/audit.ts'
import { AccessToken, type TokenAbility } from '../../entities/index.ts'
import { requireWorkspace } from '../access/workspace-access.ts'
import { ForbiddenError, NotFoundError, ValidationError } from '../platform/errors.ts'
import { isoOrNull, iso, page } from '../access/wire.ts'
import { newToken } from '../platform/tokens.ts'
import { queries, type Em } from '../platform/db.ts'
import type { AuthedCtx, ServiceCtx } from '../context.ts'

/** A token as listed (never the plaintext, never the hash). */
export interface TokenView {
  uuid: string
  kind: 'basic' | 'application'
  name: string
  prefix: string
  abilities: TokenAbility[]
  workspace_uuid: string | null
  expires_at: string | null
  last_used_at: string | null
  created_at: string
}

/** The caller's live application tokens (what the list answers and counts). */
function liveTokens(ctx: AuthedCtx) {
  return queries(ctx.em)
    .selectFrom('access_tokens as t')
    .where('t.user_id', '=', ctx.auth.user.id)
    .where('t.kind', '=', 'application')
    .where('t.revoked_at', 'is', null)
}

/** {@link liveTokens} as listed, with the uuid of the workspace each is bound to. */
const listedTokens = (ctx: AuthedCtx) =>
  liveTokens(ctx)
    .leftJoin('workspaces as w', 'w.id', 't.workspace_id')
    .select([
      't.uuid',
      't.kind',
      't.name',
      't.prefix',
      't.abilities',
      'w.uuid as workspaceUuid',
      't.expires_at as expiresAt',
      't.last_used_at as lastUsedAt',
      't.created_at as createdAt',
    ])

type TokenRow = Awaited<ReturnType<ReturnType<typeof listedTokens>['execute']>>[number]

const toView = (row: TokenRow): TokenView => ({
  uuid: row.uuid,
  kind: row.kind,
  name: row.name,
  prefix: row.prefix,
  abilities: row.abilities,
  workspace_uuid: row.workspaceUuid,
  expires_at: isoOrNull(row.expiresAt),
  last_used_at: isoOrNull(row.lastUsedAt),
  created_at: iso(row.createdAt),
})

/** Managing tokens takes a session: an integration's token must not mint broader ones. */
function requireSession(ctx: AuthedCtx): void {
  if (ctx.auth.token.kind !== 'basic') {
    throw new ForbiddenError('Application access tokens are managed with a sign-in (basic) token')
  }
}

/** The token the caller used (`GET /api/v1/user/token`). */
export function current(ctx: AuthedCtx): { data: TokenView } {
  const token = ctx.auth.token
  return {
    data: {
      uuid: token.uuid,
      kind: token.kind,
      name: token.name,
      prefix: token.prefix,
      abilities: token.abilities,
      workspace_uuid: token.workspaceUuid,
      expires_at: isoOrNull(token.expiresAt),
      last_used_at: isoOrNull(token.lastUsedAt),
      created_at: iso(token.createdAt),
    },
  }
}

/** The caller's live application tokens, newest first. */
export async function list(ctx: AuthedCtx, input: { page: number; per_page: number }) {
  const offset = (input.page - 1) * input.per_page
  const [rows, count] = await Promise.all([
    listedTokens(ctx).orderBy('t.id', 'desc').limit(input.per_page).offset(offset).execute(),
    liveTokens(ctx)
      .select((eb) => eb.fn.countAll().as('total'))
      .executeTakeFirstOrThrow(),
  ])
  return page(rows.map(toView), {
    total: Number(count.total),
    page: input.page,
    perPage: input.per_page,
    path: `${ctx.config.appUrl}/api/v1/access-tokens`,
  })
}

/** Input of token creation. */
export interface CreateTokenInput {
  name: string
  expires_at?: string
  workspace_uuid?: string
  abilities?: TokenAbility[]
}

/**
 * Creates an application token and answers its plaintext once, as `access_token`.
 * @throws ValidationError (`expires_at` in the past); NotFoundError for a workspace the caller
 *   is not a member of; ForbiddenError when not called with a basic token.
 */
export async function create(ctx: AuthedCtx, input: CreateTokenInput) {
  requireSession(ctx)
  const expiresAt = input.expires_at ? new Date(input.expires_at) : null
  if (expiresAt && expiresAt.getTime() <= Date.now()) throw new ValidationError(['expires_at'], 'must be in the future')
  const workspace = input.workspace_uuid ? (await requireWorkspace(ctx, input.workspace_uuid, 'view')).workspace : null
  const abilities = [...new Set<TokenAbility>(input.abilities ?? ['read', 'write'])]
  if (abilities.includes('write') && !abilities.includes('read')) abilities.unshift('read')
  const token = newToken('application')
  const entity = await ctx.em.transactional(async (em) => {
    const created = em.create(AccessToken, {
      user: ctx.auth.user.id,
      kind: 'application',
      name: input.name,
      tokenHash: token.hash,
      prefix: token.prefix,
      abilities,
      workspace: workspace?.id ?? null,
      serviceId: ctx.serviceId,
      expiresAt,
    })
    await em.flush()
    await audit(em, ctx, {
      action: 'access_token.create',
      workspaceId: ctx.auth.primaryWorkspace?.id ?? null,
      resource: { type: 'access_token', uuid: created.uuid },
      changes: {
        name: { from: null, to: input.name },
        abilities: { from: null, to: abilities },
        workspace_uuid: { from: null, to: workspace?.uuid ?? null },
        expires_at: { from: null, to: expiresAt?.toISOString() ?? null },
      },
    })
    return created
  })
  return {
    data: {
      ...toView({
        uuid: entity.uuid,
        kind: 'application',
        name: entity.name,
        prefix: entity.prefix,
        abilities,
        workspaceUuid: workspace?.uuid ?? null,
        expiresAt,
        lastUsedAt: null,
        createdAt: entity.createdAt,
      }),
      access_token: token.plaintext,
    },
  }
}

/**
 * Revokes one of the caller's application tokens, and drops the caller's cached tokens here and
 * in every process (src/platform/auth-cache.ts), so it answers 401 from the next request on.
 * @throws NotFoundError when it is not the caller's (or already revoked).
 */
export async function remove(ctx: AuthedCtx, uuid: string): Promise<void> {
  requireSession(ctx)
  // liveTokens' conditions on the updated row itself: of two concurrent revocations only the first finds it live.
  await ctx.em.transactional(async (em) => {
    const revoked = await queries(em)
      .updateTable('access_tokens')
      .set((eb) => ({ revoked_at: eb.fn<Date>('now'), updated_at: eb.fn<Date>('now') }))
      .where('uuid', '=', uuid)
      .where('user_id', '=', ctx.auth.user.id)
      .where('kind', '=', 'application')
      .where('revoked_at', 'is', null)
      .returning('id')
      .execute()
    if (!revoked.length) throw new NotFoundError('Access token')
    await audit(em, ctx, {
      action: 'access_token.revoke',
      workspaceId: ctx.auth.primaryWorkspace?.id ?? null,
      resource: { type: 'access_token', uuid },
    })
  })
  await ctx.deps.authCache.invalidate({ users: [ctx.auth.user.id] })
}

/** What {@link issueGranted} makes: an application token granted to a client by its user's consent. */
export interface GrantedTokenInput {
  userId: number
  workspaceId: number
  /** The name shown in the token list (the client's name). */
  name: string
  expiresAt: Date
}

/**
 * Creates an application token of user `userId`, bound to workspace `workspaceId`, with `em`
 * (the caller's transaction), for the OAuth token endpoint (docs/api/mcp.md, "Authorization"):
 * the user granted it on the consent screen, so no session of theirs is at hand. Audited as
 * `access_token.create` with the user as actor. It is listed and revoked as any other.
 * @returns the token's row id, uuid and plaintext (answered once, never stored).
 */
export async function issueGranted(em: Em, ctx: ServiceCtx, input: GrantedTokenInput): Promise<{ id: number; uuid: string; plaintext: string }> {
  const token = newToken('application')
  const abilities: TokenAbility[] = ['read', 'write']
  const created = em.create(AccessToken, {
    user: input.userId,
    kind: 'application',
    name: input.name,
    tokenHash: token.hash,
    prefix: token.prefix,
    abilities,
    workspace: input.workspaceId,
    serviceId: ctx.serviceId,
    expiresAt: input.expiresAt,
  })
  await em.flush()
  await audit(em, ctx, {
    action: 'access_token.create',
    workspaceId: input.workspaceId,
    resource: { type: 'access_token', uuid: created.uuid },
    actor: { type: 'user', userId: input.userId, tokenKind: null, tokenUuid: null, serviceId: ctx.serviceId },
    changes: { name: { from: null, to: input.name }, abilities: { from: null, to: abilities }, expires_at: { from: null, to: input.expiresAt.toISOString() } },
  })
  return { id: created.id, uuid: created.uuid, plaintext: token.plaintext }
}

/**
 * Gives application token `id` a new secret and lifetime, when it is still live (not revoked):
 * an OAuth refresh, which keeps one token per grant in the list. The old secret stops working
 * when `em`'s transaction commits; the caller then drops the user's cached tokens
 * (`ctx.deps.authCache.invalidate`), so that no process still takes it.
 * @returns the new plaintext and the token's user, or null when the token was revoked (the refresh is refused).
 */
export async function renewGranted(em: Em, id: number, expiresAt: Date): Promise<{ plaintext: string; userId: number } | null> {
  const token = newToken('application')
  const renewed = await queries(em)
    .updateTable('access_tokens')
    .set((eb) => ({ token_hash: token.hash, prefix: token.prefix, expires_at: expiresAt, updated_at: eb.fn<Date>('now') }))
    .where('id', '=', id)
    .where('kind', '=', 'application')
    .where('revoked_at', 'is', null)
    .returning('user_id')
    .executeTakeFirst()
  return renewed ? { plaintext: token.plaintext, userId: renewed.user_id } : null
}
