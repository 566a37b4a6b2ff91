/**
 * Agent wire shapes as answered (specification: "Agent (response shape)", "Agent metadata",
 * "Share (element of Agent.shares)"; docs/api/conventions.md and docs/api/resources.md) and the row -> wire mapper.
 * Request shapes are in ./agent-input.schema.ts.
 */
import { z } from 'zod'
import type { SharePermission } from '../../entities/index.ts'
import { Category, ProfilePhotoConfig, toProfilePhotoConfig, Visibility, type ResourceRow, type TCategory } from '../access/resource.schema.ts'
import { AgentTool, toAgentTool, type AgentToolRow, type TAgentTool } from '../catalog/index.ts'
import { mediaUrl, NestedUser, NestedWorkspace, toNestedUser, toWorkspaceBase, type UserRow, type WorkspaceRow } from '../access/user-workspace.schema.ts'
import { iso, isoOrNull, timestamp } from '../access/wire.ts'
import { AgentWorkflow, toWorkflowBase, type TWorkflowBase, type WorkflowRow } from '../workflows/index.ts'

/*
 * `usage_frequency` of an agent (specification: "Agent"; docs/api/resources.md: "derived from the runs
 * of the last 30 days"), as a pure function so it is unit-tested and every response agrees.
 *
 * | runs in the last 30 days | value     | reading                                   |
 * |--------------------------|-----------|-------------------------------------------|
 * | >= 720                   | `hourly`  | on average at least one run an hour       |
 * | >= 30                    | `daily`   | on average at least one run a day         |
 * | >= 4                     | `weekly`  | on average about one run a week or more   |
 * | >= 1                     | `monthly` | at least one run in the window            |
 * | 0, `last_used_at` set    | `rarely`  | used before, not in the last 30 days      |
 * | 0, never used            | `never`   |                                           |
 */

/** Every value `usage_frequency` takes, most frequent first. */
export const USAGE_FREQUENCIES = ['hourly', 'daily', 'weekly', 'monthly', 'rarely', 'never'] as const
export type UsageFrequency = (typeof USAGE_FREQUENCIES)[number]

/** Days the frequency looks back over. */
export const USAGE_WINDOW_DAYS = 30

/** Lower bounds of runs in the window for each frequency, most frequent first. */
const THRESHOLDS: [number, UsageFrequency][] = [
  [USAGE_WINDOW_DAYS * 24, 'hourly'],
  [USAGE_WINDOW_DAYS, 'daily'],
  [4, 'weekly'],
  [1, 'monthly'],
]

/**
 * The frequency bucket of an agent.
 * @param runsInWindow runs of the agent in the last {@link USAGE_WINDOW_DAYS} days (negative or
 *   non-finite counts are read as 0).
 * @param lastUsedAt the agent's `last_used_at`: decides between `rarely` and `never` when the
 *   window holds no run.
 */
export function usageFrequency(runsInWindow: number, lastUsedAt: Date | string | null | undefined): UsageFrequency {
  const runs = Number.isFinite(runsInWindow) && runsInWindow > 0 ? runsInWindow : 0
  for (const [atLeast, frequency] of THRESHOLDS) if (runs >= atLeast) return frequency
  return lastUsedAt ? 'rarely' : 'never'
}

/** Relations an agent response can embed (`with`); single responses embed them all. */
export const AGENT_RELATIONS = ['user', 'workspace', 'tools', 'workflows', 'shares', 'categories', 'files'] as const
export type AgentRelation = (typeof AGENT_RELATIONS)[number]
/** Sortable columns of the agent list. */
export const AGENT_SORTS = [
  'created_at', '-created_at', 'name', '-name', 'updated_at', '-updated_at', 'usage_count', '-usage_count',
] as const

/** `metadata.disc_personality` values (docs/api/resources.md). */
export const DISC_PERSONALITIES = ['dominant', 'influential', 'steady', 'conscientious'] as const
/** `metadata.openai_voice` values: OpenAI's text-to-speech voices (docs/api/resources.md). */
export const OPENAI_VOICES = ['alloy', 'ash', 'ballad', 'coral', 'echo', 'fable', 'nova', 'onyx', 'sage', 'shimmer', 'verse'] as const

