/**
 * Prompt wire shapes (specification: "Prompt (response shape)", "Update a Prompt"; docs/api/resources.md, "Agents") and the row -> wire mapper.
 */
import { z } from 'zod'
import {
  checkMetadata,
  extraStringsDocumented,
  MediaKey,
  ProfilePhotoConfig,
  ProfilePhotoConfigInput,
  toProfilePhotoConfig,
  Visibility,
  type ResourceRow,
} from '../access/resource.schema.ts'
import { mediaUrl, NestedUser, NestedWorkspace, toNestedUser, toWorkspaceBase, type UserRow, type WorkspaceRow } from '../access/user-workspace.schema.ts'
import { envelope, iso, jsonBoolean, name, paginated, pageQuery, sortParam, text, timestamp, withParam } from '../access/wire.ts'

/** Relations a prompt response can embed (`with`). */
const PROMPT_RELATIONS = ['user', 'workspace'] as const
/** Sortable columns of the prompt list. */
const PROMPT_SORTS = ['created_at', '-created_at', 'name', '-name', 'updated_at', '-updated_at'] as const
/** Prompt input `type` values (docs/api/resources.md). */
const PROMPT_INPUT_TYPES = ['text', 'textarea', 'number', 'select', 'multiselect', 'boolean', 'date'] as const
/** Input types that carry `options`. */
const SELECT_TYPES: readonly string[] = ['select', 'multiselect']
/** Most inputs a prompt declares. */
const PROMPT_INPUTS_MAX = 50
/** Largest `metadata`, serialized as JSON, in bytes (docs/api/resources.md: 64 KiB). */
export const PROMPT_METADATA_MAX_BYTES = 64 * 1024

/** An input key: usable as a Mustache `{{key}}` placeholder. */
const INPUT_KEY = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/

/** One prompt input field as sent: `options` only (and always) for the select kinds. */
const PromptInputFieldInput = z
  .strictObject({
    key: z.string().regex(INPUT_KEY, 'a letter or "_", then up to 63 letters, digits or "_"'),
    label: name(255),
    type: z.enum(PROMPT_INPUT_TYPES),
    required: jsonBoolean().default(false),
    options: z.array(text(255, 1)).min(1).max(100).optional(),
  })
  .superRefine((field, ctx) => {
    const select = SELECT_TYPES.includes(field.type)
    if (select && field.options === undefined) {
      ctx.addIssue({ code: 'custom', path: ['options'], message: 'select and multiselect inputs need options' })
    }
    if (!select && field.options !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['options'], message: 'options are only allowed for select and multiselect inputs' })
    }
    const seen = new Set<string>()
    field.options?.forEach((option, index) => {
      if (seen.has(option)) ctx.addIssue({ code: 'custom', path: ['options', index], message: 'options must be unique' })
      seen.add(option)
    })
  })
export type TPromptInputFieldInput = z.infer<typeof PromptInputFieldInput>

/** `metadata.input`: at most 50 fields with unique keys; replaces the whole list when sent. */
const PromptInputList = z
  .array(PromptInputFieldInput)
  .max(PROMPT_INPUTS_MAX)
  .superRefine((fields, ctx) => {
    const seen = new Set<string>()
    fields.forEach((field, index) => {
      if (seen.has(field.key)) ctx.addIssue({ code: 'custom', path: [index, 'key'], message: 'input keys must be unique' })
      seen.add(field.key)
    })
  })

/** Prompt `metadata` on create: `input` plus extra string keys. */
const PromptMetadataInput = z
  .object({ input: PromptInputList.optional() })
  .catchall(z.unknown())
  .superRefine(checkMetadata(['input'], PROMPT_METADATA_MAX_BYTES, false))
  .meta(extraStringsDocumented(false))

/** Prompt `metadata` on update: merged key by key; `null` removes a key (`input: null` empties the list). */
const PromptMetadataPatch = z
  .object({ input: PromptInputList.nullable().optional() })
  .catchall(z.unknown())
  .superRefine(checkMetadata(['input'], PROMPT_METADATA_MAX_BYTES, true))
  .meta(extraStringsDocumented(true))

/** Prompt `content`: 1..100,000 characters, not blank. */
const Content = text(100_000, 1).refine((value) => value.trim().length > 0, 'must not be blank')
const With = withParam(PROMPT_RELATIONS)

/** Create body (plus the workspace context's `workspace_uuid`). */
export const CreatePromptInput = z.strictObject({
  workspace_uuid: z.uuid().optional(),
  name: name(),
  description: text(2000).nullable().optional(),
  content: Content,
  visibility: Visibility.optional(),
  profile_photo_key: MediaKey.nullable().optional(),
  profile_photo_config: ProfilePhotoConfigInput.nullable().optional(),
  metadata: PromptMetadataInput.optional(),
  with: With.optional(),
})
export type TCreatePromptInput = z.infer<typeof CreatePromptInput>

/**
 * `PUT /api/v1/prompts/{prompt_uuid}`: the specification's body fields, plus `workspace_uuid`
 * (workspace context only). Omitted fields are kept; `null` clears `description`,
 * `profile_photo_key` and `profile_photo_config`.
 */
