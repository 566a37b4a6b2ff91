/**
 * Workflow wire shapes (specification: "Workflow (element of Agent.workflows)") and the
 * row -> wire mapper.
 */
import { z } from 'zod'
import { MAX_GRAPH_BYTES, WorkflowEdges, WorkflowNodes } from './workflow-graph.schema.ts'
import {
  Category,
  CategoryUuids,
  MediaKey,
  ProfilePhotoConfig,
  ProfilePhotoConfigInput,
  refineStorableJson,
  resourceListFilters,
  StorableObject,
  toProfilePhotoConfig,
  Visibility,
  type ResourceRow,
} from '../access/resource.schema.ts'
import { ModelRef } from '../models/index.ts'
import { shareInput } from '../access/share.schema.ts'
import { mediaUrl, NestedUser, NestedWorkspace } from '../access/user-workspace.schema.ts'
import { envelope, iso, isoOrNull, jsonBoolean, jsonBytes, jsonInt, name, paginated, pageQuery, sortParam, text, timestamp, withParam } from '../access/wire.ts'

/** Columns of `workflows` a mapper reads (see `selectColumns` in src/platform/sql.ts). */
export const WORKFLOW_FIELDS = [
  'id', 'uuid', 'name', 'description', 'profilePhotoKey', 'profilePhotoConfig', 'visibility', 'isActive', 'isTemplate',
  'nodes', 'edges', 'settings', 'staticData', 'pinData', 'triggerCount', 'userId', 'workspaceId', 'createdAt',
  'updatedAt', 'deletedAt',
] as const

/** A `workflows` row as raw SQL reads it with {@link WORKFLOW_FIELDS}. */
export interface WorkflowRow extends ResourceRow {
  isActive: boolean
  isTemplate: boolean
  nodes: unknown[]
  edges: unknown[]
  settings: Record<string, unknown>
  staticData: Record<string, unknown>
  pinData: Record<string, unknown>
  triggerCount: number
  deletedAt: Date | string | null
}

/** The Workflow shape of the specification (as an element of `Agent.workflows`). */
export const WorkflowBase = z.object({
  uuid: z.uuid(),
  name: z.string(),
  description: z.string(),
  profile_photo_url: z.string().nullable(),
  profile_photo_config: ProfilePhotoConfig,
  visibility: Visibility,
  is_active: z.boolean(),
  is_owner: z.boolean(),
  is_template: z.boolean(),
  nodes: z.array(z.unknown()),
  edges: z.array(z.unknown()),
  settings: z.record(z.string(), z.unknown()),
  static_data: z.record(z.string(), z.unknown()),
  pin_data: z.record(z.string(), z.unknown()),
  trigger_count: z.number().int(),
  created_at: timestamp(),
  updated_at: timestamp(),
  deleted_at: timestamp().nullable(),
})
/** A workflow inside an agent. */
export const AgentWorkflow = WorkflowBase.meta({ id: 'AgentWorkflow' })
export type TWorkflowBase = z.infer<typeof WorkflowBase>

/** Row -> the specification's Workflow fields. */
export function toWorkflowBase(row: WorkflowRow, viewerId: number, appUrl: string): TWorkflowBase {
  return {
    uuid: row.uuid,
    name: row.name,
    description: row.description,
    profile_photo_url: mediaUrl(appUrl, row.profilePhotoKey),
    profile_photo_config: toProfilePhotoConfig(row.profilePhotoConfig) ?? {},
    visibility: row.visibility,
    is_active: row.isActive,
    is_owner: row.userId === viewerId,
    is_template: row.isTemplate,
    nodes: row.nodes,
    edges: row.edges,
    settings: row.settings,
    static_data: row.staticData,
    pin_data: row.pinData,
    trigger_count: Number(row.triggerCount),
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
    deleted_at: isoOrNull(row.deletedAt),
  }
}

// ---------------------------------------------------------------------------------------------
// Workflows as a resource: the full response and the request shapes.
// ---------------------------------------------------------------------------------------------

/** The Workflow resource: the specification's fields plus categories, favourite flag, owner and workspace. */
export const Workflow = WorkflowBase.extend({
  /** Present on single responses, and in lists with `with=categories`. */
  categories: z.array(Category).optional(),
  is_favorite: z.boolean(),
  user: NestedUser.nullable(),
  workspace: NestedWorkspace.nullable(),
  /**
   * `POST` here triggers the workflow's webhook (the token in it is the secret): shown to the
   * workflow's owner and to owners and admins of its workspace, null for everyone else.
   */
  webhook_url: z.string().nullable(),
  /** Whether webhook calls must carry `X-Signature` (the secret itself is never shown). */
  has_webhook_secret: z.boolean(),
}).meta({ id: 'Workflow' })
export type TWorkflow = z.infer<typeof Workflow>

/** `{data: Workflow}`. */
export const WorkflowResponse = envelope(Workflow)
/** A page of workflows. */
export const WorkflowList = paginated(Workflow)

/** Relations a workflow list can embed with `with`. */
const WORKFLOW_RELATIONS = ['user', 'workspace', 'categories'] as const
/** Sortable columns of the workflow list. */
const WORKFLOW_SORTS = ['created_at', '-created_at', 'name', '-name', 'updated_at', '-updated_at'] as const

/** `GET /api/v1/workflows` query (specification: "Resource-specific filters", Workflows). */
export const ListWorkflowsInput = z.strictObject({
  ...pageQuery,
  sort: sortParam(WORKFLOW_SORTS, '-created_at'),
  with: withParam(WORKFLOW_RELATIONS).optional(),
  ...resourceListFilters,
}).prefault({})
export type TListWorkflowsInput = z.infer<typeof ListWorkflowsInput>

