/**
 * Agent request shapes (specification: "Update an Agent", "Agent metadata"; API.md section 5,
 * "Agents and prompts"): strict zod objects, so unknown fields are a 400 naming them.
 */
import { z } from 'zod'
import { SHARE_ENTITY_TYPES, SHARE_PERMISSIONS } from '../../entities/index.ts'
import { AGENT_RELATIONS, AGENT_SORTS, DISC_PERSONALITIES, OPENAI_VOICES } from './agent.schema.ts'
import { MediaKey, ProfilePhotoConfigInput, Visibility } from './resource.schema.ts'
import { jsonBoolean, jsonInt, name, pageQuery, sortParam, text, withParam } from './wire.ts'
import { CategoryUuidsQuery, MAX_CATEGORY_UUIDS, queryBoolean } from './workflow.schema.ts'

/** Largest `metadata`, serialized as JSON, in bytes (API.md section 5: 64 KiB), also after an update's merge. */
export const AGENT_METADATA_MAX_BYTES = 64 * 1024
/** Most tools, workflows and files one agent binds. */
export const AGENT_LINKS_MAX = 50
/** Most `conversation_starters` (API.md section 5). */
export const CONVERSATION_STARTERS_MAX = 10

/** Names of the extra (string-valued) metadata keys. */
const EXTRA_KEY = /^[A-Za-z0-9_.-]{1,64}$/

/** Bytes of a value serialized as JSON. */
export const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), 'utf8')

/** The specification's metadata fields with their bounds. */
const metadataFields = {
  role: text(255),
  goal_statement: text(5_000),
  backstory: text(10_000),
  guardrails: text(10_000),
  base_instructions: text(20_000),
  conversation_starters: z.array(text(500)).max(CONVERSATION_STARTERS_MAX),
  greetings: text(2_000),
  tone_of_voice: text(255),
  disc_personality: z.enum(DISC_PERSONALITIES),
  openai_voice: z.enum(OPENAI_VOICES),
  large_language_model: text(255),
  memory: jsonBoolean(),
  knowledge: jsonBoolean(),
  web_search: jsonBoolean(),
}
/** Metadata keys the specification names. */
export const AGENT_METADATA_KEYS: readonly string[] = Object.keys(metadataFields)

/** The specification's metadata fields, each nullable (update: `null` removes the key). */
const metadataPatchFields = {
  role: metadataFields.role.nullable(),
  goal_statement: metadataFields.goal_statement.nullable(),
  backstory: metadataFields.backstory.nullable(),
  guardrails: metadataFields.guardrails.nullable(),
  base_instructions: metadataFields.base_instructions.nullable(),
  conversation_starters: metadataFields.conversation_starters.nullable(),
  greetings: metadataFields.greetings.nullable(),
  tone_of_voice: metadataFields.tone_of_voice.nullable(),
  disc_personality: metadataFields.disc_personality.nullable(),
  openai_voice: metadataFields.openai_voice.nullable(),
  large_language_model: metadataFields.large_language_model.nullable(),
  memory: metadataFields.memory.nullable(),
  knowledge: metadataFields.knowledge.nullable(),
  web_search: metadataFields.web_search.nullable(),
}

/** An extra metadata value: a string (or, on update, `null` to remove the key). */
const extraValue = text(10_000)
const extraValueOrNull = extraValue.nullable()

/**
 * Extra keys (names and string values) and the serialized size (of the request's object; the
 * service checks the merge too). Extra values are checked here rather than with `catchall(string)`
 * so the inferred type stays usable by tRPC clients (an index signature of strings would clash
 * with `conversation_starters` and the booleans).
 */
const checkMetadata = (nullable: boolean) => (value: Record<string, unknown>, ctx: z.RefinementCtx) => {
  for (const [key, extra] of Object.entries(value)) {
    if (AGENT_METADATA_KEYS.includes(key)) continue
    if (!EXTRA_KEY.test(key)) {
      ctx.addIssue({ code: 'custom', path: [key], message: 'metadata keys are 1..64 letters, digits and "_.-"' })
      continue
    }
    const parsed = (nullable ? extraValueOrNull : extraValue).safeParse(extra)
    for (const issue of parsed.error?.issues ?? []) ctx.addIssue({ code: 'custom', path: [key, ...issue.path], message: issue.message })
  }
  if (jsonBytes(value) > AGENT_METADATA_MAX_BYTES) {
    ctx.addIssue({ code: 'custom', path: [], message: `metadata must not exceed ${AGENT_METADATA_MAX_BYTES} bytes as JSON` })
  }
}

/** `metadata` on create: the specification's fields (each optional) plus extra string keys. */
export const AgentMetadataInput = z.object(metadataFields).partial().catchall(z.unknown()).superRefine(checkMetadata(false))

/** `metadata` on update: merged key by key; `null` removes a key. */
export const AgentMetadataPatch = z.object(metadataPatchFields).partial().catchall(z.unknown()).superRefine(checkMetadata(true))

/** An element of `tools`: the tool and the account it is called with (null or omitted: none). */
export const AgentToolLink = z.strictObject({ tool_uuid: z.uuid(), account_uuid: z.uuid().nullable().optional() })
/** An element of `workflows`. */
export const AgentWorkflowLink = z.strictObject({ workflow_uuid: z.uuid() })

/** Adds an issue for each element whose `key` repeats an earlier one. */
const unique =
  <T>(key: (item: T) => string, field: string | null) =>
  (items: T[], ctx: z.RefinementCtx) => {
    const seen = new Set<string>()
    items.forEach((item, index) => {
      const value = key(item).toLowerCase()
      if (seen.has(value)) ctx.addIssue({ code: 'custom', path: field ? [index, field] : [index], message: 'listed twice' })
      seen.add(value)
    })
  }

