/**
 * Large language models (docs/api/resources.md, "Large language models"): the
 * catalog a workspace sees (built-in models and its custom ones, src/models/registry.ts) with
 * `is_available` for the caller, and custom models of a workspace's custom `llm` providers.
 *
 * A custom model is part of its provider's configuration: creating, updating and deleting one
 * needs `write` permission on that provider. Built-in models are read-only (403).
 */
import { LargeLanguageModel, Provider, type ILargeLanguageModel } from '../../entities/index.ts'
import { audit, fieldChanges } from '../access/audit.ts'
import { findResource } from '../access/resource-access.ts'
import { allows } from '../access/visibility.ts'
import { LockMode } from '@mikro-orm/core'
import { queries, type Em } from '../platform/db.ts'
import { ForbiddenError, NotFoundError, ValidationError } from '../platform/errors.ts'
import { availabilitySql, visibleModelSql } from './registry.ts'
import {
  toLargeLanguageModel,
  type ModelRow,
  type TCreateModelInput,
  type TLargeLanguageModel,
  type TModelListInput,
  type TUpdateModelInput,
} from './model.schema.ts'
import { page, sortOf } from '../access/wire.ts'
import { Conditions, searchSql } from '../access/list-filters.ts'
import type { ResourceCtx } from '../context.ts'
import { unprefix, type SqlFragment } from '../platform/sql.ts'

const FROM = 'large_language_models m join providers pv on pv.id = m.provider_id'

const COLUMNS = `m.id::float8 as id, m.uuid, m.slug, m.name, m.description, m.model_id as "modelId",
  m.context_window as "contextWindow", m.max_output_tokens as "maxOutputTokens",
  m.input_price_per_million as "inputPricePerMillion", m.output_price_per_million as "outputPricePerMillion",
  m.supports_tools as "supportsTools", m.supports_vision as "supportsVision", m.supports_json_output as "supportsJsonOutput",
  m.is_builtin as "isBuiltin", pv.uuid as "providerUuid", pv.slug as "providerSlug", pv.name as "providerName",
  m.created_at as "createdAt", m.updated_at as "updatedAt"`

/** Sort expressions by `sort` value (without `-`). */
const SORTS: Readonly<Record<string, string>> = {
  name: 'lower(m.name)',
  created_at: 'm.created_at',
  updated_at: 'm.updated_at',
  context_window: 'm.context_window',
  input_price_per_million: 'm.input_price_per_million',
  output_price_per_million: 'm.output_price_per_million',
}

const LABEL = 'Large language model'
const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** `is_available` of the caller in the request's workspace, as SQL. */
const availableOf = (ctx: ResourceCtx): SqlFragment =>
  availabilitySql('pv', ctx.config, { workspaceId: ctx.workspace.workspace.id, userId: ctx.auth.user.id })

/** The select list with `is_available` (whose parameters come first). */
function selectList(ctx: ResourceCtx): SqlFragment {
  const available = availableOf(ctx)
  return { sql: `${COLUMNS}, ${available.sql} as "isAvailable"`, params: available.params }
}

const toWire = (row: Record<string, unknown>) => toLargeLanguageModel(unprefix<ModelRow>(row, ''))

/** One visible model by id (no access check: callers have made it). */
async function load(ctx: ResourceCtx, id: number): Promise<{ data: TLargeLanguageModel }> {
  const select = selectList(ctx)
  const [row] = await ctx.em.execute(`select ${select.sql} from ${FROM} where m.id = ?`, [...select.params, id])
  return { data: toWire(row) }
}

/**
 * The models the request's workspace sees (built-in and its own), filtered by `provider` (slug),
 * `search` (name or slug, case-insensitive) and `is_available`; the paginator shape, in two
 * queries (the page and the count) whatever the page size.
 */
export async function list(ctx: ResourceCtx, input: TModelListInput) {
  const where = new Conditions(visibleModelSql('m', 'pv', ctx.workspace.workspace.id))
  if (input.provider) where.add('pv.slug = ?', input.provider)
  if (input.search) where.add(searchSql(['m.name', 'm.slug'], input.search))
  if (input.is_available !== undefined) {
    const available = availableOf(ctx)
    where.add({ sql: input.is_available ? available.sql : `not ${available.sql}`, params: available.params })
  }
  const filter = where.toSql()
  const select = selectList(ctx)
  const { column, direction } = sortOf(input.sort)
  const [rows, [count]] = await Promise.all([
    ctx.em.execute(
      `select ${select.sql} from ${FROM} where ${filter.sql}
       order by ${SORTS[column]} ${direction}, m.id ${direction}
       limit ${input.per_page} offset ${(input.page - 1) * input.per_page}`,
      [...select.params, ...filter.params],
    ),
    ctx.em.execute(`select count(*)::int as total from ${FROM} where ${filter.sql}`, filter.params),
  ])
  return page(rows.map(toWire), {
    total: Number(count.total),
    page: input.page,
    perPage: input.per_page,
    path: `${ctx.config.appUrl}/api/v1/large-language-models`,
    query: {
      sort: input.sort,
      provider: input.provider,
      search: input.search,
      is_available: input.is_available === undefined ? undefined : String(input.is_available),
    },
  })
}

