/**
 * Reading agents (specification: "Agent (response shape)"; docs/api/conventions.md and docs/api/tenancy.md): one SQL
 * statement builds a whole agent, or a whole page of agents, with the caller's permission, the
 * counts, `is_favorite`, the owner and workspace (joined) and each embedded collection as a
 * correlated `json_agg` sub-select. So a retrieve is one statement after the workspace context;
 * lists (./agent-list.service.ts) reuse the same select list, with tools and workflows read as
 * links whose rows the list reads once per page ({@link linkedRowsSql}).
 */
import { serviceScopeSql, viewerOf } from '../access/resource-access.ts'
import { permissionOf, permissionSql, visibleSql, favoriteSql } from '../access/visibility.ts'
import { executePrepared } from '../platform/db.ts'
import { NotFoundError } from '../platform/errors.ts'
import {
  AGENT_FIELDS,
  AGENT_RELATIONS,
  toAgent,
  type AgentFileRow,
  type AgentRecord,
  type AgentRelation,
  type AgentRow,
  type ShareRow,
  type TAgent,
  USAGE_WINDOW_DAYS,
} from './agent.schema.ts'
import type { TCategory } from '../access/resource.schema.ts'
import { TOOL_FIELDS, type AgentToolRow } from '../catalog/index.ts'
import type { UserRow, WorkspaceRow } from '../access/user-workspace.schema.ts'
import { WORKFLOW_FIELDS, type WorkflowRow } from '../workflows/index.ts'
import {
  jsonObject,
  selectColumns,
  unprefixer,
  USER_FIELDS,
  userColumns,
  WORKSPACE_FIELDS,
  workspaceColumns,
  type SqlFragment,
} from '../platform/sql.ts'
import type { SharePermission } from '../../entities/index.ts'
import { isRecord, jsonValueOf } from '../access/wire.ts'
import type { ResourceCtx } from '../context.ts'

/** Each collection as a correlated sub-select over the agent `a`; no parameters. */
const COLLECTIONS: Record<Exclude<AgentRelation, 'user' | 'workspace'>, string> = {
  // Live tools only, in the order sent; the bound account only while it is live (never its secret).
  tools: `coalesce((select json_agg(${jsonObject('t', TOOL_FIELDS, {
    providerUuid: 'tp.uuid',
    providerSlug: 'tp.slug',
    providerName: 'tp.name',
    accountUuid: 'ac.uuid',
    accountName: 'ac.name',
    accountProviderUuid: 'ap.uuid',
    accountSecretHint: 'ac.secret_hint',
  })} order by x.position, x.id)
    from agent_tools x join tools t on t.id = x.tool_id and t.deleted_at is null
    left join providers tp on tp.id = t.provider_id
    left join accounts ac on ac.id = x.account_id and ac.deleted_at is null
    left join providers ap on ap.id = ac.provider_id
    where x.agent_id = a.id), '[]'::json)`,
  workflows: `coalesce((select json_agg(${jsonObject('f', WORKFLOW_FIELDS)} order by x.position, x.id)
    from agent_workflows x join workflows f on f.id = x.workflow_id and f.deleted_at is null
    where x.agent_id = a.id), '[]'::json)`,
  shares: `coalesce((select json_agg(json_build_object('entityType', s.entity_type, 'permission', s.permission,
      'user', case when su.id is null then null else ${jsonObject('su', USER_FIELDS)} end,
      'workspace', case when sw.id is null then null else ${jsonObject('sw', WORKSPACE_FIELDS)} end) order by s.id)
    from shares s
    left join users su on s.entity_type = 'user' and su.id = s.entity_id
    left join workspaces sw on s.entity_type = 'workspace' and sw.id = s.entity_id and sw.deleted_at is null
    where s.resource_type = 'agents' and s.resource_id = a.id), '[]'::json)`,
  categories: `coalesce((select json_agg(json_build_object('uuid', c.uuid, 'slug', c.slug, 'name', c.name,
      'description', c.description) order by c.position, c.id)
    from agent_categories x join categories c on c.id = x.category_id where x.agent_id = a.id), '[]'::json)`,
  files: `coalesce((select json_agg(json_build_object('key', m.key, 'mimeType', m.mime_type, 'size', m.size) order by x.position, x.id)
    from agent_files x join media m on m.id = x.media_id where x.agent_id = a.id), '[]'::json)`,
}

