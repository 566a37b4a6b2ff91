/**
 * Portable agents (docs/api/versions.md, "Portable agents: export and import"): an agent as a
 * document another workspace or installation can import (./agent-portable.schema.ts), and the
 * import that makes it there.
 *
 * The document never holds what belongs to the exporting service: no secret, account, user,
 * workspace, media key or uuid. Providers travel by slug, a model named by uuid by its slug, and
 * workflow node parameters that name a row are replaced ({@link portableNodes}). An import
 * checks everything (the create rules of each part, the accounts it binds, the knowledge URLs)
 * before one transaction writes the agent, its tools, its workflows (inactive), its bindings, its
 * version 1 and its knowledge; the knowledge is queued once that transaction committed.
 */
import { uuidv7 } from 'uuidv7'
import { Agent } from '../../entities/index.ts'
import type { ToolType } from '../../entities/index.ts'
import { agentPivotRows, type AgentLinks } from '../access/references.ts'
import { findResource, requireResourceWith, serviceScopeSql, viewerOf } from '../access/resource-access.ts'
import { visibleSql } from '../access/visibility.ts'
import { toProfilePhotoConfig } from '../access/resource.schema.ts'
import { isRecord, jsonRecordOf, jsonValueOf } from '../access/wire.ts'
import { tools as toolService } from '../catalog/index.ts'
import type { ResourceCtx } from '../context.ts'
import { planSources, queueTrainedFiles, storeDocuments, type PlannedDocument, type TKnowledgeSource } from '../knowledge/index.ts'
import { models } from '../models/index.ts'
import { replacePivotRows } from '../platform/db.ts'
import { NotFoundError, ValidationError, type FieldPath } from '../platform/errors.ts'
import { slugify } from '../platform/slugs.ts'
import { workflows as workflowService } from '../workflows/index.ts'
import { loadAgent } from './agent-read.service.ts'
import {
  AgentDocument,
  AGENT_DOCUMENT_FORMAT,
  AGENT_DOCUMENT_VERSION,
  SELF_AGENT,
  type TAgentDocument,
  type TExportAgentInput,
  type TImportAgentInput,
  type TImportAgentResponse,
  type TPortableKnowledge,
  type TPortableTool,
  type TPortableWorkflow,
} from './agent-portable.schema.ts'
import { recordVersion } from './agent-versions.ts'
import { audit, fieldChanges } from '../access/audit.ts'
import { auditedFields } from './agents.service.ts'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
/**
 * What an imported node parameter holds in place of a row that did not travel: a uuid that names
 * nothing, so the graph is valid and the node fails until someone sets it (the workflow is
 * imported inactive, with a warning).
 */
const NIL_UUID = '00000000-0000-0000-0000-000000000000'
/** Header and query names of an HTTP request node whose values are credentials (dropped on export). */
const CREDENTIAL_NAME = /authorization|cookie|token|secret|passw(or)?d|api[-_]?key|access[-_]?key|^key$|^auth$/i

// ---------------------------------------------------------------------------------------------
// Export
// ---------------------------------------------------------------------------------------------

/**
 * `GET /api/v1/agents/{agent_uuid}/export`: the portable document of an agent the caller may
 * read (a read share is enough), answered as is (not in `data`) with `Content-Disposition:
 * attachment`. Tools and workflows in the agent's order, knowledge oldest first, whatever its status.
 * @throws NotFoundError when the caller may not see the agent.
 */
export async function exportAgent(ctx: ResourceCtx, input: TExportAgentInput): Promise<TAgentDocument> {
  const access = await requireResourceWith<Record<string, unknown>>(
    ctx,
    'agents',
    'Agent',
    input.agent_uuid,
    'read',
    'r.name, r.description, r.instruction, r.metadata, r.profile_photo_config as "profilePhotoConfig"',
  )
  const row = access.row
  const photo = jsonValueOf(row.profilePhotoConfig)
  // Parsed, so what is answered is a document an import takes: rows stored under the create
  // rules always are one.
  const document = AgentDocument.parse({
    format: AGENT_DOCUMENT_FORMAT,
    format_version: AGENT_DOCUMENT_VERSION,
    exported_at: new Date().toISOString(),
    agent: {
      name: String(row.name),
      description: String(row.description ?? ''),
      instruction: String(row.instruction ?? ''),
      metadata: await portableMetadata(ctx, jsonRecordOf(row.metadata)),
      profile_photo_config: isRecord(photo) ? toProfilePhotoConfig(photo) : null,
      visibility: access.visibility,
    },
    tools: await exportTools(ctx, access.id),
    workflows: await exportWorkflows(ctx, access.id, access.uuid),
    knowledge: await exportKnowledge(ctx, access.id),
  })
  const file = slugify(document.agent.name)
  ctx.setHeader(
    'Content-Disposition',
    `attachment; filename="${file === 'workspace' && !/workspace/i.test(document.agent.name) ? 'agent' : file}.agent.json"`,
  )
  return document
}

