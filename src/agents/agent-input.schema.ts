/**
 * Agent request shapes (specification: "Update an Agent", "Agent metadata"; docs/api/resources.md,
 * "Agents and prompts"): strict zod objects, so unknown fields are a 400 naming them.
 */
import { z } from 'zod'
import { AGENT_RELATIONS, AGENT_SORTS, DISC_PERSONALITIES, OPENAI_VOICES } from './agent.schema.ts'
import { CategoryUuids, checkMetadata, extraStringsDocumented, MediaKey, ProfilePhotoConfigInput, resourceListFilters, Visibility } from '../access/resource.schema.ts'
import { shareInput } from '../access/share.schema.ts'
import { ModelRef } from '../models/index.ts'
import { jsonBoolean, name, pageQuery, sortParam, text, withParam } from '../access/wire.ts'

/** Largest `metadata`, serialized as JSON, in bytes (docs/api/resources.md: 64 KiB), also after an update's merge. */
export const AGENT_METADATA_MAX_BYTES = 64 * 1024
/** Most tools, workflows and files one agent binds. */
export const AGENT_LINKS_MAX = 50
/** Most `conversation_starters` (docs/api/resources.md). */
export const CONVERSATION_STARTERS_MAX = 10

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

/** `metadata` on create: the specification's fields (each optional) plus extra string keys. */
export const AgentMetadataInput = z
  .object(metadataFields)
  .partial()
  .catchall(z.unknown())
  .superRefine(checkMetadata(AGENT_METADATA_KEYS, AGENT_METADATA_MAX_BYTES, false))
  .meta(extraStringsDocumented(false))

/** `metadata` on update: merged key by key; `null` removes a key. */
export const AgentMetadataPatch = z
  .object(metadataPatchFields)
  .partial()
  .catchall(z.unknown())
  .superRefine(checkMetadata(AGENT_METADATA_KEYS, AGENT_METADATA_MAX_BYTES, true))
  .meta(extraStringsDocumented(true))

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

/**
 * The body fields create and update share, in order (`name` comes before them); omitted fields
 * are kept on update. `metadata` differs: create sets it, update merges it key by key.
 */
const bodyFields = <M extends z.ZodType>(metadata: M) => ({
  description: text(2_000).nullable().optional(),
  instruction: text(100_000).nullable().optional(),
  visibility: Visibility.optional(),
  profile_photo_key: MediaKey.nullable().optional(),
  profile_photo_config: ProfilePhotoConfigInput.nullable().optional(),
  tools: z
    .array(AgentToolLink)
    .max(AGENT_LINKS_MAX)
    .superRefine(unique((link) => link.tool_uuid, 'tool_uuid'))
    .optional(),
  workflows: z
    .array(AgentWorkflowLink)
    .max(AGENT_LINKS_MAX)
    .superRefine(unique((link) => link.workflow_uuid, 'workflow_uuid'))
    .optional(),
  metadata: metadata.optional(),
  file: z
    .strictObject({
      keys: z
        .array(MediaKey)
        .max(AGENT_LINKS_MAX)
        .superRefine(unique((key: string) => key, null)),
    })
    .optional(),
  with: withParam(AGENT_RELATIONS).optional(),
  category_uuids: CategoryUuids.optional(),
  is_template: jsonBoolean().optional(),
})

/**
 * `POST /api/v1/agents`: `name` required; everything else optional. `workspace_uuid` is the
 * workspace the agent is created in (the request's workspace context).
 */
export const CreateAgentInput = z.strictObject({
  workspace_uuid: z.uuid().optional(),
  name: name(255),
  ...bodyFields(AgentMetadataInput),
})
export type TCreateAgentInput = z.infer<typeof CreateAgentInput>

/**
 * `PUT /api/v1/agents/{agent_uuid}` (specification: "Update an Agent"; docs/api/resources.md):
 * omitted fields are kept; `null` clears `description`/`instruction` (to `''`),
 * `profile_photo_key` and `profile_photo_config`; `metadata` merges key by key (`null` removes a
 * key); `tools`, `workflows`, `file.keys` and `category_uuids` replace the whole set.
 * `workspace_uuid` selects the workspace context the agent is looked up in.
 */
