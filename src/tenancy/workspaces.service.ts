/**
 * Workspaces (specification: "Workspace"; docs/api/tenancy.md and docs/api/resources.md): list, create, retrieve,
 * update, delete. Access goes through src/access/workspace-access.ts first in every function.
 */
import { audit, fieldChanges } from '../access/audit.ts'
import { mergeMetadata } from '../access/metadata.ts'
import type { z } from 'zod'
import { LockMode } from '@mikro-orm/core'
import { Workspace, WorkspaceMember, type IWorkspace } from '../../entities/index.ts'
import { memberWorkspaceSql, requireWorkspace } from '../access/workspace-access.ts'
import { ConflictError, ValidationError } from '../platform/errors.ts'
import {
  type CreateWorkspaceInput,
  METADATA_MAX_KEYS,
  toWorkspace,
  type TWorkspace,
  type UpdateWorkspaceInput,
  type UserRow,
  type WorkspaceRow,
} from '../access/user-workspace.schema.ts'
import { page, sortOf } from '../access/wire.ts'
import { searchSql } from '../access/list-filters.ts'
import { uniqueSlug } from '../platform/slugs.ts'
import { queries } from '../platform/db.ts'
import type { AuthedCtx } from '../context.ts'
import { unprefix, userColumns, workspaceColumns } from '../platform/sql.ts'

/** Relations a workspace response can embed. */
export const WORKSPACE_RELATIONS = ['user'] as const
/** Sortable columns of the workspace list. */
export const WORKSPACE_SORTS = ['created_at', '-created_at', 'name', '-name', 'updated_at', '-updated_at'] as const

const SORT_COLUMNS: Record<string, string> = { created_at: 'w.created_at', name: 'lower(w.name)', updated_at: 'w.updated_at' }

/** Loads workspaces with their owners, keyed for the mapper. */
async function withOwners(ctx: AuthedCtx, where: string, params: unknown[], tail = '') {
  const scope = memberWorkspaceSql(ctx)
  const rows = await ctx.em.execute(
    `select ${workspaceColumns('w', 'w_')}, ${userColumns('o', 'o_')} from workspaces w ${scope.join}
     join users o on o.id = w.user_id where ${scope.where} and ${where} ${tail}`,
    [...scope.params, ...params],
  )
  return rows.map((row) => ({ workspace: unprefix<WorkspaceRow>(row, 'w_'), owner: unprefix<UserRow>(row, 'o_') }))
}

/** The workspaces the caller belongs to, as the paginator shape. */
export async function list(ctx: AuthedCtx, input: { page: number; per_page: number; sort: string; with?: string[]; search?: string }) {
  const { column, direction } = sortOf(input.sort)
  const { sql: where, params } = input.search ? searchSql(['w.name', 'w.slug'], input.search) : { sql: 'true', params: [] }
  const scope = memberWorkspaceSql(ctx)
  const [rows, [count]] = await Promise.all([
    withOwners(
      ctx,
      where,
      params,
      `order by ${SORT_COLUMNS[column]} ${direction}, w.id ${direction} limit ${input.per_page} offset ${(input.page - 1) * input.per_page}`,
    ),
    ctx.em.execute(`select count(*)::int as total from workspaces w ${scope.join} where ${scope.where} and ${where}`, [
      ...scope.params,
      ...params,
    ]),
  ])
  const embedOwner = input.with?.includes('user') ?? false
  return page(
    rows.map(({ workspace, owner }) => toWorkspace(workspace, embedOwner ? owner : null, ctx.auth.user.id, ctx.config.appUrl)),
    {
      total: Number(count.total),
      page: input.page,
      perPage: input.per_page,
      path: `${ctx.config.appUrl}/api/v1/workspaces`,
      query: { sort: input.sort, with: input.with?.join(','), search: input.search },
    },
  )
}

/** One workspace, with its owner. */
async function load(ctx: AuthedCtx, id: number): Promise<TWorkspace> {
  const [found] = await withOwners(ctx, 'w.id = ?', [id])
  return toWorkspace(found.workspace, found.owner, ctx.auth.user.id, ctx.config.appUrl)
}

/** Retrieves a workspace the caller belongs to. @throws NotFoundError otherwise. */
export async function retrieve(ctx: AuthedCtx, uuid: string): Promise<{ data: TWorkspace }> {
  const { workspace } = await requireWorkspace(ctx, uuid, 'view')
  return { data: await load(ctx, workspace.id) }
}

async function assertSlugFree(ctx: AuthedCtx, slug: string, exceptId: number | null): Promise<void> {
  const taken = await queries(ctx.em)
    .selectFrom('workspaces')
    .select('id')
    .where('slug', '=', slug)
    .where('id', 'is distinct from', exceptId)
    .executeTakeFirst()
  if (taken) throw new ValidationError(['slug'], 'The slug has already been taken')
}