/** `metadata` with a `large_language_model` uuid as its model's slug (left out when the caller sees no such model). */
async function portableMetadata(ctx: ResourceCtx, metadata: Record<string, unknown>): Promise<Record<string, unknown>> {
  const model = metadata.large_language_model
  if (typeof model !== 'string' || !UUID.test(model)) return metadata
  const found = await models.retrieve(ctx, model).catch((error: unknown) => {
    if (error instanceof NotFoundError) return null
    throw error
  })
  const portable = { ...metadata }
  if (found) portable.large_language_model = found.data.slug
  else delete portable.large_language_model
  return portable
}

/** The agent's live tools in its order, each with its live provider's slug and name. */
async function exportTools(ctx: ResourceCtx, agentId: number): Promise<Record<string, unknown>[]> {
  const rows = await ctx.em.execute(
    `select t.name, t.description, t.type, t.method, t.url, t.input_schema as "inputSchema", t.allowed_tools as "allowedTools",
       t.requires_approval as "requiresApproval", t.metadata, p.slug as "providerSlug", p.name as "providerName"
     from agent_tools x join tools t on t.id = x.tool_id and t.deleted_at is null
     left join providers p on p.id = t.provider_id and p.deleted_at is null
     where x.agent_id = ? order by x.position, x.id`,
    [agentId],
  )
  return rows.map((row, index) => {
    const allowed = jsonValueOf(row.allowedTools)
    return {
      ref: `tool-${index + 1}`,
      name: String(row.name),
      description: String(row.description ?? ''),
      type: row.type,
      method: row.method,
      url: String(row.url),
      input_schema: jsonRecordOf(row.inputSchema),
      allowed_tools: Array.isArray(allowed) ? allowed.map(String) : null,
      requires_approval: row.requiresApproval === true,
      metadata: jsonRecordOf(row.metadata),
      provider: row.providerSlug ? { slug: String(row.providerSlug), name: String(row.providerName ?? '') } : null,
    }
  })
}

/** The agent's live workflows in its order: name, description, the graph made portable and settings. */
async function exportWorkflows(ctx: ResourceCtx, agentId: number, agentUuid: string): Promise<Record<string, unknown>[]> {
  const rows = await ctx.em.execute(
    `select w.name, w.description, w.nodes, w.edges, w.settings
     from agent_workflows x join workflows w on w.id = x.workflow_id and w.deleted_at is null
     where x.agent_id = ? order by x.position, x.id`,
    [agentId],
  )
  return rows.map((row, index) => {
    const nodes = jsonValueOf(row.nodes)
    const edges = jsonValueOf(row.edges)
    return {
      ref: `workflow-${index + 1}`,
      name: String(row.name),
      description: String(row.description ?? ''),
      nodes: portableNodes(Array.isArray(nodes) ? nodes : [], agentUuid),
      edges: Array.isArray(edges) ? edges : [],
      settings: jsonRecordOf(row.settings),
    }
  })
}

/**
 * Nodes as a document holds them: each parameter that names a row of this service is replaced.
 * `run_agent.agent_uuid` becomes {@link SELF_AGENT} when it names the exported agent, else null;
 * `run_prompt.prompt_uuid` and `http_request.account_uuid` become null; a literal
 * `run_agent.thread_uuid` is removed (each run then starts a new thread). An HTTP request node
 * also loses the credentials written into it: header and query entries named like credentials
 * ({@link CREDENTIAL_NAME}) and a URL's user and password.
 */
function portableNodes(nodes: unknown[], agentUuid: string): unknown[] {
  return nodes.map((node) => {
    if (!isRecord(node) || !isRecord(node.parameters)) return node
    const params: Record<string, unknown> = { ...node.parameters }
    if (node.type === 'run_agent') {
      if ('agent_uuid' in params)
        params.agent_uuid = String(params.agent_uuid).toLowerCase() === agentUuid.toLowerCase() ? SELF_AGENT : null
      if (typeof params.thread_uuid === 'string' && UUID.test(params.thread_uuid)) delete params.thread_uuid
    } else if (node.type === 'run_prompt') {
      if ('prompt_uuid' in params) params.prompt_uuid = null
    } else if (node.type === 'http_request') {
      if ('account_uuid' in params) params.account_uuid = null
      for (const key of ['headers', 'query'] as const) {
        const entries = params[key]
        if (isRecord(entries)) params[key] = Object.fromEntries(Object.entries(entries).filter(([name]) => !CREDENTIAL_NAME.test(name)))
      }
      if (typeof params.url === 'string') params.url = withoutUserinfo(params.url)
    }
    return { ...node, parameters: params }
  })
}

