/**
 * What the prompt screens share: the prompt's wire types, the choices the service accepts
 * (docs/api/resources.md, "Prompts") and the metadata key under which the console keeps the model
 * a prompt is meant to run on.
 */
import type { RouterInputs, RouterOutputs } from '../../lib/api.ts'

export type Prompt = RouterOutputs['prompts']['retrieve']['data']
export type PromptUpdate = RouterInputs['prompts']['update']
export type Visibility = Prompt['visibility']
/** A declared input as answered (`type` is a plain string there; the update takes the enum). */
export type PromptInput = Prompt['metadata']['input'][number]
export type InputType = NonNullable<NonNullable<PromptUpdate['metadata']>['input']>[number]['type']

export const VISIBILITY_OPTIONS: { value: Visibility; label: string }[] = [
  { value: 'private', label: 'Private (only you)' },
  { value: 'workspace', label: 'Workspace (its members)' },
  { value: 'public', label: 'Public (everyone)' },
]

export const INPUT_TYPES: { value: InputType; label: string }[] = [
  { value: 'text', label: 'Text' },
  { value: 'textarea', label: 'Long text' },
  { value: 'number', label: 'Number' },
  { value: 'select', label: 'Select (one option)' },
  { value: 'multiselect', label: 'Multi-select' },
  { value: 'boolean', label: 'Yes / no' },
  { value: 'date', label: 'Date' },
]

/** Input types whose values come from `options`. */
export const SELECT_TYPES: readonly string[] = ['select', 'multiselect']

/**
 * A prompt has no model of its own: a run takes `large_language_model`. The console keeps the model
 * a prompt's author picked as this extra metadata string, and its run form sends it; REST clients
 * that run the prompt pass their own.
 */
export const MODEL_METADATA_KEY = 'large_language_model'

/** The extra metadata strings of a prompt (every key but `input`). */
export function extraMetadata(prompt: Prompt): Record<string, string> {
  const extra: Record<string, string> = {}
  for (const [key, value] of Object.entries(prompt.metadata)) if (key !== 'input' && typeof value === 'string') extra[key] = value
  return extra
}

/** The model the prompt's author picked, or '' for the service's default. */
export const promptModel = (prompt: Prompt): string => extraMetadata(prompt)[MODEL_METADATA_KEY] ?? ''