/** The collections a list reads as links (see {@link LINKS}). */
export type LinkedRelation = 'tools' | 'workflows'

/**
 * In a list, each agent's tools and workflows as links only, in the order of COLLECTIONS: `[tool
 * id, account id]` pairs and workflow ids, deleted rows included. The rows are read once per page
 * ({@link linkedRowsSql}), live ones only, and a link whose tool, workflow or account is not
 * among them is left out (the tool or workflow) or has no account: the same rules as
 * COLLECTIONS, applied in Node. No parameters.
 */
const LINKS: Record<LinkedRelation, string> = {
  tools: `coalesce((select json_agg(json_build_array(x.tool_id, x.account_id) order by x.position, x.id)
    from agent_tools x where x.agent_id = a.id), '[]'::json)`,
  workflows: `coalesce((select json_agg(x.workflow_id order by x.position, x.id)
    from agent_workflows x where x.agent_id = a.id), '[]'::json)`,
}

/** Column of {@link LINKS}' links of `relation` in a list row. */
export const linksColumn = (relation: LinkedRelation): string => `${relation}Links`

/**
 * The live rows the links of a page's agents name, once each, as a json array of objects keyed
 * by `id` (null when there is none): tools with their provider's keys, accounts with their
 * provider's uuid and secret hint (never the secret), workflows; the fields of COLLECTIONS.
 * `page` names the relation of the page's rows, read with {@link selectSql}'s `linked`: the ids
 * come from its links, so the pivot tables are read once. No parameters.
 */
export function linkedRowsSql(rows: 'tools' | 'accounts' | 'workflows', page: string): string {
  const toolLinks = `${page}, json_array_elements(${page}."${linksColumn('tools')}") l`
  switch (rows) {
    case 'tools':
      return `(select json_agg(${jsonObject('t', TOOL_FIELDS, { providerUuid: 'tp.uuid', providerSlug: 'tp.slug', providerName: 'tp.name' })})
    from tools t left join providers tp on tp.id = t.provider_id
    where t.deleted_at is null and t.id in (select (l->>0)::bigint from ${toolLinks}))`
    case 'accounts':
      return `(select json_agg(json_build_object('id', ac.id, 'accountUuid', ac.uuid, 'accountName', ac.name,
      'accountProviderUuid', ap.uuid, 'accountSecretHint', ac.secret_hint))
    from accounts ac left join providers ap on ap.id = ac.provider_id
    where ac.deleted_at is null and ac.id in (select (l->>1)::bigint from ${toolLinks}))`
    case 'workflows':
      return `(select json_agg(${jsonObject('f', WORKFLOW_FIELDS)})
    from workflows f
    where f.deleted_at is null and f.id in (select v::bigint from ${page}, json_array_elements_text(${page}."${linksColumn('workflows')}") v))`
  }
}

/** The collection counts; a list that reads a collection's links counts them instead (see {@link LINKS}). */
const COLLECTION_COUNTS: Record<LinkedRelation, string> = {
  tools: `(select count(*) from agent_tools x join tools t on t.id = x.tool_id where x.agent_id = a.id and t.deleted_at is null)::int as "toolsCount"`,
  workflows: `(select count(*) from agent_workflows x join workflows f on f.id = x.workflow_id
     where x.agent_id = a.id and f.deleted_at is null)::int as "workflowsCount"`,
}