/** A workspace's fields as the audit log records them (docs/api/audit.md). */
function workspaceFields(workspace: IWorkspace): Record<string, unknown> {
  return {
    name: workspace.name,
    slug: workspace.slug,
    profile_photo_key: workspace.profilePhotoKey ?? null,
    is_onboarded: workspace.isOnboarded,
    metadata: workspace.metadata,
  }
}

/** Creates a workspace owned by the caller, who becomes its `owner` member. */
export async function create(ctx: AuthedCtx, input: z.infer<typeof CreateWorkspaceInput>): Promise<{ data: TWorkspace }> {
  if (input.slug) await assertSlugFree(ctx, input.slug, null)
  const slug = input.slug ?? (await uniqueSlug(ctx.em, input.name))
  const id = await ctx.em.transactional(async (em) => {
    const workspace = em.create(Workspace, {
      name: input.name,
      slug,
      profilePhotoKey: input.profile_photo_key ?? null,
      serviceId: ctx.serviceId,
      isOnboarded: input.is_onboarded ?? false,
      metadata: input.metadata ?? {},
      user: ctx.auth.user.id,
    })
    em.create(WorkspaceMember, { workspace, user: ctx.auth.user.id, role: 'owner' })
    await em.flush()
    await audit(em, ctx, {
      action: 'workspace.create',
      workspaceId: workspace.id,
      resource: { type: 'workspace', uuid: workspace.uuid },
      changes: fieldChanges(null, workspaceFields(workspace)),
    })
    return workspace.id
  })
  return { data: await load(ctx, id) }
}

/**
 * Updates a workspace: omitted fields are kept, `null` clears, `metadata` merges, on the row
 * locked so that concurrent merges cannot lose each other's keys. Cached callers whose primary
 * workspace it is are dropped (their `GET /api/v1/user` embeds it).
 * @throws NotFoundError (not a member), ForbiddenError (a `member`), ValidationError (slug taken).
 */
export async function update(ctx: AuthedCtx, input: z.infer<typeof UpdateWorkspaceInput>): Promise<{ data: TWorkspace }> {
  const { workspace } = await requireWorkspace(ctx, input.workspace_uuid, 'update')
  if (input.slug !== undefined && input.slug !== workspace.slug) await assertSlugFree(ctx, input.slug, workspace.id)
  await ctx.em.transactional(async (em) => {
    const entity = await em.findOneOrFail(Workspace, workspace.id, { lockMode: LockMode.PESSIMISTIC_WRITE })
    const before = workspaceFields(entity)
    const metadata = input.metadata === undefined ? undefined : mergeMetadata(entity.metadata, input.metadata)
    // Each request is bounded by the schema; the merge must not grow past the same bound.
    if (metadata && Object.keys(metadata).length > METADATA_MAX_KEYS) {
      throw new ValidationError(['metadata'], `at most ${METADATA_MAX_KEYS} keys after merging`)
    }
    if (input.name !== undefined) entity.name = input.name
    if (input.slug !== undefined) entity.slug = input.slug
    if (input.profile_photo_key !== undefined) entity.profilePhotoKey = input.profile_photo_key
    if (input.is_onboarded !== undefined) entity.isOnboarded = input.is_onboarded
    if (metadata !== undefined) entity.metadata = metadata
    await em.flush()
    const changes = fieldChanges(before, workspaceFields(entity))
    await audit(em, ctx, {
      action: 'workspace.update',
      workspaceId: workspace.id,
      resource: { type: 'workspace', uuid: entity.uuid },
      changes,
    })
  })
  await ctx.deps.authCache.invalidate({ workspaces: [workspace.id] })
  return { data: await load(ctx, workspace.id) }
}

/**
 * Soft-deletes a workspace (owner only). Members whose primary workspace it was lose it as
 * primary (and their cached callers are dropped); the owner's own primary workspace cannot be
 * deleted.
 * @throws ConflictError for the caller's primary workspace.
 */
export async function remove(ctx: AuthedCtx, uuid: string): Promise<void> {
  const { workspace } = await requireWorkspace(ctx, uuid, 'delete')
  if (ctx.auth.primaryWorkspace?.id === workspace.id) {
    throw new ConflictError('Your primary workspace cannot be deleted')
  }
  await ctx.em.transactional(async (em) => {
    const db = queries(em)
    await db
      .updateTable('workspaces')
      .set((eb) => ({ deleted_at: eb.fn<Date>('now'), updated_at: eb.fn<Date>('now') }))
      .where('id', '=', workspace.id)
      .execute()
    await db.updateTable('users').set({ primary_workspace_id: null }).where('primary_workspace_id', '=', workspace.id).execute()
    await audit(em, ctx, { action: 'workspace.delete', workspaceId: workspace.id, resource: { type: 'workspace', uuid: workspace.uuid } })
  })
  await ctx.deps.authCache.invalidate({ workspaces: [workspace.id] })
}
