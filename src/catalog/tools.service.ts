/**
 * Tools (docs/api/resources.md, "Tools"): operations an agent can call. `type` `api` is an HTTP
 * request (`method`, `url` template, JSON-schema `input_schema`) to an optional provider of type
 * `tool`; `type` `mcp` is the tools of an MCP server at `url`, optionally narrowed by
 * `allowed_tools` (docs/api/mcp-tools.md). Access runs through src/access/resource-access.ts first
 * in every function.
 */
import { LockMode } from '@mikro-orm/core'
import { Provider, Tool, type ITool, type ToolType } from '../../entities/index.ts'
import { audit, entityFields, fieldChanges } from '../access/audit.ts'
import { listScopeSql, requireResource } from '../access/resource-access.ts'
import { queries, type Em } from '../platform/db.ts'
import { ValidationError } from '../platform/errors.ts'
import {
  TOOL_FIELDS,
  TOOL_JSON_MAX_BYTES,
  toTool,
  type TCreateToolInput,
  type TTool,
  type TToolListInput,
  type TUpdateToolInput,
  type ToolRow,
} from './tool.schema.ts'
import { jsonBytes } from '../access/wire.ts'
import { jsonSchemaProblem } from '../platform/json-schema.ts'
import { Conditions, searchSql } from '../access/list-filters.ts'
import { listPage, nameAndTimeSorts, type ListSource } from '../access/list-page.ts'
import { resolveProfilePhotoKey } from '../access/references.ts'
import { usableProvider } from './providers.service.ts'
import { selectColumns, unprefix } from '../platform/sql.ts'
import { mergeMetadata } from '../access/metadata.ts'
import type { ResourceCtx } from '../context.ts'

const SOURCE: ListSource = {
  from: 'tools t left join providers pv on pv.id = t.provider_id',
  columns: `${selectColumns('t', '', TOOL_FIELDS)}, pv.uuid as "providerUuid", pv.slug as "providerSlug", pv.name as "providerName"`,
  alias: 't',
  sorts: nameAndTimeSorts('t'),
}

const toWire = (ctx: ResourceCtx, row: Record<string, unknown>) => toTool(unprefix<ToolRow>(row, ''), ctx.auth.user.id, ctx.config.appUrl)

async function load(ctx: ResourceCtx, id: number): Promise<{ data: TTool }> {
  const [row] = await ctx.em.execute(`select ${SOURCE.columns} from ${SOURCE.from} where t.id = ?`, [id])
  return { data: toWire(ctx, row) }
}

/**
 * Tools the caller may see in the request's workspace (docs/api/tenancy.md; `visibility=public`
 * lists every public tool), filtered by `search` (name and description, case-insensitive) and
 * `provider_uuid`.
 */
export async function list(ctx: ResourceCtx, input: TToolListInput) {
  const where = new Conditions(listScopeSql('t', 'tools', ctx, input.visibility))
  if (input.provider_uuid) where.add('pv.uuid = ?', input.provider_uuid)
  if (input.search) where.add(searchSql(['t.name', 't.description'], input.search))
  const query = { search: input.search, visibility: input.visibility, provider_uuid: input.provider_uuid }
  return listPage(ctx, SOURCE, where.toSql(), input, { path: '/api/v1/tools', query }, (row) => toWire(ctx, row))
}

/** Retrieves a tool the caller may see. @throws NotFoundError otherwise. */
export async function retrieve(ctx: ResourceCtx, uuid: string): Promise<{ data: TTool }> {
  const access = await requireResource(ctx, 'tools', 'Tool', uuid, 'read')
  return load(ctx, access.id)
}

/** `input_schema` must compile. @throws ValidationError naming it. */
function checkInputSchema(schema: Record<string, unknown> | undefined): void {
  if (schema === undefined) return
  const problem = jsonSchemaProblem(schema)
  if (problem) throw new ValidationError(['input_schema'], problem)
}

/** The fields of a create or update body that only one tool type takes. */
type TypedFields = Partial<Pick<TCreateToolInput, 'url' | 'method' | 'input_schema' | 'allowed_tools'>>

/**
 * What `type` allows (docs/api/mcp-tools.md): an `mcp` tool's `url` is its server's endpoint (no
 * `{{placeholders}}`), it talks to it with `POST` and takes each remote tool's own schema (so
 * `method` can only be `POST` and `input_schema` only `{}`); `allowed_tools` is for `mcp` tools only.
 * @throws ValidationError naming the first field that does not fit.
 */