/** A literal URL without its user and password; an expression or an unparsable URL as it is. */
function withoutUserinfo(value: string): string {
  if (value.startsWith('=') || !URL.canParse(value)) return value
  const url = new URL(value)
  if (!url.username && !url.password) return value
  url.username = ''
  url.password = ''
  return url.toString()
}

/**
 * Every knowledge document of the agent, oldest first: a text's text, a URL's URL and refresh (a
 * crawl root's crawl too), a file's name only. A crawl's pages are left out: the import's crawl of
 * the root finds them again.
 */
async function exportKnowledge(ctx: ResourceCtx, agentId: number): Promise<Record<string, unknown>[]> {
  const rows = await ctx.em.execute(
    `select d.name, d.source_type as "sourceType", d.url, d.source_text as "sourceText", d.refresh,
       d.crawl_max_pages as "crawlMaxPages", d.crawl_max_depth as "crawlMaxDepth"
     from knowledge_documents d where d.agent_id = ? and d.crawl_root_id is null order by d.created_at, d.id`,
    [agentId],
  )
  return rows.map((row) => {
    const name = String(row.name)
    if (row.sourceType === 'text') return { name, source_type: 'text', url: null, text: String(row.sourceText ?? '') }
    if (row.sourceType === 'url') {
      const crawl = row.crawlMaxPages === null ? {} : { crawl: { max_pages: Number(row.crawlMaxPages), max_depth: Number(row.crawlMaxDepth) } }
      return { name, source_type: 'url', url: String(row.url), text: null, refresh: String(row.refresh), ...crawl }
    }
    return { name, source_type: 'file', url: null, text: null }
  })
}

// ---------------------------------------------------------------------------------------------
// Import
// ---------------------------------------------------------------------------------------------

/** Runs `check`, naming its validation errors under `prefix` (`document.tools.0.url`). */
function within<T>(prefix: FieldPath, check: () => T): T {
  try {
    return check()
  } catch (error) {
    throw prefixed(error, prefix)
  }
}

/** `error` with every issue's path under `prefix` when it is a ValidationError; anything else unchanged. */
function prefixed(error: unknown, prefix: FieldPath, rename?: (path: FieldPath) => FieldPath): unknown {
  if (!(error instanceof ValidationError)) return error
  for (const issue of error.issues) issue.path = [...prefix, ...(rename ? rename(issue.path) : issue.path)]
  return error
}

/** The parameter of each node type that names a row of the service, and what the row is for, in a warning. */
const NODE_REFERENCES = new Map([
  ['run_agent', { param: 'agent_uuid', what: 'runs an agent' }],
  ['run_prompt', { param: 'prompt_uuid', what: 'runs a prompt' }],
  ['http_request', { param: 'account_uuid', what: 'uses an account' }],
])

/** A node of a document's workflow. */
type PortableNode = NonNullable<TPortableWorkflow['nodes']>[number]

/** A tool provider found by slug: its id, and whether a tool of it needs an account to be bound. */
interface FoundProvider {
  id: number
  needsAccount: boolean
}

/**
 * The tool providers with these slugs that the caller may use in the request's workspace, as
 * `POST tools` may (a built-in, the workspace's own, a public or shared one): the workspace's own
 * first, then a built-in, then any other. A custom provider that authenticates needs an account,
 * as binding a tool to an agent says (src/access/references.ts).
 */
async function providersBySlug(ctx: ResourceCtx, slugs: string[]): Promise<Map<string, FoundProvider>> {
  const found = new Map<string, FoundProvider>()
  if (!slugs.length) return found
  const visible = visibleSql('p', 'providers', viewerOf(ctx))
  const scope = serviceScopeSql('p', ctx, true)
  const rows = await ctx.em.execute(
    `select p.id::float8 as id, p.slug, (not p.is_builtin and p.auth_scheme <> 'none') as "needsAccount"
     from providers p where p.slug in (?) and p.type = 'tool' and p.deleted_at is null and ${visible.sql} and ${scope.sql}
     order by case when p.workspace_id = ? then 0 when p.workspace_id is null then 1 else 2 end, p.id`,
    [slugs, ...visible.params, ...scope.params, ctx.workspace.workspace.id],
  )
  for (const row of rows) {
    const slug = String(row.slug)
    if (!found.has(slug)) found.set(slug, { id: Number(row.id), needsAccount: row.needsAccount === true })
  }
  return found
}

