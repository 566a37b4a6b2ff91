/**
 * Which referenced rows the caller may use (docs/api/tenancy.md, "Permissions"): the uploads,
 * tools, accounts, workflows and categories a request names by key or uuid, resolved to ids
 * before anything is written. A reference the caller cannot use is a 400 naming its field (for
 * example `tools.0.account_uuid`), with the same message whether the row exists elsewhere or not
 * at all, so no answer reveals another tenant's rows.
 *
 * - uploads (`profile_photo_key`, `file.keys`): files the caller uploaded or of the request's
 *   workspace (docs/api/resources.md, "Media");
 * - tools, accounts and workflows: live rows visible to the caller in the caller's service scope;
 * - categories: the global catalogue, every existing category.
 */
import type { ResourceCtx } from '../context.ts'
import { ValidationError, type FieldPath } from '../platform/errors.ts'
import { listScopeSql, serviceScopeSql, viewerOf } from './resource-access.ts'
import { visibleSql } from './visibility.ts'

/** A stored upload as the resolvers answer it. */
export interface MediaRef {
  id: number
  key: string
  mimeType: string
  size: number
}

/**
 * Resolves `keys` (in order) to uploads the caller may use.
 * @param field the request field holding the keys; issues name `[...field, index]`, or `field`
 *   itself when `single` is set.
 * @param options.imagesOnly refuse uploads that are not images (profile photos).
 * @throws ValidationError naming the first unusable key.
 */
export async function resolveMediaKeys(
  ctx: ResourceCtx,
  keys: readonly string[],
  field: FieldPath,
  options: { imagesOnly?: boolean; single?: boolean } = {},
): Promise<MediaRef[]> {
  if (!keys.length) return []
  const rows = await ctx.em.execute(
    `select m.id::float8 as id, m.key, m.mime_type as "mimeType", m.size::float8 as size from media m
     where m.key in (?) and (m.user_id = ? or m.workspace_id = ?)`,
    [keys, ctx.auth.user.id, ctx.workspace.workspace.id],
  )
  const byKey = new Map(rows.map((row) => [String(row.key), row]))
  return keys.map((key, index) => {
    const path = options.single ? field : [...field, index]
    const row = byKey.get(key)
    if (!row) throw new ValidationError(path, 'No uploaded file has this key')
    const mimeType = String(row.mimeType)
    if (options.imagesOnly && !mimeType.startsWith('image/')) throw new ValidationError(path, 'The file is not an image')
    return { id: Number(row.id), key, mimeType, size: Number(row.size) }
  })
}

