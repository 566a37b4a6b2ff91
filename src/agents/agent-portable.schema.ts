/**
 * The portable agent document (docs/api/versions.md, "Portable agents: export and import"): what
 * `GET agents/{agent_uuid}/export` answers and `POST agents/import` takes as `document`. One zod
 * schema is both the export's output and the import's input, and its fields are the create
 * inputs' own fields (`POST agents`, `POST tools`, `POST workflows`, training), so an import is
 * held to the rules and bounds of each create. docs/agent-document.schema.json is its JSON Schema
 * ({@link agentDocumentJsonSchema}).
 */
import { z } from 'zod'
import { KNOWLEDGE_SOURCE_TYPES, type KnowledgeSourceType } from '../../entities/index.ts'
import { CreateToolInput } from '../catalog/index.ts'
import { KnowledgeCrawlInput, KnowledgeRefresh, KnowledgeText, KnowledgeTextName, KnowledgeUrl } from '../knowledge/index.ts'
import { checkGraphSize, CreateWorkflowInput } from '../workflows/index.ts'
import { text, timestamp } from '../access/wire.ts'
import { AGENT_LINKS_MAX, CreateAgentInput } from './agent-input.schema.ts'
import { Agent } from './agent.schema.ts'

/** `format` of every agent document. */
export const AGENT_DOCUMENT_FORMAT = 'agent-workspace.agent'
/** The `format_version` this service writes and the newest it reads. */
export const AGENT_DOCUMENT_VERSION = 1
/** Most knowledge documents one agent document lists. */
export const PORTABLE_KNOWLEDGE_MAX = 1_000
/**
 * What a node parameter naming the exported agent itself holds in a document (`run_agent`'s
 * `agent_uuid`); an import puts the new agent's uuid in its place.
 */
export const SELF_AGENT = 'self'

/** A `ref` of a tool or workflow: `tool-1`, `workflow-2` as exported; any 1..64 of `A-Za-z0-9_.-` on import. */
const PortableRef = text(64, 1).regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'must be letters, digits and "_.-", starting with a letter or digit')

/** Adds an issue at `[index, 'ref']` for each item whose `ref` repeats an earlier one. */
const uniqueRefs = (items: { ref: string }[], ctx: z.RefinementCtx) => {
  const seen = new Set<string>()
  items.forEach((item, index) => {
    if (seen.has(item.ref)) ctx.addIssue({ code: 'custom', path: [index, 'ref'], message: `"${item.ref}" is listed twice` })
    seen.add(item.ref)
  })
}

/** The agent's own fields, with `POST agents`' rules. */
const PortableAgent = z.strictObject({
  name: CreateAgentInput.shape.name,
  description: CreateAgentInput.shape.description,
  instruction: CreateAgentInput.shape.instruction,
  /** `large_language_model` is a model slug: a uuid is exported as its model's slug. */
  metadata: CreateAgentInput.shape.metadata,
  profile_photo_config: CreateAgentInput.shape.profile_photo_config,
  visibility: CreateAgentInput.shape.visibility,
})

/** The provider of a tool, by what another installation can find it by: its slug (and its name, for people). */
const PortableProvider = z.strictObject({ slug: text(80, 1), name: text(255) })

/**
 * A tool's URL template, checked as `POST tools` checks it. Its JSON Schema is a plain string: the
 * create's says `format: uri`, which a template with `{{placeholders}}` is not, and a validator
 * that checks formats would refuse the documents this service exports.
 */
const PortableToolUrl = z
  .string()
  .pipe(CreateToolInput.shape.url)
  .pipe(z.string())
  .meta({ description: 'An absolute http(s) URL of at most 2048 characters; `{{name}}` placeholders are allowed in its path and query.' })

/** A tool of the agent, with `POST tools`' rules; `provider` replaces `provider_uuid`. */
const PortableTool = z.strictObject({
  ref: PortableRef,
  name: CreateToolInput.shape.name,
  description: CreateToolInput.shape.description,
  type: CreateToolInput.shape.type,
  method: CreateToolInput.shape.method,
  url: PortableToolUrl,
  input_schema: CreateToolInput.shape.input_schema,
  allowed_tools: CreateToolInput.shape.allowed_tools,
  requires_approval: CreateToolInput.shape.requires_approval,
  metadata: CreateToolInput.shape.metadata,
  provider: PortableProvider.nullable().optional(),
})
export type TPortableTool = z.infer<typeof PortableTool>

/** A workflow of the agent, with `POST workflows`' rules (graph size included); imported inactive. */
const PortableWorkflow = z
  .strictObject({
    ref: PortableRef,
    name: CreateWorkflowInput.shape.name,
    description: CreateWorkflowInput.shape.description,
    nodes: CreateWorkflowInput.shape.nodes,
    edges: CreateWorkflowInput.shape.edges,
    settings: CreateWorkflowInput.shape.settings,
  })
  .superRefine(checkGraphSize)
export type TPortableWorkflow = z.infer<typeof PortableWorkflow>

