/**
 * Prompts (specification: "Prompt (response shape)", "Update a Prompt"; docs/api/tenancy.md and docs/api/resources.md):
 * list, create, retrieve, update (`PUT`), delete. Every function starts with the access check of
 * src/access/resource-access.ts; every visibility and share rule runs in SQL.
 */
import { audit, entityFields, fieldChanges } from '../access/audit.ts'
import { LockMode } from '@mikro-orm/core'
import { Prompt } from '../../entities/index.ts'
import { listScopeSql, requireResource } from '../access/resource-access.ts'
import { queries } from '../platform/db.ts'
import { ValidationError } from '../platform/errors.ts'
import {
  PROMPT_FIELDS,
  PROMPT_METADATA_MAX_BYTES,
  toPrompt,
  toStoredInputs,
  type PromptRow,
  type TCreatePromptInput,
  type TListPromptsInput,
  type TPrompt,
  type TUpdatePromptInput,
} from './prompt.schema.ts'
import { selectOwned } from '../access/owned-select.ts'
import { jsonBytes, page, sortOf } from '../access/wire.ts'
import { Conditions, searchSql } from '../access/list-filters.ts'
import { resolveProfilePhotoKey } from '../access/references.ts'
import type { SqlFragment } from '../platform/sql.ts'
import type { ResourceCtx } from '../context.ts'
import { mergeMetadata } from '../access/metadata.ts'

const SORT_COLUMNS: Record<string, string> = { created_at: 'p.created_at', name: 'lower(p.name)', updated_at: 'p.updated_at' }

/**
 * Reads prompts with the relations asked for, in one query: `user` and `workspace` are joined
 * only when embedded. `tail` follows the WHERE (order, limit, offset).
 */
async function select(ctx: ResourceCtx, embed: readonly string[], where: SqlFragment, tail = '') {
  const rows = await selectOwned<PromptRow>(ctx, { table: 'prompts', alias: 'p', fields: PROMPT_FIELDS, embed, where, tail })
  return rows.map(({ row, user, workspace }) => toPrompt(row, { user, workspace }, ctx.auth.user.id, ctx.config.appUrl))
}

/** One prompt by id with its creator and workspace (the caller's access was checked). */
async function load(ctx: ResourceCtx, id: number): Promise<{ data: TPrompt }> {
  const [prompt] = await select(ctx, ['user', 'workspace'], { sql: 'p.id = ?', params: [id] })
  return { data: prompt }
}

/**
 * The prompts the caller may list in the request's workspace (docs/api/tenancy.md; with
 * `visibility=public`, every public prompt of the service scope), as the paginator shape.
 * Two queries whatever the page size: the page (relations joined) and the count.
 */
export async function list(ctx: ResourceCtx, input: TListPromptsInput) {
  const where = new Conditions(listScopeSql('p', 'prompts', ctx, input.visibility))
  if (input.search) where.add(searchSql(['p.name', 'p.description'], input.search))
  const filter = where.toSql()
  const { column, direction } = sortOf(input.sort)
  const order = `order by ${SORT_COLUMNS[column]} ${direction}, p.id ${direction}`
  const [items, [count]] = await Promise.all([
    select(ctx, input.with ?? [], filter, `${order} limit ${input.per_page} offset ${(input.page - 1) * input.per_page}`),
    ctx.em.execute(`select count(*)::int as total from prompts p where ${filter.sql}`, filter.params),
  ])
  return page(items, {
    total: Number(count.total),
    page: input.page,
    perPage: input.per_page,
    path: `${ctx.config.appUrl}/api/v1/prompts`,
    query: {
      sort: input.sort,
      with: input.with?.join(','),
      search: input.search,
      visibility: input.visibility,
      workspace_uuid: input.workspace_uuid,
    },
  })
}

/**
 * Retrieves a prompt the caller may see, with its creator and workspace.
 * @throws NotFoundError when it does not exist or is not visible to the caller.
 */
export async function retrieve(ctx: ResourceCtx, uuid: string): Promise<{ data: TPrompt }> {
  const prompt = await requireResource(ctx, 'prompts', 'Prompt', uuid, 'read')
  return load(ctx, prompt.id)
}

/** A prompt's fields the audit log records (docs/api/audit.md). */
const AUDITED = ['name', 'description', 'content', 'visibility', 'profilePhotoKey', 'profilePhotoConfig', 'metadata'] as const