/** How one tool of the document is made and bound. */
interface ToolPlan {
  type: ToolType
  providerId: number | null
  /** Bound to the agent, with this account (null: none); undefined: made but not bound. */
  binding: { accountId: number | null } | undefined
}

/**
 * Each tool's type, provider and binding (see docs/api/versions.md for the rules), with a warning
 * for each tool that is made but not bound.
 * @throws ValidationError naming `document.tools.N.<field>` (the tools create's own checks) or
 *   `accounts.<ref>` (a key that is no tool ref, an account the caller cannot use, or of another
 *   provider).
 */
async function planTools(
  ctx: ResourceCtx,
  tools: TPortableTool[],
  accounts: Record<string, string>,
  warnings: string[],
): Promise<ToolPlan[]> {
  const types = tools.map((tool, index) => within(['document', 'tools', index], () => toolService.checkNewTool(tool)))
  const refs = new Set(tools.map((tool) => tool.ref))
  // A Map, so that a ref such as `constructor` finds no account it was not given.
  const given = new Map(Object.entries(accounts))
  for (const ref of given.keys()) {
    if (!refs.has(ref)) throw new ValidationError(['accounts', ref], 'No tool of the document has this ref')
  }
  const providers = await providersBySlug(ctx, [...new Set(tools.flatMap((tool) => (tool.provider ? [tool.provider.slug] : [])))])
  const plans: ToolPlan[] = []
  for (const [index, tool] of tools.entries()) {
    const provider = tool.provider ? providers.get(tool.provider.slug) : undefined
    const accountUuid = given.get(tool.ref)
    const label = `${tool.ref} "${tool.name}"`
    if (accountUuid !== undefined) {
      const account = await findResource(ctx, 'accounts', accountUuid, 'r.provider_id::float8 as "providerId"')
      if (!account) throw new ValidationError(['accounts', tool.ref], 'No account you can use has this uuid')
      if (!provider || Number(account.row.providerId) !== provider.id) {
        throw new ValidationError(['accounts', tool.ref], "The account does not belong to the tool's provider")
      }
      plans.push({ type: types[index], providerId: provider.id, binding: { accountId: account.id } })
    } else if (!tool.provider) {
      plans.push({ type: types[index], providerId: null, binding: { accountId: null } })
    } else if (!provider) {
      warnings.push(
        `${label}: no provider "${tool.provider.slug}" is configured in this workspace: the tool was made without a provider and not bound to the agent`,
      )
      plans.push({ type: types[index], providerId: null, binding: undefined })
    } else if (provider.needsAccount) {
      warnings.push(
        `${label}: its provider "${tool.provider.slug}" needs an account and none was given: the tool was made but not bound to the agent`,
      )
      plans.push({ type: types[index], providerId: provider.id, binding: undefined })
    } else {
      plans.push({ type: types[index], providerId: provider.id, binding: { accountId: null } })
    }
  }
  return plans
}

/**
 * Nodes of a document as this service stores them: {@link SELF_AGENT} becomes the new agent's
 * uuid; a reference that did not travel (null) becomes {@link NIL_UUID}, with a warning.
 */
function localNodes(nodes: PortableNode[], agentUuid: string, label: string, warnings: string[]): PortableNode[] {
  return nodes.map((node) => {
    const field = NODE_REFERENCES.get(node.type)
    if (!field || !node.parameters || !(field.param in node.parameters)) return node
    const value = node.parameters[field.param]
    if (node.type === 'run_agent' && value === SELF_AGENT) return { ...node, parameters: { ...node.parameters, [field.param]: agentUuid } }
    if (value !== null) return node
    warnings.push(`${label}: node "${node.id}" ${field.what} that did not travel: set its ${field.param} before activating the workflow`)
    return { ...node, parameters: { ...node.parameters, [field.param]: NIL_UUID } }
  })
}

/**
 * The text and URL documents to store, checked as a training checks them; a file document adds a
 * warning instead (files do not travel).
 * @throws ValidationError naming `document.knowledge.N.url`.
 */
