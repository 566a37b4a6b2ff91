/**
 * The agent form's state (a draft) and how it becomes a request: the whole agent on create
 * (`agents.create`, `POST /api/v1/agents`), only what changed on update (`agents.update`,
 * `PUT /api/v1/agents/{agent_uuid}`). Sending only the changes keeps the update's own rules
 * (omitted fields are kept, `metadata` merges key by key and `null` removes a key), so a
 * concurrent change to another field or metadata key is not overwritten by stale form values.
 */
import type { RouterInputs, RouterOutputs } from '../../lib/api.ts'

export type Agent = RouterOutputs['agents']['retrieve']['data']
export type CreateAgent = RouterInputs['agents']['create']
export type UpdateAgent = RouterInputs['agents']['update']
export type Visibility = NonNullable<CreateAgent['visibility']>
type MetadataInput = NonNullable<CreateAgent['metadata']>
type MetadataPatch = NonNullable<UpdateAgent['metadata']>

/** The specification's free-text metadata fields, in the order the form shows them. */
export const TEXT_METADATA = ['role', 'tone_of_voice', 'goal_statement', 'backstory', 'guardrails', 'base_instructions', 'greetings'] as const
export type TextMetadataKey = (typeof TEXT_METADATA)[number]
/** The metadata switches (unset reads as off, docs/api/runs.md). */
export const FLAG_METADATA = ['memory', 'knowledge', 'web_search'] as const
export type FlagMetadataKey = (typeof FLAG_METADATA)[number]
/** Metadata keys with a control of their own; any other key is an extra (string) field. */
export const KNOWN_METADATA: readonly string[] = [
  ...TEXT_METADATA,
  ...FLAG_METADATA,
  'conversation_starters',
  'disc_personality',
  'openai_voice',
  'large_language_model',
]

/** `metadata.disc_personality` and `metadata.openai_voice` values (docs/api/resources.md, "Bounds"). */
export const DISC_PERSONALITIES = ['dominant', 'influential', 'steady', 'conscientious'] as const
export const OPENAI_VOICES = ['alloy', 'ash', 'ballad', 'coral', 'echo', 'fable', 'nova', 'onyx', 'sage', 'shimmer', 'verse'] as const
export const CONVERSATION_STARTERS_MAX = 10
export const LINKS_MAX = 50

export interface ToolLink {
  /** '' until a tool is chosen (such rows are not sent). */
  tool_uuid: string
  account_uuid: string | null
}

export interface ExtraField {
  /** Stable identity of the row while its key is being typed. */
  id: number
  key: string
  value: string
}

export interface Draft {
  name: string
  description: string
  instruction: string
  visibility: Visibility
  is_template: boolean
  /** Model slug or uuid; '' is the workspace's default. */
  large_language_model: string
  text: Record<TextMetadataKey, string>
  flags: Record<FlagMetadataKey, boolean>
  disc_personality: string
  openai_voice: string
  conversation_starters: string[]
  extras: ExtraField[]
  photo: { emoji: string; background_color: string; preference: string }
  /** A new upload's key; '' keeps the current photo (answers show only its URL). */
  photo_key: string
  remove_photo: boolean
  tools: ToolLink[]
  workflows: string[]
  category_uuids: string[]
  file_keys: string[]
}

let extraIds = 0
/** A new, empty extra metadata row. */
export const newExtra = (key = '', value = ''): ExtraField => ({ id: ++extraIds, key, value })

const str = (value: unknown) => (typeof value === 'string' ? value : '')

/** The draft of a new agent. */
export function emptyDraft(): Draft {
  return {
    name: '',
    description: '',
    instruction: '',
    visibility: 'private',
    is_template: false,
    large_language_model: '',
    text: { role: '', tone_of_voice: '', goal_statement: '', backstory: '', guardrails: '', base_instructions: '', greetings: '' },
    flags: { memory: false, knowledge: false, web_search: false },
    disc_personality: '',
    openai_voice: '',
    conversation_starters: [],
    extras: [],
    photo: { emoji: '', background_color: '', preference: '' },
    photo_key: '',
    remove_photo: false,
    tools: [],
    workflows: [],
    category_uuids: [],
    file_keys: [],
  }
}

/** The draft of a stored agent, as the form starts editing it. */
export function draftOf(agent: Agent): Draft {
  const meta = agent.metadata
  const draft = emptyDraft()
  for (const key of TEXT_METADATA) draft.text[key] = str(meta[key])
  for (const key of FLAG_METADATA) draft.flags[key] = meta[key] === true
  return {
    ...draft,
    name: agent.name,
    description: agent.description,
    instruction: agent.instruction,
    visibility: agent.visibility,
    is_template: agent.is_template,
    large_language_model: str(meta.large_language_model),
    disc_personality: str(meta.disc_personality),
    openai_voice: str(meta.openai_voice),
    conversation_starters: Array.isArray(meta.conversation_starters) ? [...meta.conversation_starters] : [],
    extras: Object.entries(meta)
      .filter(([key]) => !KNOWN_METADATA.includes(key))
      .map(([key, value]) => newExtra(key, str(value))),
    photo: {
      emoji: str(agent.profile_photo_config.emoji),
      background_color: str(agent.profile_photo_config.background_color),
      preference: str(agent.profile_photo_config.preference),
    },
    tools: (agent.tools ?? []).map((tool) => ({ tool_uuid: tool.uuid, account_uuid: tool.pivot_account?.uuid ?? null })),
    workflows: (agent.workflows ?? []).map((workflow) => workflow.uuid),
    category_uuids: (agent.categories ?? []).map((category) => category.uuid),
    file_keys: (agent.files ?? []).map((file) => file.key),
  }
}

