/**
 * What an agent binds (docs/api/resources.md, "Agents"): its tools (each with the account
 * it is called with), workflows, knowledge files (`file.keys`) and categories. Everything a
 * request names is resolved and checked first ({@link resolveAgentLinks}, no writes); the
 * pivots are then replaced inside the caller's transaction ({@link writeAgentLinks}).
 *
 * A tool, account or workflow the caller cannot see is a 400 naming that field (for example
 * `tools.0.account_uuid`), with the same message whether it exists elsewhere or not at all.
 */
import { serviceScopeSql, viewerOf } from '../access/resource-access.ts'
import { visibleSql } from '../access/visibility.ts'
import type { Em } from '../platform/db.ts'
import { ValidationError } from '../platform/errors.ts'
import type { TCreateAgentInput } from '../schemas/agent-input.schema.ts'
import { resolveCategoryUuids, setCategories } from './categories.service.ts'
import type { ResourceCtx } from '../context.ts'
import { resolveMediaKeys } from './media-keys.ts'

/** The resolved bindings of a request; a member is undefined when the request left it out (kept). */
export interface AgentLinks {
  tools?: { toolId: number; accountId: number | null }[]
  workflowIds?: number[]
  mediaIds?: number[]
  categoryIds?: number[]
}

type LinkInput = Pick<TCreateAgentInput, 'tools' | 'workflows' | 'file' | 'category_uuids'>

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

/** Resolves `workflows`. @throws ValidationError naming `workflows.N.workflow_uuid`. */
async function resolveWorkflows(ctx: ResourceCtx, links: NonNullable<LinkInput['workflows']>): Promise<number[]> {
  const rows = await visibleRows(ctx, 'workflows', links.map((link) => link.workflow_uuid))
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

/**
 * Replaces the rows of one agent in a pivot with `rows` (each the values of `columns` after
 * `agent_id`), numbering them by `position` in the order given.
 */
async function replacePivot(em: Em, pivot: string, columns: string[], agentId: number, rows: unknown[][]): Promise<void> {
  await em.execute(`delete from ${pivot} where agent_id = ?`, [agentId])
  if (!rows.length) return
  const values = rows.map(() => `(${['?', ...columns.map(() => '?'), '?'].join(', ')}, now())`).join(', ')
  await em.execute(
    `insert into ${pivot} (agent_id, ${columns.join(', ')}, position, created_at) values ${values}`,
    rows.flatMap((row, position) => [agentId, ...row, position]),
  )
}

/**
 * Replaces each pivot the links name (those left undefined are kept). Run it inside the
 * caller's transaction, after {@link resolveAgentLinks}.
 */
export async function writeAgentLinks(em: Em, agentId: number, links: AgentLinks): Promise<void> {
  if (links.tools) {
    await replacePivot(em, 'agent_tools', ['tool_id', 'account_id'], agentId, links.tools.map((tool) => [tool.toolId, tool.accountId]))
  }
  if (links.workflowIds) await replacePivot(em, 'agent_workflows', ['workflow_id'], agentId, links.workflowIds.map((id) => [id]))
  if (links.mediaIds) await replacePivot(em, 'agent_files', ['media_id'], agentId, links.mediaIds.map((id) => [id]))
  if (links.categoryIds) await setCategories(em, 'agents', agentId, links.categoryIds)
}