async function planKnowledge(ctx: ResourceCtx, items: TPortableKnowledge[], warnings: string[]): Promise<PlannedDocument[]> {
  const sources: TKnowledgeSource[] = []
  const at: number[] = []
  items.forEach((item, index) => {
    if (item.source_type === 'file') {
      warnings.push(
        `knowledge.${index} "${item.name ?? ''}": files do not travel in an agent document: upload the file and add it to the agent`,
      )
      return
    }
    // The document's schema made sure each type carries its name, text or URL.
    sources.push(
      item.source_type === 'text'
        ? { type: 'text', name: item.name ?? '', text: item.text ?? '' }
        : { type: 'url', url: item.url ?? '', ...(item.refresh ? { refresh: item.refresh } : {}), ...(item.crawl ? { crawl: item.crawl } : {}) },
    )
    at.push(index)
  })
  try {
    return await planSources(ctx, sources)
  } catch (error) {
    // `sources.N.url` of the training is the document's `knowledge.<its index>.url`.
    throw prefixed(error, ['document', 'knowledge'], ([, index, ...rest]) => [at[Number(index)] ?? Number(index), ...rest])
  }
}

/**
 * `POST /api/v1/agents/import`: makes the document's agent in the request's workspace, owned by
 * the caller (docs/api/versions.md): new tools, new inactive workflows, the bindings, version 1,
 * and the text and URL knowledge, queued once committed. Everything is checked first and written
 * in one transaction, so a failed import leaves nothing.
 * @returns the agent as a retrieve answers it, and the warnings (in document order: tools,
 *   workflows, knowledge).
 * @throws ValidationError naming `document.<path>` (a create rule of a part, a graph problem, a
 *   knowledge URL that cannot be trained) or `accounts.<ref>`.
 */
export async function importAgent(ctx: ResourceCtx, input: TImportAgentInput): Promise<TImportAgentResponse> {
  const document = input.document
  const warnings: string[] = []
  const toolPlans = await planTools(ctx, document.tools, input.accounts ?? {}, warnings)
  const agentUuid = uuidv7()
  const graphs = document.workflows.map((workflow, index) => {
    const nodes = localNodes(workflow.nodes ?? [], agentUuid, `${workflow.ref} "${workflow.name}"`, warnings)
    within(['document', 'workflows', index], () => workflowService.checkGraph(nodes, workflow.edges ?? []))
    return nodes
  })
  const planned = await planKnowledge(ctx, document.knowledge, warnings)
  const workspaceId = ctx.workspace.workspace.id
  const created = await ctx.em.transactional(async (em) => {
    const agent = em.create(Agent, {
      uuid: agentUuid,
      name: document.agent.name,
      description: document.agent.description ?? '',
      instruction: document.agent.instruction ?? '',
      visibility: document.agent.visibility ?? 'private',
      profilePhotoKey: null,
      profilePhotoConfig: document.agent.profile_photo_config ?? null,
      metadata: document.agent.metadata ?? {},
      isTemplate: false,
      user: ctx.auth.user.id,
      workspace: workspaceId,
    })
    const tools = document.tools.map((tool, index) =>
      toolService.newTool(em, ctx, tool, { type: toolPlans[index].type, providerId: toolPlans[index].providerId, photoKey: null }),
    )
    await em.flush()
    const workflowIds: number[] = []
    for (const [index, workflow] of document.workflows.entries()) {
      const fields = {
        name: workflow.name,
        description: workflow.description,
        nodes: graphs[index],
        edges: workflow.edges,
        settings: workflow.settings,
      }
      workflowIds.push(await workflowService.insertWorkflow(em, ctx, { ...fields, is_active: false }, []))
    }
    const links: AgentLinks = {
      tools: tools.flatMap((tool, index) => {
        const binding = toolPlans[index].binding
        return binding ? [{ toolId: tool.id, accountId: binding.accountId }] : []
      }),
      workflowIds,
    }
    for (const pivot of agentPivotRows(links))
      await replacePivotRows(em, pivot.table, 'agent_id', agent.id, pivot.columns, pivot.rows, pivot)
    await recordVersion(em, agent.id, ctx.auth.user.id, null)
    await audit(em, ctx, {
      action: 'agent.import',
      resource: { type: 'agent', uuid: agent.uuid },
      changes: fieldChanges(null, auditedFields(agent)),
    })
    const stored = await storeDocuments(em, ctx, { id: agent.id, workspaceId }, planned)
    return { agentId: agent.id, workflowIds, documents: stored.created }
  })
  await queueTrainedFiles(ctx, created.documents)
  // A new inactive workflow has no schedule; synced all the same, as every save is.
  for (const id of created.workflowIds) await ctx.deps.workflows.syncSchedule(id)
  return { data: await loadAgent(ctx, created.agentId), warnings }
}