/** Id, workspace and provider of a visible model by uuid or slug (the workspace's own wins over a built-in slug). */
async function findVisible(ctx: ResourceCtx, ref: string) {
  const visible = visibleModelSql('m', 'pv', ctx.workspace.workspace.id)
  const byUuid = UUID_SHAPE.test(ref)
  const [row] = await ctx.em.execute(
    `select m.id::float8 as id, m.uuid, m.workspace_id::float8 as "workspaceId", pv.uuid as "providerUuid" from ${FROM}
     where ${byUuid ? 'm.uuid = ?' : 'm.slug = ?'} and ${visible.sql} order by m.workspace_id is null, m.id limit 1`,
    [byUuid ? ref.toLowerCase() : ref, ...visible.params],
  )
  return row
    ? {
        id: Number(row.id),
        uuid: String(row.uuid),
        workspaceId: row.workspaceId === null ? null : Number(row.workspaceId),
        providerUuid: String(row.providerUuid),
      }
    : null
}

/** Retrieves a model the workspace sees, by uuid or slug. @throws NotFoundError otherwise. */
export async function retrieve(ctx: ResourceCtx, ref: string): Promise<{ data: TLargeLanguageModel }> {
  const found = await findVisible(ctx, ref)
  if (!found) throw new NotFoundError(LABEL)
  return load(ctx, found.id)
}

/**
 * The id of a custom `llm` provider of the request's workspace that the caller may write.
 * @throws ValidationError naming `provider_uuid` (not visible, built-in, of another workspace,
 *   not of type `llm`); ForbiddenError when the caller sees it without `write`.
 */
async function writableProvider(ctx: ResourceCtx, uuid: string): Promise<number> {
  const access = await findResource(ctx, 'providers', uuid)
  if (!access) throw new ValidationError(['provider_uuid'], 'No provider you can use has this uuid')
  if (access.workspaceId !== ctx.workspace.workspace.id) {
    throw new ValidationError(['provider_uuid'], 'Custom models belong to a custom provider of this workspace')
  }
  const row = await queries(ctx.em).selectFrom('providers').select('type').where('id', '=', access.id).executeTakeFirstOrThrow()
  if (row.type !== 'llm') throw new ValidationError(['provider_uuid'], 'The provider must be of type "llm"')
  if (!allows(access.permission, 'write')) throw new ForbiddenError('You may not add models to this provider')
  return access.id
}

/** The slug must be free among the models the workspace sees. @throws ValidationError naming `slug`. */
async function assertSlugFree(ctx: ResourceCtx, slug: string, exceptId: number | null, em: Em = ctx.em): Promise<void> {
  const taken = await queries(em)
    .selectFrom('large_language_models')
    .select('id')
    .where('deleted_at', 'is', null)
    .where((eb) => eb.or([eb('workspace_id', 'is', null), eb('workspace_id', '=', ctx.workspace.workspace.id)]))
    .where('slug', '=', slug)
    .where('id', 'is distinct from', exceptId)
    .limit(1)
    .executeTakeFirst()
  if (taken) throw new ValidationError(['slug'], 'The slug has already been taken')
}

/** `max_output_tokens` must fit in `context_window`. @throws ValidationError naming it. */
function checkTokens(contextWindow: number, maxOutputTokens: number): void {
  if (maxOutputTokens > contextWindow) {
    throw new ValidationError(['max_output_tokens'], 'max_output_tokens must not exceed context_window')
  }
}

/** A model's fields as the audit log records them (docs/api/audit.md), under the API's names. */
const auditedFields = (model: ILargeLanguageModel, providerUuid: string): Record<string, unknown> => ({
  slug: model.slug,
  name: model.name,
  description: model.description,
  provider_uuid: providerUuid,
  model_id: model.modelId,
  context_window: model.contextWindow,
  max_output_tokens: model.maxOutputTokens,
  input_price_per_million: model.inputPricePerMillion,
  output_price_per_million: model.outputPricePerMillion,
  capabilities: { tools: model.supportsTools, vision: model.supportsVision, json_output: model.supportsJsonOutput },
})

/**
 * Creates a custom model of a custom `llm` provider of the request's workspace, owned by the caller.
 * @throws ValidationError (provider, slug taken, max_output_tokens over context_window),
 *   ForbiddenError (no `write` on the provider).
 */