function checkTypeFields(type: ToolType, input: TypedFields): void {
  if (type === 'api') {
    if (input.allowed_tools) throw new ValidationError(['allowed_tools'], 'only mcp tools take allowed_tools')
    return
  }
  if (input.url !== undefined && /\{\{|\}\}/.test(input.url)) {
    throw new ValidationError(['url'], "an mcp tool's url is its server's endpoint: no {{placeholders}}")
  }
  if (input.method !== undefined && input.method !== 'POST') {
    throw new ValidationError(['method'], 'an mcp tool talks to its server with POST: method can only be POST')
  }
  if (input.input_schema !== undefined && Object.keys(input.input_schema).length > 0) {
    throw new ValidationError(['input_schema'], "an mcp tool takes each of its server's tools' own schema: input_schema must be {}")
  }
}

/** The provider id of `provider_uuid`: a visible provider of type `tool`, or null. */
async function providerIdOf(ctx: ResourceCtx, uuid: string | null | undefined): Promise<number | null | undefined> {
  if (uuid === undefined || uuid === null) return uuid
  return usableProvider(ctx, uuid, ['provider_uuid'], 'tool')
}

/**
 * The checks of a tool's create body that need no database: the fields its type takes (see
 * {@link checkTypeFields}) and an `input_schema` that compiles. Also run by an agent import
 * (src/agents/agent-portable.service.ts) before anything is written.
 * @returns the tool's type (`api` unless given).
 * @throws ValidationError naming the field (`url`, `method`, `input_schema`, `allowed_tools`).
 */
export function checkNewTool(input: TypedFields & { type?: ToolType }): ToolType {
  const type = input.type ?? 'api'
  checkTypeFields(type, input)
  checkInputSchema(input.input_schema)
  return type
}

/** A create body without the references the caller resolved already (provider, photo) and the workspace context. */
export type NewToolInput = Omit<TCreateToolInput, 'workspace_uuid' | 'provider_uuid' | 'profile_photo_key' | 'type'>

/**
 * Adds a new tool owned by the caller in the request's workspace to `em`, written at its next
 * flush: the create's defaults over a body checked by {@link checkNewTool}, whose references were
 * resolved (`providerId`, `photoKey`). `em` may be a transaction that writes more (an agent import).
 */
export function newTool(
  em: Em,
  ctx: ResourceCtx,
  input: NewToolInput,
  refs: { type: ToolType; providerId: number | null; photoKey: string | null },
) {
  const type = refs.type
  return em.create(Tool, {
    name: input.name,
    description: input.description ?? '',
    type,
    provider: refs.providerId,
    method: input.method ?? (type === 'mcp' ? 'POST' : 'GET'),
    url: input.url,
    inputSchema: input.input_schema ?? {},
    allowedTools: type === 'mcp' ? (input.allowed_tools ?? null) : null,
    requiresApproval: input.requires_approval ?? false,
    idempotent: input.idempotent ?? false,
    credits: input.credits ?? 0,
    profilePhotoKey: refs.photoKey,
    profilePhotoConfig: input.profile_photo_config ?? null,
    visibility: input.visibility ?? 'private',
    metadata: input.metadata ?? {},
    user: ctx.auth.user.id,
    workspace: ctx.workspace.workspace.id,
  })
}

/** A tool's own fields the audit log records (docs/api/audit.md). */
const AUDITED = [
  'name',
  'description',
  'type',
  'method',
  'url',
  'inputSchema',
  'allowedTools',
  'requiresApproval',
  'idempotent',
  'credits',
  'profilePhotoKey',
  'profilePhotoConfig',
  'visibility',
  'metadata',
] as const

/** A tool's fields as the audit log records them, its provider by uuid. */
const auditedFields = (tool: ITool, providerUuid: string | null): Record<string, unknown> => ({
  ...entityFields(tool, AUDITED),
  provider_uuid: providerUuid,
})

/** The uuid of provider `id` (null for none), read with `em`. */
async function providerUuidOf(em: Em, id: number | null | undefined): Promise<string | null> {
  if (id === null || id === undefined) return null
  const row = await queries(em).selectFrom('providers').select('uuid').where('id', '=', id).executeTakeFirst()
  return row?.uuid ?? null
}

/**
 * Creates a tool in the request's workspace, owned by the caller.
 * @throws ValidationError (`input_schema` does not compile, `provider_uuid` not a visible tool
 *   provider, `profile_photo_key` not an image the caller uploaded, a field the type does not
 *   take: see {@link checkTypeFields}).
 */
