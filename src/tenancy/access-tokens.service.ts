/**
 * Application access tokens (docs/api/authentication.md): created by a user for an integration, named,
 * optionally expiring, optionally bound to one workspace, optionally read-only. The plaintext is
 * answered once, at creation.
 */
import { AccessToken, type TokenAbility } from '../../entities/index.ts'
import { requireWorkspace } from '../access/workspace-access.ts'
import { ForbiddenError, NotFoundError, ValidationError } from '../platform/errors.ts'
import { isoOrNull, iso, page } from '../access/wire.ts'
import { newToken } from '../platform/tokens.ts'
import type { AuthedCtx } from '../context.ts'

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

interface TokenRow {
  uuid: string
  kind: 'basic' | 'application'
  name: string
  prefix: string
  abilities: TokenAbility[]
  workspaceUuid: string | null
  expiresAt: string | Date | null
  lastUsedAt: string | Date | null
  createdAt: string | Date
}

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

const SELECT = `select t.uuid, t.kind, t.name, t.prefix, t.abilities, w.uuid as "workspaceUuid",
  t.expires_at as "expiresAt", t.last_used_at as "lastUsedAt", t.created_at as "createdAt"
  from access_tokens t left join workspaces w on w.id = t.workspace_id`
const LIVE = `t.user_id = ? and t.kind = 'application' and t.revoked_at is null`

/** The caller's live application tokens, newest first. */
export async function list(ctx: AuthedCtx, input: { page: number; per_page: number }) {
  const offset = (input.page - 1) * input.per_page
  const [rows, [count]] = await Promise.all([
    ctx.em.execute(`${SELECT} where ${LIVE} order by t.id desc limit ? offset ?`, [ctx.auth.user.id, input.per_page, offset]),
    ctx.em.execute(`select count(*)::int as total from access_tokens t where ${LIVE}`, [ctx.auth.user.id]),
  ])
  return page((rows as unknown as TokenRow[]).map(toView), {
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
  const entity = ctx.em.create(AccessToken, {
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
  await ctx.em.flush()
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
  const rows = await ctx.em.execute(
    `update access_tokens t set revoked_at = now(), updated_at = now() where t.uuid = ? and ${LIVE} returning t.id`,
    [uuid, ctx.auth.user.id],
  )
  if (!rows.length) throw new NotFoundError('Access token')
  await ctx.deps.authCache.invalidate({ users: [ctx.auth.user.id] })
}