const COUNTS = [
  // Evaluations' threads and runs are not the agent's use (docs/api/evaluations.md).
  `(select count(*) from threads th where th.agent_id = a.id and th.deleted_at is null and th.evaluation_uuid is null)::int as "threadsCount"`,
  // Runs of the last 30 days (src/agents/agent.schema.ts): a range of runs(agent_id, created_at).
  `(select count(*) from runs r where r.agent_id = a.id and r.created_at > now() - interval '${USAGE_WINDOW_DAYS} days' and r.evaluation_uuid is null)::int as "runsInWindow"`,
]

/**
 * The select list and joins of an agent read, embedding `relations`; parameters first; `key`
 * names the text (the same key, the same columns and joins). With `linked`, the embedded tools
 * and workflows are read as links instead (see {@link LINKS}: a list reads their rows once per
 * page), and their counts are left to the caller, who counts the links that name live rows.
 */
export function selectSql(
  ctx: ResourceCtx,
  relations: ReadonlySet<AgentRelation>,
  options: { linked?: boolean } = {},
): { columns: string; joins: string; key: string; params: unknown[] } {
  const viewer = viewerOf(ctx)
  const permission = permissionSql('a', 'agents', viewer)
  const favorite = favoriteSql('a', 'agents', viewer.userId)
  const linked = options.linked === true
  const isLinked = (relation: AgentRelation): relation is LinkedRelation =>
    linked && (relation === 'tools' || relation === 'workflows') && relations.has(relation)
  // The text depends only on the relations, `linked` and whether the viewer manages the
  // workspace (permissionSql's shape): built once per variant, not per request.
  const key = `${[...relations].sort().join(',')}|${linked}|${viewer.role === 'owner' || viewer.role === 'admin'}`
  let text = selectTexts.get(key)
  if (!text) {
    text = {
      columns: [
        selectColumns('a', 'a_', AGENT_FIELDS),
        `${permission.sql} as "permission"`,
        `${favorite.sql} as "isFavorite"`,
        ...(['tools', 'workflows'] as const).flatMap((relation) => (isLinked(relation) ? [] : [COLLECTION_COUNTS[relation]])),
        ...COUNTS,
        ...(relations.has('user') ? [userColumns('u', 'u_')] : []),
        ...(relations.has('workspace') ? [workspaceColumns('w', 'w_')] : []),
        ...AGENT_RELATIONS.flatMap((relation) => {
          if (isLinked(relation)) return [`${LINKS[relation]} as "${linksColumn(relation)}"`]
          return relation !== 'user' && relation !== 'workspace' && relations.has(relation)
            ? [`${COLLECTIONS[relation]} as "${relation}"`]
            : []
        }),
      ].join(',\n '),
      joins: [
        relations.has('user') ? 'join users u on u.id = a.user_id' : '',
        relations.has('workspace') ? 'join workspaces w on w.id = a.workspace_id' : '',
      ].join(' '),
    }
    selectTexts.set(key, text)
  }
  return { ...text, key, params: [...permission.params, ...favorite.params] }
}
const selectTexts = new Map<string, { columns: string; joins: string }>()

/** A `json_agg` member of a {@link jsonRow} row as an array (already parsed with the row). */
function jsonRows<T>(value: unknown): T[] {
  return Array.isArray(value) ? value : []
}

const agentOf = unprefixer<AgentRow>('a_', AGENT_FIELDS)
const userOf = unprefixer<UserRow>('u_', USER_FIELDS)
const workspaceOf = unprefixer<WorkspaceRow>('w_', WORKSPACE_FIELDS)

/**
 * One result row ({@link jsonRow}) -> what the mapper needs. Collections read as links
 * ({@link selectSql}'s `linked`) are not in `relations` here: the caller adds them and their
 * counts (`toolsCount`/`workflowsCount` are NaN until then).
 */