/** Resolves an optional single `profile_photo_key`: undefined stays undefined, null clears. */
export async function resolveProfilePhotoKey(ctx: ResourceCtx, key: string | null | undefined): Promise<string | null | undefined> {
  if (key === undefined || key === null) return key
  await resolveMediaKeys(ctx, [key], ['profile_photo_key'], { imagesOnly: true, single: true })
  return key
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * Resolves `category_uuids` (in order, duplicates allowed and collapsed) to category ids.
 * Categories are a global catalogue, so every existing category may be used.
 * @param field the request field holding the uuids; issues name `[...field, index]`.
 * @returns the ids, without duplicates, in the order first given.
 * @throws ValidationError naming the first uuid that names no category.
 */
export async function resolveCategoryUuids(ctx: ResourceCtx, uuids: readonly string[], field: FieldPath): Promise<number[]> {
  if (!uuids.length) return []
  const wellFormed = uuids.filter((uuid) => UUID_RE.test(uuid))
  const rows = wellFormed.length
    ? await ctx.em.execute(`select c.id::float8 as id, c.uuid from categories c where c.uuid in (?)`, [wellFormed])
    : []
  const byUuid = new Map(rows.map((row) => [String(row.uuid).toLowerCase(), Number(row.id)]))
  const ids: number[] = []
  uuids.forEach((uuid, index) => {
    const id = byUuid.get(uuid.toLowerCase())
    if (id === undefined) throw new ValidationError([...field, index], 'No category has this uuid')
    if (!ids.includes(id)) ids.push(id)
  })
  return ids
}

/** The resolved bindings of a request; a member is undefined when the request left it out (kept). */
export interface AgentLinks {
  tools?: { toolId: number; accountId: number | null }[]
  workflowIds?: number[]
  mediaIds?: number[]
  categoryIds?: number[]
}

/** The links of an agent's create or update body (src/agents/agent-input.schema.ts), as far as they are resolved here. */
interface LinkInput {
  tools?: { tool_uuid: string; account_uuid?: string | null }[]
  workflows?: { workflow_uuid: string }[]
  file?: { keys: string[] }
  category_uuids?: string[]
}

/** Live rows of `table` with these uuids that the caller may see, in the caller's service scope. */
async function visibleRows(ctx: ResourceCtx, table: 'tools' | 'accounts' | 'workflows', uuids: string[], extra = '', join = '') {
  if (!uuids.length) return new Map<string, Record<string, unknown>>()
  const visible = visibleSql('r', table, viewerOf(ctx))
  const scope = serviceScopeSql('r', ctx)
  const rows = await ctx.em.execute(
    `select r.id::float8 as id, r.uuid${extra} from ${table} r ${join}
     where r.uuid in (?) and r.deleted_at is null and ${visible.sql} and ${scope.sql}`,
    [uuids, ...visible.params, ...scope.params],
  )
  return new Map(rows.map((row) => [String(row.uuid).toLowerCase(), row]))
}

/**
 * Resolves `tools`: each tool must be visible to the caller; `account_uuid`, when given, an
 * account visible to the caller of the tool's provider. A tool whose provider is a custom one
 * that authenticates (`auth_scheme` other than `none`) needs an account; built-in providers may
 * take their credentials from the server's environment, and a tool without a provider needs none.
 * @throws ValidationError naming `tools.N.tool_uuid` or `tools.N.account_uuid`.
 */
async function resolveTools(ctx: ResourceCtx, links: NonNullable<LinkInput['tools']>): Promise<AgentLinks['tools']> {
  const tools = await visibleRows(
    ctx,
    'tools',
    links.map((link) => link.tool_uuid),
    `, r.provider_id::float8 as "providerId", p.is_builtin as "builtin", p.auth_scheme as "authScheme"`,
    'left join providers p on p.id = r.provider_id',
  )
  const accountUuids = links.flatMap((link) => (link.account_uuid ? [link.account_uuid] : []))
  const accounts = await visibleRows(ctx, 'accounts', accountUuids, `, r.provider_id::float8 as "providerId"`)
  return links.map((link, index) => {
    const tool = tools.get(link.tool_uuid.toLowerCase())
    if (!tool) throw new ValidationError(['tools', index, 'tool_uuid'], 'No tool you can use has this uuid')
    const providerId = tool.providerId === null ? null : Number(tool.providerId)
    if (!link.account_uuid) {
      if (providerId !== null && tool.builtin === false && tool.authScheme !== 'none') {
        throw new ValidationError(['tools', index, 'account_uuid'], "The tool's provider needs an account")
      }
      return { toolId: Number(tool.id), accountId: null }
    }
    const account = accounts.get(link.account_uuid.toLowerCase())
    if (!account) throw new ValidationError(['tools', index, 'account_uuid'], 'No account you can use has this uuid')
    if (providerId === null || Number(account.providerId) !== providerId) {
      throw new ValidationError(['tools', index, 'account_uuid'], "The account does not belong to the tool's provider")
    }
    return { toolId: Number(tool.id), accountId: Number(account.id) }
  })
}

/** A tool an agent of the caller could be bound to, and the account it would be bound with. */
export interface BindableTool {
  uuid: string
  name: string
  description: string
  /** Only for a tool whose provider needs an account (see {@link resolveTools}); null otherwise. */
  accountUuid: string | null
}

/**
 * Tools the caller may list in the request's workspace (the default scope of `GET /api/v1/tools`)
 * that `tools` of an agent would accept as they are: a tool whose provider needs an account
 * comes with one the caller may use (their own first, then the newest) and is left out when there
 * is none. The most recently updated first, at most `limit`.
 */
export async function bindableTools(ctx: ResourceCtx, limit: number): Promise<BindableTool[]> {
  const scope = listScopeSql('t', 'tools', ctx)
  const visibleAccount = visibleSql('a', 'accounts', viewerOf(ctx))
  const accountScope = serviceScopeSql('a', ctx)
  const rows = await ctx.em.execute(
    `select b.uuid, b.name, b.description, case when b."needsAccount" then b."accountUuid" end as "accountUuid" from (
       select t.uuid, t.name, t.description, t.updated_at, t.id,
         (t.provider_id is not null and not pv.is_builtin and pv.auth_scheme <> 'none') as "needsAccount",
         (select a.uuid from accounts a
           where a.provider_id = t.provider_id and a.deleted_at is null and ${visibleAccount.sql} and ${accountScope.sql}
           order by (a.user_id = ?) desc, a.created_at desc, a.id desc limit 1) as "accountUuid"
       from tools t left join providers pv on pv.id = t.provider_id
       where ${scope.sql}) b
     where not b."needsAccount" or b."accountUuid" is not null
     order by b.updated_at desc, b.id desc limit ?`,
    [...visibleAccount.params, ...accountScope.params, ctx.auth.user.id, ...scope.params, limit],
  )
  return rows.map((row) => ({
    uuid: String(row.uuid),
    name: String(row.name),
    description: String(row.description ?? ''),
    accountUuid: row.accountUuid === null || row.accountUuid === undefined ? null : String(row.accountUuid),
  }))
}

/** Resolves `workflows`. @throws ValidationError naming `workflows.N.workflow_uuid`. */
async function resolveWorkflows(ctx: ResourceCtx, links: NonNullable<LinkInput['workflows']>): Promise<number[]> {
  const rows = await visibleRows(
    ctx,
    'workflows',
    links.map((link) => link.workflow_uuid),
  )
  return links.map((link, index) => {
    const row = rows.get(link.workflow_uuid.toLowerCase())
    if (!row) throw new ValidationError(['workflows', index, 'workflow_uuid'], 'No workflow you can use has this uuid')
    return Number(row.id)
  })
}

/**
 * Resolves every binding the request names (tools, workflows, `file.keys`, `category_uuids`),
 * in that order, without writing anything.
 * @throws ValidationError naming the first field that refers to something the caller cannot use.
 */
export async function resolveAgentLinks(ctx: ResourceCtx, input: LinkInput): Promise<AgentLinks> {
  const links: AgentLinks = {}
  if (input.tools) links.tools = await resolveTools(ctx, input.tools)
  if (input.workflows) links.workflowIds = await resolveWorkflows(ctx, input.workflows)
  if (input.file) links.mediaIds = (await resolveMediaKeys(ctx, input.file.keys, ['file', 'keys'])).map((media) => media.id)
  if (input.category_uuids) links.categoryIds = await resolveCategoryUuids(ctx, input.category_uuids, ['category_uuids'])
  return links
}

/** One pivot an agent's links replace: its table, the columns after `agent_id`, the rows. */
export interface AgentPivot {
  table: 'agent_tools' | 'agent_workflows' | 'agent_files' | 'agent_categories'
  columns: string[]
  rows: unknown[][]
  /** Tools, workflows and files keep the order sent (`position`); categories the catalogue's. */
  ordered: boolean
}

/**
 * The pivots that resolved links replace (those the request left out are kept, so absent here),
 * for the caller to write in its transaction with `replacePivotRows` (src/platform/db.ts).
 */
export function agentPivotRows(links: AgentLinks): AgentPivot[] {
  const pivots: AgentPivot[] = []
  if (links.tools) {
    const rows = links.tools.map((tool) => [tool.toolId, tool.accountId])
    pivots.push({ table: 'agent_tools', columns: ['tool_id', 'account_id'], rows, ordered: true })
  }
  if (links.workflowIds)
    pivots.push({ table: 'agent_workflows', columns: ['workflow_id'], rows: links.workflowIds.map((id) => [id]), ordered: true })
  if (links.mediaIds) pivots.push({ table: 'agent_files', columns: ['media_id'], rows: links.mediaIds.map((id) => [id]), ordered: true })
  if (links.categoryIds)
    pivots.push({ table: 'agent_categories', columns: ['category_id'], rows: links.categoryIds.map((id) => [id]), ordered: false })
  return pivots
}