/** A JSON object stored whole (`static_data`, `pin_data`). */
const GraphObject = StorableObject()

/**
 * `settings` (docs/api/workflows.md): `timeout_seconds` (1..86400; else `WORKFLOW_TIMEOUT_SECONDS`)
 * bounds an execution, `error_policy` says whether a failed node stops it (`stop`, the default)
 * or is passed on (`continue`), `on_interrupt` whether an execution whose process stopped under
 * it resumes from its last finished node (`resume`) or fails (`fail`, the default),
 * `requires_approval` whether a run that calls the workflow as an agent's tool waits for a
 * person's approval of each call (docs/api/runs.md, "Approvals"; default false); other members
 * are kept as sent (editors store their own).
 */
const WorkflowSettings = StorableObject().pipe(
  z.looseObject({
    timeout_seconds: jsonInt(1, 86_400).optional(),
    error_policy: z.enum(['stop', 'continue']).optional(),
    on_interrupt: z.enum(['resume', 'fail']).optional(),
    requires_approval: jsonBoolean().optional(),
  }),
)

const GRAPH_KEYS = ['nodes', 'edges', 'settings', 'static_data', 'pin_data'] as const

/**
 * Adds an issue when the graph members of a create body are larger than {@link MAX_GRAPH_BYTES}
 * together. An update is checked by the service instead, on the graph it would store (the sent
 * members merged over the stored ones).
 */
export function checkGraphSize(value: Partial<Record<(typeof GRAPH_KEYS)[number], unknown>>, ctx: z.RefinementCtx): void {
  const present = Object.fromEntries(GRAPH_KEYS.filter((key) => value[key] !== undefined).map((key) => [key, value[key]]))
  if (jsonBytes(present) > MAX_GRAPH_BYTES) {
    ctx.addIssue({ code: 'custom', path: [], message: `The workflow graph is larger than ${MAX_GRAPH_BYTES} bytes` })
  }
}

/** The body fields create and update share, in order (`name` comes before them), each optional. */
const bodyFields = {
  description: text(2000).optional(),
  profile_photo_key: MediaKey.nullable().optional(),
  profile_photo_config: ProfilePhotoConfigInput.nullable().optional(),
  visibility: Visibility.optional(),
  is_active: jsonBoolean().optional(),
  is_template: jsonBoolean().optional(),
  category_uuids: CategoryUuids.optional(),
  nodes: WorkflowNodes.optional(),
  edges: WorkflowEdges.optional(),
  settings: WorkflowSettings.optional(),
  static_data: GraphObject.optional(),
  pin_data: GraphObject.optional(),
  /**
   * Key of the webhook's `X-Signature` check (HMAC-SHA256 of the raw body), 16..200 characters;
   * write-only (stored sealed), `null` removes it.
   */
  webhook_secret: text(200, 16).nullable().optional(),
}

/** `POST /api/v1/workflows` body: `name` required; everything else optional. */
export const CreateWorkflowInput = z
  .strictObject({ workspace_uuid: z.uuid().optional(), name: name(), ...bodyFields })
  .superRefine(checkGraphSize)
export type TCreateWorkflowInput = z.infer<typeof CreateWorkflowInput>

/**
 * `PUT /api/v1/workflows/{workflow_uuid}` (docs/api/resources.md semantics): omitted fields kept,
 * `null` clears the nullable ones (`profile_photo_key`, `profile_photo_config`); `nodes`,
 * `edges` and `category_uuids` replace the whole list, `settings`, `static_data` and
 * `pin_data` the whole object. The size of the graph is checked by the service, on the graph
 * the update would store.
 */
export const UpdateWorkflowInput = z.strictObject({
  workflow_uuid: z.uuid(),
  workspace_uuid: z.uuid().optional(),
  name: name().optional(),
  ...bodyFields,
})
export type TUpdateWorkflowInput = z.infer<typeof UpdateWorkflowInput>

/** A workflow path: `{workflow_uuid}` (plus the optional workspace context). */
export const WorkflowPathInput = z.strictObject({ workflow_uuid: z.uuid(), workspace_uuid: z.uuid().optional() })

/**
 * `POST /api/v1/workflows/{workflow_uuid}/share` (docs/api/tenancy.md): `entity_id` is a user id
 * (integer) for `entity_type` `user` and a workspace uuid for `workspace`; `permission` `null`
 * removes the share.
 */
export const ShareWorkflowInput = shareInput({ workflow_uuid: z.uuid() })
export type TShareWorkflowInput = z.infer<typeof ShareWorkflowInput>

/**
 * `POST /api/v1/workflows/generate`: what the workflow should do (1..4,000 characters), an
 * optional name (else the model's), the workspace context, and the model to ask (a slug or
 * uuid of the catalog; else the default model).
 */
export const GenerateWorkflowInput = z.strictObject({
  workspace_uuid: z.uuid().optional(),
  description: name(4000),
  name: name().optional(),
  model: ModelRef.optional(),
})
export type TGenerateWorkflowInput = z.infer<typeof GenerateWorkflowInput>

/**
 * `POST /api/v1/workflows/{workflow_uuid}/run` body: `input` (any JSON value, the manual
 * trigger's output; default null) and `background` (queue it and answer 202 at once).
 */
export const RunWorkflowInput = z.strictObject({
  workflow_uuid: z.uuid(),
  workspace_uuid: z.uuid().optional(),
  input: z.unknown().superRefine((value, ctx) => refineStorableJson(value, ctx, [])).optional(),
  background: jsonBoolean().optional(),
})
export type TRunWorkflowInput = z.infer<typeof RunWorkflowInput>