/** Checks what a knowledge document's `source_type` asks of its other fields (the training's rules). */
function checkKnowledgeItem(
  item: { name?: string; source_type: KnowledgeSourceType; url?: string | null; text?: string | null; refresh?: string; crawl?: object },
  ctx: z.RefinementCtx,
) {
  if (item.refresh !== undefined && item.source_type !== 'url') {
    ctx.addIssue({ code: 'custom', path: ['refresh'], message: `a ${item.source_type} document is never synced: leave refresh out` })
  }
  if (item.crawl !== undefined && item.source_type !== 'url') {
    ctx.addIssue({ code: 'custom', path: ['crawl'], message: 'Only a URL source can crawl' })
  }
  const needs = (field: 'url' | 'text', present: boolean) => {
    const has = item[field] !== undefined && item[field] !== null
    if (has === present) return
    const message = present
      ? `a ${item.source_type} document carries its ${field}`
      : `a ${item.source_type} document carries no ${field}: leave it out or null`
    ctx.addIssue({ code: 'custom', path: [field], message })
  }
  needs('text', item.source_type === 'text')
  needs('url', item.source_type === 'url')
  if (item.source_type === 'text') {
    for (const issue of KnowledgeTextName.safeParse(item.name).error?.issues ?? [])
      ctx.addIssue({ code: 'custom', path: ['name'], message: issue.message })
  }
}

/**
 * A knowledge document of the agent, with the training's rules: a text document carries its name
 * and text, a URL document its URL (and how often it is synced, `never` when left out, and the
 * crawl of its site when it is a crawl root: the pages are crawled again rather than listed), a
 * file document only its name (files do not travel). One
 * object rather than a union on `source_type`, so that a wrong field is named wherever it is.
 */
const PortableKnowledge = z
  .strictObject({
    name: text(255).optional(),
    source_type: z.enum(KNOWLEDGE_SOURCE_TYPES),
    url: KnowledgeUrl.nullable().optional(),
    text: KnowledgeText.nullable().optional(),
    refresh: KnowledgeRefresh.optional(),
    crawl: KnowledgeCrawlInput.optional(),
  })
  .superRefine(checkKnowledgeItem)
  .meta({
    description:
      '`text` documents need `name` and `text`, `url` documents `url` (and may say how often they are synced, `refresh`, and crawl the site under it, `crawl`); the other of the two is null or left out. `file` documents carry their name only.',
  })
export type TPortableKnowledge = z.infer<typeof PortableKnowledge>

/** The document (`format_version` 1). */
export const AgentDocument = z
  .strictObject({
    format: z.literal(AGENT_DOCUMENT_FORMAT, { error: `not an agent document: format must be "${AGENT_DOCUMENT_FORMAT}"` }),
    format_version: z.literal(AGENT_DOCUMENT_VERSION, {
      error: (issue) =>
        typeof issue.input === 'number' && issue.input > AGENT_DOCUMENT_VERSION
          ? `format_version ${issue.input} is newer than this service reads (${AGENT_DOCUMENT_VERSION})`
          : `format_version must be ${AGENT_DOCUMENT_VERSION}`,
    }),
    /** When it was exported; an import ignores it. */
    exported_at: timestamp().optional(),
    agent: PortableAgent,
    /** The agent's tools in its order; `ref` is `tool-<n>`, counted from 1. */
    tools: z.array(PortableTool).max(AGENT_LINKS_MAX).superRefine(uniqueRefs).default([]),
    /** The agent's workflows in its order; `ref` is `workflow-<n>`, counted from 1. */
    workflows: z.array(PortableWorkflow).max(AGENT_LINKS_MAX).superRefine(uniqueRefs).default([]),
    /** Every knowledge document of the agent, oldest first. */
    knowledge: z.array(PortableKnowledge).max(PORTABLE_KNOWLEDGE_MAX).default([]),
  })
  .meta({
    title: 'Agent document',
    description: `A portable agent (format "${AGENT_DOCUMENT_FORMAT}", format_version ${AGENT_DOCUMENT_VERSION})`,
  })
export type TAgentDocument = z.infer<typeof AgentDocument>

/** `GET /api/v1/agents/{agent_uuid}/export`. */
export const ExportAgentInput = z.strictObject({ agent_uuid: z.uuid(), workspace_uuid: z.uuid().optional() })
export type TExportAgentInput = z.infer<typeof ExportAgentInput>

/**
 * `POST /api/v1/agents/import`: the document, the workspace context it is imported into, and the
 * account to bind each tool with (`{<tool ref>: <account uuid>}`).
 */
export const ImportAgentInput = z.strictObject({
  workspace_uuid: z.uuid().optional(),
  document: AgentDocument,
  accounts: z
    .record(z.string(), z.uuid())
    .refine((accounts) => Object.keys(accounts).length <= AGENT_LINKS_MAX, `at most ${AGENT_LINKS_MAX} accounts`)
    .optional(),
})
export type TImportAgentInput = z.infer<typeof ImportAgentInput>

/** What an import answers (201): the agent as a retrieve answers it, and what the caller should know. */
export const ImportAgentResponse = z.object({ data: Agent, warnings: z.array(z.string()) })
export type TImportAgentResponse = z.infer<typeof ImportAgentResponse>

/** The JSON Schema (draft 2020-12) of a document as an import takes it: docs/agent-document.schema.json. */
export function agentDocumentJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(AgentDocument, { target: 'draft-2020-12', io: 'input' })
}