/** Agent metadata as answered: the specification's fields as stored, plus extra string keys. */
export const AgentMetadata = z
  .object({
    role: z.string().optional(),
    goal_statement: z.string().optional(),
    backstory: z.string().optional(),
    guardrails: z.string().optional(),
    base_instructions: z.string().optional(),
    conversation_starters: z.array(z.string()).optional(),
    greetings: z.string().optional(),
    tone_of_voice: z.string().optional(),
    disc_personality: z.string().optional(),
    openai_voice: z.string().optional(),
    large_language_model: z.string().optional(),
    memory: z.boolean().optional(),
    knowledge: z.boolean().optional(),
    web_search: z.boolean().optional(),
  })
  .catchall(z.string())
  .meta({ id: 'AgentMetadata' })
export type TAgentMetadata = z.infer<typeof AgentMetadata>

const Permission = z.enum(['read', 'write', 'admin'])
/** An element of `Agent.shares`: a user (NestedUser) or a workspace (NestedWorkspace) and its permission. */
export const Share = z
  .discriminatedUnion('entity_type', [
    z.object({ entity_type: z.literal('user'), entity: NestedUser, permission: Permission }),
    z.object({ entity_type: z.literal('workspace'), entity: NestedWorkspace, permission: Permission }),
  ])
  .meta({ id: 'Share' })
export type TShare = z.infer<typeof Share>

/** A knowledge file of an agent (`file.keys` as answered). */
export const AgentFile = z
  .object({ key: z.string(), url: z.string(), mime_type: z.string(), size: z.number().int() })
  .meta({ id: 'AgentFile' })

/**
 * The Agent shape. Single responses carry every relation; lists carry `user`/`workspace`
 * (else null) and the collections (else omitted) only when `with` names them.
 */
export const Agent = z
  .object({
    uuid: z.uuid(),
    name: z.string(),
    description: z.string(),
    instruction: z.string(),
    profile_photo_url: z.string().nullable(),
    profile_photo_config: ProfilePhotoConfig,
    visibility: Visibility,
    metadata: AgentMetadata,
    is_owner: z.boolean(),
    is_template: z.boolean(),
    is_favorite: z.boolean(),
    /** The current version (docs/api/versions.md): 1 at creation, +1 for each change of a behaviour field. */
    version: z.number().int(),
    created_at: timestamp(),
    updated_at: timestamp(),
    workflows_count: z.number().int(),
    tools_count: z.number().int(),
    threads_count: z.number().int(),
    usage_count: z.number().int(),
    last_used_at: timestamp().nullable(),
    usage_frequency: z.enum(USAGE_FREQUENCIES),
    user: NestedUser.nullable(),
    workspace: NestedWorkspace.nullable(),
    tools: z.array(AgentTool).optional(),
    workflows: z.array(AgentWorkflow).optional(),
    /** The agent's shares for callers with `admin` permission on it; `[]` for everyone else. */
    shares: z.array(Share).optional(),
    categories: z.array(Category).optional(),
    files: z.array(AgentFile).optional(),
  })
  .meta({ id: 'Agent' })
export type TAgent = z.infer<typeof Agent>

/** Columns of `agents` the mapper reads (see `selectColumns` in src/platform/sql.ts). */
export const AGENT_FIELDS = [
  'id', 'uuid', 'name', 'description', 'instruction', 'profilePhotoKey', 'profilePhotoConfig', 'visibility', 'metadata',
  'isTemplate', 'version', 'usageCount', 'lastUsedAt', 'userId', 'workspaceId', 'createdAt', 'updatedAt',
] as const

/** An `agents` row as raw SQL reads it with {@link AGENT_FIELDS}. */
export interface AgentRow extends ResourceRow {
  instruction: string
  metadata: TAgentMetadata
  isTemplate: boolean
  version: number
  usageCount: number
  lastUsedAt: Date | string | null
}