export function toRecord(row: Record<string, unknown>, relations: ReadonlySet<AgentRelation>, permission: SharePermission): AgentRecord {
  const record: AgentRecord = {
    agent: agentOf(row),
    permission,
    toolsCount: Number(row.toolsCount),
    workflowsCount: Number(row.workflowsCount),
    threadsCount: Number(row.threadsCount),
    runsInWindow: Number(row.runsInWindow),
    isFavorite: row.isFavorite === true,
    user: relations.has('user') ? userOf(row) : null,
    workspace: relations.has('workspace') ? workspaceOf(row) : null,
  }
  if (relations.has('tools')) record.tools = jsonRows<AgentToolRow>(row.tools)
  if (relations.has('workflows')) record.workflows = jsonRows<WorkflowRow>(row.workflows)
  if (relations.has('shares')) record.shares = jsonRows<ShareRow>(row.shares)
  if (relations.has('categories')) record.categories = jsonRows<TCategory>(row.categories)
  if (relations.has('files')) record.files = jsonRows<AgentFileRow>(row.files)
  return record
}

const EVERYTHING: ReadonlySet<AgentRelation> = new Set(AGENT_RELATIONS)

/** A `row_to_json` column (`row`) as the row it stands for (the driver answers `json` parsed; text is parsed here). */
export function jsonRow(row: Record<string, unknown>): Record<string, unknown> | undefined {
  const parsed = jsonValueOf(row.row)
  return isRecord(parsed) ? parsed : undefined
}

/**
 * Runs a single-agent read (every relation). `kind` names the WHERE's shape, which with the
 * viewer's role fixes the whole text.
 */
async function readOne(ctx: ResourceCtx, kind: string, where: SqlFragment): Promise<Record<string, unknown> | undefined> {
  const select = selectSql(ctx, EVERYTHING)
  // One JSON column rather than ~45 typed ones: the driver parses one JSON text natively
  // instead of decoding every column of the row description and row.
  // A named prepared statement on PostgreSQL: planning these reads costs several times running them.
  const rows = await executePrepared(
    ctx.deps.orm,
    () => ctx.em,
    `one|${kind}|${ctx.workspace.role}`,
    () => `select row_to_json(r) as "row" from (select ${select.columns}\n from agents a ${select.joins} where ${where.sql}) r`,
    [...select.params, ...where.params],
  )
  return rows.length ? jsonRow(rows[0]) : undefined
}

/**
 * `GET /api/v1/agents/{agent_uuid}` in one statement: the access check (visibility, shares,
 * service scope, live row) and the whole agent with every relation.
 * @throws NotFoundError when there is no such live agent or the caller may not see it.
 */
export async function retrieveAgent(ctx: ResourceCtx, uuid: string): Promise<TAgent> {
  const viewer = viewerOf(ctx)
  const visible = visibleSql('a', 'agents', viewer)
  const scope = serviceScopeSql('a', ctx)
  const row = await readOne(ctx, 'uuid', {
    sql: `a.uuid = ? and a.deleted_at is null and ${visible.sql} and ${scope.sql}`,
    params: [uuid, ...visible.params, ...scope.params],
  })
  const permission = row ? permissionOf(row.permission) : null
  if (!row || !permission) throw new NotFoundError('Agent')
  return toAgent(toRecord(row, EVERYTHING, permission), viewer.userId, ctx.config.appUrl)
}

/**
 * One agent by id with every relation, after the caller's access was checked and their write
 * committed (create, update, share). The caller's permission is read again for `shares`; a
 * caller whose own change took their access away (an `admin` grantee removing their share) is
 * answered as a reader, once, with `shares` hidden.
 */
export async function loadAgent(ctx: ResourceCtx, id: number): Promise<TAgent> {
  const row = await readOne(ctx, 'id', { sql: 'a.id = ?', params: [id] })
  if (!row) throw new NotFoundError('Agent')
  const permission = permissionOf(row.permission) ?? 'read'
  return toAgent(toRecord(row, EVERYTHING, permission), ctx.auth.user.id, ctx.config.appUrl)
}