/** The metadata a draft stands for: set keys only (an empty text or an off switch is no key). */
function metadataOf(draft: Draft): Record<string, string | boolean | string[]> {
  const out: Record<string, string | boolean | string[]> = {}
  if (draft.large_language_model) out.large_language_model = draft.large_language_model
  for (const key of TEXT_METADATA) if (draft.text[key]) out[key] = draft.text[key]
  for (const key of FLAG_METADATA) if (draft.flags[key]) out[key] = true
  if (draft.disc_personality) out.disc_personality = draft.disc_personality
  if (draft.openai_voice) out.openai_voice = draft.openai_voice
  const starters = draft.conversation_starters.filter((starter) => starter.trim())
  if (starters.length) out.conversation_starters = starters
  // A row without a key is being typed: not sent. A key typed twice: the later row wins, as in JSON.
  for (const extra of draft.extras) if (extra.key) out[extra.key] = extra.value
  return out
}

/** `profile_photo_config` of a draft: the members set, or null when none is. */
function photoConfigOf(draft: Draft): CreateAgent['profile_photo_config'] {
  const { emoji, background_color, preference } = draft.photo
  if (!emoji && !background_color && !preference) return null
  return {
    ...(emoji ? { emoji } : {}),
    ...(background_color ? { background_color } : {}),
    ...(preference === 'emoji' || preference === 'image' ? { preference } : {}),
  }
}

const toolsOf = (draft: Draft) =>
  draft.tools.filter((link) => link.tool_uuid).map((link) => ({ tool_uuid: link.tool_uuid, account_uuid: link.account_uuid || null }))
const workflowsOf = (draft: Draft) => draft.workflows.map((workflow_uuid) => ({ workflow_uuid }))

/** The create request of a draft: everything set, in the workspace the console acts in (its header). */
export function createInput(draft: Draft): CreateAgent {
  const metadata = metadataOf(draft) as MetadataInput
  const photo = photoConfigOf(draft)
  return {
    name: draft.name,
    description: draft.description,
    instruction: draft.instruction,
    visibility: draft.visibility,
    is_template: draft.is_template,
    ...(Object.keys(metadata).length ? { metadata } : {}),
    ...(photo ? { profile_photo_config: photo } : {}),
    ...(draft.photo_key.trim() ? { profile_photo_key: draft.photo_key.trim() } : {}),
    ...(toolsOf(draft).length ? { tools: toolsOf(draft) } : {}),
    ...(draft.workflows.length ? { workflows: workflowsOf(draft) } : {}),
    ...(draft.category_uuids.length ? { category_uuids: draft.category_uuids } : {}),
    ...(draft.file_keys.length ? { file: { keys: draft.file_keys } } : {}),
  }
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/** The update request of a draft: only the fields that differ from `initial`, the draft it started from. */
export function updateInput(agentUuid: string, initial: Draft, draft: Draft): UpdateAgent {
  const input: UpdateAgent = { agent_uuid: agentUuid }
  if (draft.name !== initial.name) input.name = draft.name
  if (draft.description !== initial.description) input.description = draft.description
  if (draft.instruction !== initial.instruction) input.instruction = draft.instruction
  if (draft.visibility !== initial.visibility) input.visibility = draft.visibility
  if (draft.is_template !== initial.is_template) input.is_template = draft.is_template

  const before = metadataOf(initial)
  const after = metadataOf(draft)
  const patch: Record<string, unknown> = {}
  for (const key of Object.keys(before)) if (!(key in after)) patch[key] = null
  for (const [key, value] of Object.entries(after)) if (!same(before[key], value)) patch[key] = value
  if (Object.keys(patch).length) input.metadata = patch as MetadataPatch

  if (!same(photoConfigOf(draft), photoConfigOf(initial))) input.profile_photo_config = photoConfigOf(draft)
  if (draft.remove_photo) input.profile_photo_key = null
  else if (draft.photo_key.trim()) input.profile_photo_key = draft.photo_key.trim()
  if (!same(toolsOf(draft), toolsOf(initial))) input.tools = toolsOf(draft)
  if (!same(draft.workflows, initial.workflows)) input.workflows = workflowsOf(draft)
  if (!same(draft.category_uuids, initial.category_uuids)) input.category_uuids = draft.category_uuids
  if (!same(draft.file_keys, initial.file_keys)) input.file = { keys: draft.file_keys }
  return input
}

/** Whether the draft differs from where it started. */
export const isDirty = (initial: Draft, draft: Draft) => !same({ ...initial, extras: initial.extras.map(({ key, value }) => [key, value]) }, { ...draft, extras: draft.extras.map(({ key, value }) => [key, value]) })