export async function create(ctx: ResourceCtx, input: TCreateModelInput): Promise<{ data: TLargeLanguageModel }> {
  const providerId = await writableProvider(ctx, input.provider_uuid)
  checkTokens(input.context_window, input.max_output_tokens)
  await assertSlugFree(ctx, input.slug, null)
  const id = await ctx.em.transactional(async (em) => {
    const model = em.create(LargeLanguageModel, {
      slug: input.slug,
      name: input.name,
      description: input.description ?? '',
      provider: providerId,
      modelId: input.model_id,
      contextWindow: input.context_window,
      maxOutputTokens: input.max_output_tokens,
      inputPricePerMillion: input.input_price_per_million ?? 0,
      outputPricePerMillion: input.output_price_per_million ?? 0,
      supportsTools: input.capabilities?.tools ?? false,
      supportsVision: input.capabilities?.vision ?? false,
      supportsJsonOutput: input.capabilities?.json_output ?? false,
      isBuiltin: false,
      user: ctx.auth.user.id,
      workspace: ctx.workspace.workspace.id,
    })
    await em.flush()
    await audit(em, ctx, {
      action: 'model.create',
      resource: { type: 'model', uuid: model.uuid },
      changes: fieldChanges(null, auditedFields(model, input.provider_uuid)),
    })
    return model.id
  })
  return load(ctx, id)
}

/**
 * A custom model of the request's workspace that the caller may change (`write` on its provider).
 * @throws NotFoundError (not visible here), ForbiddenError (built-in, or no `write`).
 */
async function requireCustom(ctx: ResourceCtx, uuid: string): Promise<{ id: number; uuid: string; providerUuid: string }> {
  const found = await findVisible(ctx, uuid)
  if (!found) throw new NotFoundError(LABEL)
  if (found.workspaceId === null) throw new ForbiddenError('Built-in large language models cannot be changed or deleted')
  const provider = await findResource(ctx, 'providers', found.providerUuid)
  if (!provider || !allows(provider.permission, 'write')) throw new ForbiddenError('You may not change this large language model')
  return found
}

/**
 * Updates a custom model: omitted fields kept, `description: null` clears it, `capabilities`
 * merged member by member; `provider_uuid` moves it to another custom `llm` provider of the
 * workspace the caller may write. Everything is checked before anything is written.
 * @throws NotFoundError, ForbiddenError (built-in, no `write`), ValidationError (as for create).
 */
export async function update(ctx: ResourceCtx, input: TUpdateModelInput): Promise<{ data: TLargeLanguageModel }> {
  const { id, uuid, providerUuid } = await requireCustom(ctx, input.model_uuid)
  const providerId = input.provider_uuid === undefined ? undefined : await writableProvider(ctx, input.provider_uuid)
  // Locked, so the token limits are checked against the values they are written over (two
  // concurrent updates, one of each limit, cannot together store a pair neither would allow).
  await ctx.em.transactional(async (em) => {
    const entity = await em.findOneOrFail(LargeLanguageModel, id, { lockMode: LockMode.PESSIMISTIC_WRITE })
    const before = auditedFields(entity, providerUuid)
    checkTokens(input.context_window ?? entity.contextWindow, input.max_output_tokens ?? entity.maxOutputTokens)
    if (input.slug !== undefined && input.slug !== entity.slug) await assertSlugFree(ctx, input.slug, id, em)
    if (providerId !== undefined) entity.provider = em.getReference(Provider, providerId)
    if (input.slug !== undefined) entity.slug = input.slug
    if (input.name !== undefined) entity.name = input.name
    if (input.description !== undefined) entity.description = input.description ?? ''
    if (input.model_id !== undefined) entity.modelId = input.model_id
    if (input.context_window !== undefined) entity.contextWindow = input.context_window
    if (input.max_output_tokens !== undefined) entity.maxOutputTokens = input.max_output_tokens
    if (input.input_price_per_million !== undefined) entity.inputPricePerMillion = input.input_price_per_million
    if (input.output_price_per_million !== undefined) entity.outputPricePerMillion = input.output_price_per_million
    if (input.capabilities?.tools !== undefined) entity.supportsTools = input.capabilities.tools
    if (input.capabilities?.vision !== undefined) entity.supportsVision = input.capabilities.vision
    if (input.capabilities?.json_output !== undefined) entity.supportsJsonOutput = input.capabilities.json_output
    await em.flush()
    await audit(em, ctx, {
      action: 'model.update',
      resource: { type: 'model', uuid },
      changes: fieldChanges(before, auditedFields(entity, input.provider_uuid ?? providerUuid)),
    })
  })
  return load(ctx, id)
}

/** Soft-deletes a custom model (204). @throws NotFoundError, ForbiddenError (built-in, no `write`). */
export async function remove(ctx: ResourceCtx, uuid: string): Promise<void> {
  const model = await requireCustom(ctx, uuid)
  await ctx.em.transactional(async (em) => {
    await queries(em)
      .updateTable('large_language_models')
      .set((eb) => ({ deleted_at: eb.fn<Date>('now'), updated_at: eb.fn<Date>('now') }))
      .where('id', '=', model.id)
      .execute()
    await audit(em, ctx, { action: 'model.delete', resource: { type: 'model', uuid: model.uuid } })
  })
}