export const UpdatePromptInput = z.strictObject({
  prompt_uuid: z.uuid(),
  workspace_uuid: z.uuid().optional(),
  name: name().optional(),
  description: text(2000).nullable().optional(),
  visibility: Visibility.optional(),
  profile_photo_key: MediaKey.nullable().optional(),
  profile_photo_config: ProfilePhotoConfigInput.nullable().optional(),
  content: Content.optional(),
  metadata: PromptMetadataPatch.optional(),
  with: With.optional(),
})
export type TUpdatePromptInput = z.infer<typeof UpdatePromptInput>

/** Retrieve query: `with` only validates (a single prompt embeds user and workspace anyway). */
export const RetrievePromptInput = z.strictObject({
  prompt_uuid: z.uuid(),
  workspace_uuid: z.uuid().optional(),
  with: With.optional(),
})

/** Delete path (plus the workspace context). */
export const DeletePromptInput = z.strictObject({ prompt_uuid: z.uuid(), workspace_uuid: z.uuid().optional() })

/** `GET /api/v1/prompts` query: the paginator, `with`, `search` (name and description), `visibility`. */
export const ListPromptsInput = z.strictObject({
  ...pageQuery,
  sort: sortParam(PROMPT_SORTS, '-created_at'),
  with: With.optional(),
  search: text(255).optional(),
  visibility: Visibility.optional(),
  workspace_uuid: z.uuid().optional(),
}).prefault({})
export type TListPromptsInput = z.infer<typeof ListPromptsInput>

/** One prompt input field as answered. */
const PromptInputField = z
  .object({
    key: z.string(),
    label: z.string(),
    type: z.string(),
    required: z.boolean(),
    options: z.array(z.string()).optional(),
  })
  .meta({ id: 'PromptInputField' })
export type TPromptInputField = z.infer<typeof PromptInputField>

/** Prompt `metadata` as answered: `input` (always a list) plus the extra string keys. */
const PromptMetadata = z.object({ input: z.array(PromptInputField) }).catchall(z.string())
export type TPromptMetadata = z.infer<typeof PromptMetadata>

/** The Prompt shape of the specification. */
export const Prompt = z
  .object({
    uuid: z.uuid(),
    name: z.string(),
    description: z.string(),
    profile_photo_url: z.string().nullable(),
    profile_photo_config: ProfilePhotoConfig.nullable(),
    content: z.string(),
    visibility: Visibility,
    is_owner: z.boolean(),
    metadata: PromptMetadata,
    created_at: timestamp(),
    updated_at: timestamp(),
    user: NestedUser.nullable(),
    workspace: NestedWorkspace.nullable(),
  })
  .meta({ id: 'Prompt' })
export type TPrompt = z.infer<typeof Prompt>

/** `{data: Prompt}`. */
export const PromptResponse = envelope(Prompt)
/** A page of prompts. */
export const PromptList = paginated(Prompt)

/** Columns of `prompts` a mapper reads (see `selectColumns` in src/platform/sql.ts). */
export const PROMPT_FIELDS = [
  'id', 'uuid', 'name', 'description', 'profilePhotoKey', 'profilePhotoConfig', 'visibility', 'content', 'metadata',
  'userId', 'workspaceId', 'createdAt', 'updatedAt',
] as const

/** A `prompts` row as raw SQL reads it with {@link PROMPT_FIELDS}. */
export interface PromptRow extends ResourceRow {
  content: string
  metadata: Record<string, unknown>
}

/** A stored input field as answered (stored values passed validation; anything else is skipped). */
function toInputField(value: unknown): TPromptInputField[] {
  const parsed = PromptInputField.safeParse(value)
  return parsed.success ? [parsed.data] : []
}

/** Stored metadata -> the answered shape: `input` always a list, extra keys with string values. */
function toPromptMetadata(stored: Record<string, unknown>): TPromptMetadata {
  const extra: Record<string, string> = {}
  for (const [key, value] of Object.entries(stored)) if (key !== 'input' && typeof value === 'string') extra[key] = value
  // Object.assign types the result as the intersection the catchall schema infers.
  return Object.assign(extra, { input: Array.isArray(stored.input) ? stored.input.flatMap(toInputField) : [] })
}

/** A validated input list as stored: the five members, `options` only for the select kinds. */
export function toStoredInputs(fields: readonly TPromptInputFieldInput[]): TPromptInputField[] {
  return fields.map((field) => ({
    key: field.key,
    label: field.label,
    type: field.type,
    required: field.required,
    ...(field.options ? { options: [...field.options] } : {}),
  }))
}

/** Row -> wire; `user`/`workspace` are null when not embedded. */
export function toPrompt(
  row: PromptRow,
  related: { user: UserRow | null; workspace: WorkspaceRow | null },
  viewerId: number,
  appUrl: string,
): TPrompt {
  return {
    uuid: row.uuid,
    name: row.name,
    description: row.description,
    profile_photo_url: mediaUrl(appUrl, row.profilePhotoKey),
    profile_photo_config: toProfilePhotoConfig(row.profilePhotoConfig),
    content: row.content,
    visibility: row.visibility,
    is_owner: row.userId === viewerId,
    metadata: toPromptMetadata(row.metadata),
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
    user: related.user ? toNestedUser(related.user, appUrl) : null,
    workspace: related.workspace ? { ...toWorkspaceBase(related.workspace, viewerId, appUrl), user: null } : null,
  }
}