/** Fields create and update share (each as sent; nullability is added per operation). */
const fields = {
  description: text(2_000),
  instruction: text(100_000),
  visibility: Visibility,
  profile_photo_key: MediaKey,
  profile_photo_config: ProfilePhotoConfigInput,
  tools: z.array(AgentToolLink).max(AGENT_LINKS_MAX).superRefine(unique((link) => link.tool_uuid, 'tool_uuid')),
  workflows: z.array(AgentWorkflowLink).max(AGENT_LINKS_MAX).superRefine(unique((link) => link.workflow_uuid, 'workflow_uuid')),
  file: z.strictObject({ keys: z.array(MediaKey).max(AGENT_LINKS_MAX).superRefine(unique((key: string) => key, null)) }),
  with: withParam(AGENT_RELATIONS),
  category_uuids: z.array(z.uuid()).max(MAX_CATEGORY_UUIDS),
  is_template: jsonBoolean(),
}

/**
 * `POST /api/v1/agents`: `name` required; everything else optional. `workspace_uuid` is the
 * workspace the agent is created in (the request's workspace context).
 */
export const CreateAgentInput = z.strictObject({
  workspace_uuid: z.uuid().optional(),
  name: name(255),
  description: fields.description.nullable().optional(),
  instruction: fields.instruction.nullable().optional(),
  visibility: fields.visibility.optional(),
  profile_photo_key: fields.profile_photo_key.nullable().optional(),
  profile_photo_config: fields.profile_photo_config.nullable().optional(),
  tools: fields.tools.optional(),
  workflows: fields.workflows.optional(),
  metadata: AgentMetadataInput.optional(),
  file: fields.file.optional(),
  with: fields.with.optional(),
  category_uuids: fields.category_uuids.optional(),
  is_template: fields.is_template.optional(),
})
export type TCreateAgentInput = z.infer<typeof CreateAgentInput>

/**
 * `PUT /api/v1/agents/{agent_uuid}` (specification: "Update an Agent"; API.md section 5):
 * omitted fields are kept; `null` clears `description`/`instruction` (to `''`),
 * `profile_photo_key` and `profile_photo_config`; `metadata` merges key by key (`null` removes a
 * key); `tools`, `workflows`, `file.keys` and `category_uuids` replace the whole set.
 * `workspace_uuid` selects the workspace context the agent is looked up in.
 */
export const UpdateAgentInput = z.strictObject({
  agent_uuid: z.uuid(),
  workspace_uuid: z.uuid().optional(),
  name: name(255).optional(),
  description: fields.description.nullable().optional(),
  instruction: fields.instruction.nullable().optional(),
  visibility: fields.visibility.optional(),
  profile_photo_key: fields.profile_photo_key.nullable().optional(),
  profile_photo_config: fields.profile_photo_config.nullable().optional(),
  tools: fields.tools.optional(),
  workflows: fields.workflows.optional(),
  metadata: AgentMetadataPatch.optional(),
  file: fields.file.optional(),
  with: fields.with.optional(),
  category_uuids: fields.category_uuids.optional(),
  is_template: fields.is_template.optional(),
})
export type TUpdateAgentInput = z.infer<typeof UpdateAgentInput>

/** `GET /api/v1/agents` query (specification: "Resource-specific filters", Agents). */
export const ListAgentsInput = z.strictObject({
  ...pageQuery,
  sort: sortParam(AGENT_SORTS, '-created_at'),
  with: withParam(AGENT_RELATIONS).optional(),
  workspace_uuid: z.uuid().optional(),
  user_id: z.number().int().min(1).max(2_147_483_647).optional(),
  search: text(255).optional(),
  visibility: Visibility.optional(),
  category_uuids: CategoryUuidsQuery.optional(),
  favorite: queryBoolean().optional(),
  template: queryBoolean().optional(),
})
export type TListAgentsInput = z.infer<typeof ListAgentsInput>

/** `{agent_uuid}` in the path, plus the optional workspace context. */
export const AgentPathInput = z.strictObject({ agent_uuid: z.uuid(), workspace_uuid: z.uuid().optional() })
/** `GET /api/v1/agents/{agent_uuid}`: `with` is accepted (single responses embed everything). */
export const RetrieveAgentInput = AgentPathInput.extend({ with: withParam(AGENT_RELATIONS).optional() })

/**
 * `POST /api/v1/agents/{agent_uuid}/share`: `entity_id` is a user id (integer) for
 * `entity_type` `user` and a workspace uuid for `workspace`; `permission` `null` removes the share.
 */
export const ShareAgentInput = z
  .strictObject({
    agent_uuid: z.uuid(),
    workspace_uuid: z.uuid().optional(),
    entity_type: z.enum(SHARE_ENTITY_TYPES),
    entity_id: z.union([jsonInt(1, 2_147_483_647), z.uuid()]),
    permission: z.enum(SHARE_PERMISSIONS).nullable(),
  })
  .superRefine((value, ctx) => {
    if (value.entity_type === 'user' && typeof value.entity_id !== 'number') {
      ctx.addIssue({ code: 'custom', path: ['entity_id'], message: 'a user id (integer) for entity_type "user"' })
    }
    if (value.entity_type === 'workspace' && typeof value.entity_id !== 'string') {
      ctx.addIssue({ code: 'custom', path: ['entity_id'], message: 'a workspace uuid for entity_type "workspace"' })
    }
  })
export type TShareAgentInput = z.infer<typeof ShareAgentInput>