/** A share as read, with the user or workspace it names (null when that is gone). */
export interface ShareRow {
  entityType: 'user' | 'workspace'
  permission: SharePermission
  user: UserRow | null
  workspace: WorkspaceRow | null
}

/** A knowledge file as read. */
export interface AgentFileRow {
  key: string
  mimeType: string
  size: number
}

/** Everything one agent response is built from. Collections are undefined when not embedded. */
export interface AgentRecord {
  agent: AgentRow
  /** The caller's permission on the agent (decides whether `shares` are shown). */
  permission: SharePermission
  toolsCount: number
  workflowsCount: number
  threadsCount: number
  /** Runs of the last 30 days, for `usage_frequency`. */
  runsInWindow: number
  isFavorite: boolean
  user: UserRow | null
  workspace: WorkspaceRow | null
  tools?: AgentToolRow[]
  workflows?: WorkflowRow[]
  /**
   * `tools` and `workflows` already in wire shape, used in place of the rows: a list maps each
   * distinct tool and workflow of its page once (src/agents/agent-list.service.ts).
   */
  mapped?: { tools?: TAgentTool[]; workflows?: TWorkflowBase[] }
  shares?: ShareRow[]
  categories?: TCategory[]
  files?: AgentFileRow[]
}

function toShares(rows: ShareRow[], viewerId: number, appUrl: string): TShare[] {
  const out: TShare[] = []
  for (const row of rows) {
    if (row.entityType === 'user' && row.user) {
      out.push({ entity_type: 'user', entity: toNestedUser(row.user, appUrl), permission: row.permission })
    } else if (row.entityType === 'workspace' && row.workspace) {
      out.push({
        entity_type: 'workspace',
        entity: { ...toWorkspaceBase(row.workspace, viewerId, appUrl), user: null },
        permission: row.permission,
      })
    }
  }
  return out
}

/** Row -> wire. `shares` are shown in full only to a caller with `admin` permission. */
export function toAgent(record: AgentRecord, viewerId: number, appUrl: string): TAgent {
  const { agent } = record
  const out: TAgent = {
    uuid: agent.uuid,
    name: agent.name,
    description: agent.description,
    instruction: agent.instruction,
    profile_photo_url: mediaUrl(appUrl, agent.profilePhotoKey),
    profile_photo_config: toProfilePhotoConfig(agent.profilePhotoConfig) ?? {},
    visibility: agent.visibility,
    metadata: agent.metadata,
    is_owner: agent.userId === viewerId,
    is_template: agent.isTemplate,
    is_favorite: record.isFavorite,
    version: Number(agent.version),
    created_at: iso(agent.createdAt),
    updated_at: iso(agent.updatedAt),
    workflows_count: record.workflowsCount,
    tools_count: record.toolsCount,
    threads_count: record.threadsCount,
    usage_count: Number(agent.usageCount),
    last_used_at: isoOrNull(agent.lastUsedAt),
    usage_frequency: usageFrequency(record.runsInWindow, agent.lastUsedAt),
    user: record.user ? toNestedUser(record.user, appUrl) : null,
    workspace: record.workspace ? { ...toWorkspaceBase(record.workspace, viewerId, appUrl), user: null } : null,
  }
  const { mapped } = record
  if (mapped?.tools) out.tools = mapped.tools
  else if (record.tools) out.tools = record.tools.map((row) => toAgentTool(row, viewerId, appUrl))
  if (mapped?.workflows) out.workflows = mapped.workflows
  else if (record.workflows) out.workflows = record.workflows.map((row) => toWorkflowBase(row, viewerId, appUrl))
  if (record.shares) out.shares = record.permission === 'admin' ? toShares(record.shares, viewerId, appUrl) : []
  if (record.categories) out.categories = record.categories
  if (record.files) {
    out.files = record.files.map((file) => ({
      key: file.key,
      url: mediaUrl(appUrl, file.key) ?? '',
      mime_type: file.mimeType,
      size: Number(file.size),
    }))
  }
  return out
}