export async function create(ctx: ResourceCtx, input: TCreateToolInput): Promise<{ data: TTool }> {
  const type = checkNewTool(input)
  const providerId = await providerIdOf(ctx, input.provider_uuid)
  const photoKey = await resolveProfilePhotoKey(ctx, input.profile_photo_key)
  const id = await ctx.em.transactional(async (em) => {
    const tool = newTool(em, ctx, input, { type, providerId: providerId ?? null, photoKey: photoKey ?? null })
    await em.flush()
    await audit(em, ctx, {
      action: 'tool.create',
      resource: { type: 'tool', uuid: tool.uuid },
      changes: fieldChanges(null, auditedFields(tool, input.provider_uuid ?? null)),
    })
    return tool.id
  })
  return load(ctx, id)
}

/**
 * Updates a tool (write permission): omitted fields kept, `null` clears, `input_schema` and
 * `allowed_tools` replaced, `metadata` merged key by key (`null` removes a key); `type` is fixed
 * at creation. Everything is checked before anything is written.
 * @throws NotFoundError (not visible), ForbiddenError (too weak a permission), ValidationError
 *   (as for create, or another `type`).
 */
export async function update(ctx: ResourceCtx, input: TUpdateToolInput): Promise<{ data: TTool }> {
  const access = await requireResource(ctx, 'tools', 'Tool', input.tool_uuid, 'write')
  checkInputSchema(input.input_schema)
  const providerId = await providerIdOf(ctx, input.provider_uuid)
  const photoKey = await resolveProfilePhotoKey(ctx, input.profile_photo_key)
  // Locked, so two concurrent metadata merges cannot lose each other's keys.
  await ctx.em.transactional(async (em) => {
    const entity = await em.findOneOrFail(Tool, access.id, { lockMode: LockMode.PESSIMISTIC_WRITE })
    if (input.type !== undefined && input.type !== entity.type) {
      throw new ValidationError(['type'], `type is fixed at creation (${entity.type})`)
    }
    checkTypeFields(entity.type, input)
    const providerBefore = await providerUuidOf(em, entity.provider?.id)
    const before = auditedFields(entity, providerBefore)
    const metadata = input.metadata === undefined ? undefined : mergeMetadata(entity.metadata, input.metadata)
    if (metadata && jsonBytes(metadata) > TOOL_JSON_MAX_BYTES) {
      throw new ValidationError(['metadata'], `metadata must not exceed ${TOOL_JSON_MAX_BYTES} bytes as JSON after merging`)
    }
    if (input.name !== undefined) entity.name = input.name
    if (input.description !== undefined) entity.description = input.description ?? ''
    if (providerId !== undefined) entity.provider = providerId === null ? null : em.getReference(Provider, providerId)
    if (input.method !== undefined) entity.method = input.method
    if (input.url !== undefined) entity.url = input.url
    if (input.input_schema !== undefined) entity.inputSchema = input.input_schema
    if (input.allowed_tools !== undefined) entity.allowedTools = input.allowed_tools
    if (input.requires_approval !== undefined) entity.requiresApproval = input.requires_approval
    if (input.idempotent !== undefined) entity.idempotent = input.idempotent
    if (input.credits !== undefined) entity.credits = input.credits
    if (photoKey !== undefined) entity.profilePhotoKey = photoKey
    if (input.profile_photo_config !== undefined) entity.profilePhotoConfig = input.profile_photo_config
    if (input.visibility !== undefined) entity.visibility = input.visibility
    if (metadata !== undefined) entity.metadata = metadata
    await em.flush()
    const providerAfter = providerId === undefined ? providerBefore : (input.provider_uuid ?? null)
    await audit(em, ctx, {
      action: 'tool.update',
      resource: { type: 'tool', uuid: access.uuid },
      changes: fieldChanges(before, auditedFields(entity, providerAfter)),
    })
  })
  return load(ctx, access.id)
}

/**
 * Soft-deletes a tool (admin permission) and removes it from agents, as the foreign key does on
 * a hard delete.
 * @throws NotFoundError (not visible), ForbiddenError (too weak a permission).
 */
export async function remove(ctx: ResourceCtx, uuid: string): Promise<void> {
  const access = await requireResource(ctx, 'tools', 'Tool', uuid, 'admin')
  await ctx.em.transactional(async (em) => {
    const db = queries(em)
    await db
      .updateTable('tools')
      .set((eb) => ({ deleted_at: eb.fn<Date>('now'), updated_at: eb.fn<Date>('now') }))
      .where('id', '=', access.id)
      .execute()
    await db.deleteFrom('agent_tools').where('tool_id', '=', access.id).execute()
    await audit(em, ctx, { action: 'tool.delete', resource: { type: 'tool', uuid: access.uuid } })
  })
}