/**
 * Creates a prompt owned by the caller in the request's workspace (docs/api/resources.md).
 * @throws ValidationError naming `profile_photo_key` for an upload the caller cannot use.
 */
export async function create(ctx: ResourceCtx, input: TCreatePromptInput): Promise<{ data: TPrompt }> {
  await resolveProfilePhotoKey(ctx, input.profile_photo_key)
  const { input: fields, ...extra } = input.metadata ?? {}
  const id = await ctx.em.transactional(async (em) => {
    const prompt = em.create(Prompt, {
      name: input.name,
      description: input.description ?? '',
      content: input.content,
      visibility: input.visibility ?? 'private',
      profilePhotoKey: input.profile_photo_key ?? null,
      profilePhotoConfig: input.profile_photo_config ?? null,
      metadata: { ...extra, input: toStoredInputs(fields ?? []) },
      user: ctx.auth.user.id,
      workspace: ctx.workspace.workspace.id,
    })
    await em.flush()
    await audit(em, ctx, {
      action: 'prompt.create',
      resource: { type: 'prompt', uuid: prompt.uuid },
      changes: fieldChanges(null, entityFields(prompt, AUDITED)),
    })
    return prompt.id
  })
  return load(ctx, id)
}

/**
 * `PUT /api/v1/prompts/{prompt_uuid}` (specification: "Update a Prompt"; docs/api/resources.md):
 * omitted fields are kept, `null` clears `description` (to `''`), `profile_photo_key` and
 * `profile_photo_config`; `metadata` merges key by key (`null` removes a key) and
 * `metadata.input`, when sent, replaces the whole list. Everything is checked before the one
 * write, on the row locked so that concurrent merges cannot lose each other's keys.
 * @throws NotFoundError (not visible), ForbiddenError (visible without `write`), ValidationError
 *   (an unusable `profile_photo_key`, `metadata` over 64 KiB after merging).
 */
export async function update(ctx: ResourceCtx, input: TUpdatePromptInput): Promise<{ data: TPrompt }> {
  const { id } = await requireResource(ctx, 'prompts', 'Prompt', input.prompt_uuid, 'write')
  await resolveProfilePhotoKey(ctx, input.profile_photo_key)
  await ctx.em.transactional(async (em) => {
    const prompt = await em.findOneOrFail(Prompt, id, { lockMode: LockMode.PESSIMISTIC_WRITE })
    const before = entityFields(prompt, AUDITED)
    let metadata: Record<string, unknown> | undefined
    if (input.metadata !== undefined) {
      const { input: fields, ...extra } = input.metadata
      const patch: Record<string, unknown> = { ...extra }
      if (fields !== undefined) patch.input = fields === null ? [] : toStoredInputs(fields)
      metadata = mergeMetadata(prompt.metadata, patch)
      if (jsonBytes(metadata) > PROMPT_METADATA_MAX_BYTES) {
        throw new ValidationError(['metadata'], `metadata must not exceed ${PROMPT_METADATA_MAX_BYTES} bytes as JSON after merging`)
      }
    }
    em.assign(
      prompt,
      {
        name: input.name,
        description: input.description === null ? '' : input.description,
        content: input.content,
        visibility: input.visibility,
        profilePhotoKey: input.profile_photo_key,
        profilePhotoConfig: input.profile_photo_config,
        metadata,
      },
      { ignoreUndefined: true, mergeObjectProperties: false },
    )
    await em.flush()
    await audit(em, ctx, {
      action: 'prompt.update',
      resource: { type: 'prompt', uuid: input.prompt_uuid },
      changes: fieldChanges(before, entityFields(prompt, AUDITED)),
    })
  })
  return load(ctx, id)
}

/**
 * Soft-deletes a prompt (`deleted_at`); needs `admin` (owner, workspace owner/admin, admin share).
 * @throws NotFoundError (not visible), ForbiddenError (visible without `admin`).
 */
export async function remove(ctx: ResourceCtx, uuid: string): Promise<void> {
  const prompt = await requireResource(ctx, 'prompts', 'Prompt', uuid, 'admin')
  await ctx.em.transactional(async (em) => {
    await queries(em)
      .updateTable('prompts')
      .set((eb) => ({ deleted_at: eb.fn<Date>('now'), updated_at: eb.fn<Date>('now') }))
      .where('id', '=', prompt.id)
      .execute()
    await audit(em, ctx, { action: 'prompt.delete', resource: { type: 'prompt', uuid } })
  })
}