export const UpdateAgentInput = z.strictObject({
  agent_uuid: z.uuid(),
  workspace_uuid: z.uuid().optional(),
  name: name(255).optional(),
  ...bodyFields(AgentMetadataPatch),
})
export type TUpdateAgentInput = z.infer<typeof UpdateAgentInput>

/**
 * `POST /api/v1/agents/generate` (docs/api/generate-and-leaderboard.md, "Generating an agent"):
 * what the agent is for, the workspace it is created in, and the model that writes it (a
 * catalog slug or uuid; the workspace's default when omitted).
 */
export const GenerateAgentInput = z.strictObject({
  workspace_uuid: z.uuid().optional(),
  description: name(2_000),
  large_language_model: ModelRef.optional(),
})
export type TGenerateAgentInput = z.infer<typeof GenerateAgentInput>

/** A create field that must also hold more than blanks. */
const filled = (field: z.ZodString) => field.refine((value) => value.trim().length > 0, 'must not be blank')

/**
 * A generated agent as the model answers it (docs/api/generate-and-leaderboard.md): the fields
 * of the create input a complete agent needs, each required and not blank, with the create
 * input's bounds. `toolUuid` checks a tool's uuid: any string when judging an answer (a tool
 * the caller cannot use is dropped, not repaired), the offered uuids in the JSON Schema the model
 * is shown.
 */
export const generatedAgent = (toolUuid: z.ZodType<string> = z.string()) =>
  z.strictObject({
    name: name(255),
    description: name(2_000),
    instruction: name(100_000),
    metadata: z.strictObject({
      role: filled(metadataFields.role),
      goal_statement: filled(metadataFields.goal_statement),
      backstory: filled(metadataFields.backstory),
      guardrails: filled(metadataFields.guardrails),
      base_instructions: filled(metadataFields.base_instructions),
      conversation_starters: z
        .array(filled(text(500)))
        .min(1)
        .max(CONVERSATION_STARTERS_MAX),
      greetings: filled(metadataFields.greetings),
      tone_of_voice: filled(metadataFields.tone_of_voice),
      disc_personality: metadataFields.disc_personality,
      openai_voice: metadataFields.openai_voice,
    }),
    profile_photo_config: z.strictObject({
      emoji: filled(text(32)),
      background_color: z.string().regex(/^#[0-9A-Fa-f]{6}$/, 'must be a colour as #RRGGBB'),
    }),
    tools: z.array(z.strictObject({ tool_uuid: toolUuid })).max(AGENT_LINKS_MAX),
  })
export type TGeneratedAgent = z.infer<ReturnType<typeof generatedAgent>>

/** `GET /api/v1/agents` query (specification: "Resource-specific filters", Agents). */
export const ListAgentsInput = z.strictObject({
  ...pageQuery,
  sort: sortParam(AGENT_SORTS, '-created_at'),
  with: withParam(AGENT_RELATIONS).optional(),
  ...resourceListFilters,
}).prefault({})
export type TListAgentsInput = z.infer<typeof ListAgentsInput>

/** `{agent_uuid}` in the path, plus the optional workspace context. */
export const AgentPathInput = z.strictObject({ agent_uuid: z.uuid(), workspace_uuid: z.uuid().optional() })
/** `GET /api/v1/agents/{agent_uuid}`: `with` is accepted (single responses embed everything). */
export const RetrieveAgentInput = AgentPathInput.extend({ with: withParam(AGENT_RELATIONS).optional() })

/**
 * `POST /api/v1/agents/{agent_uuid}/share`: `entity_id` is a user id (integer) for
 * `entity_type` `user` and a workspace uuid for `workspace`; `permission` `null` removes the share.
 */
export const ShareAgentInput = shareInput({ agent_uuid: z.uuid() })
export type TShareAgentInput = z.infer<typeof ShareAgentInput>
