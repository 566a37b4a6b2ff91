/**
 * The edit form of a prompt: every field `prompts.update` (`PUT /api/v1/prompts/{prompt_uuid}`)
 * takes but the photo upload, which is multipart REST only: name, description, template,
 * visibility, the emoji look (`profile_photo_config`), the declared inputs, the model its runs use
 * and the other metadata strings. `metadata` merges key by key on the service, so a metadata
 * string removed here is sent as `null`; the input list is sent whole.
 */
import { ActionIcon, Button, ColorInput, Divider, Group, Select, SimpleGrid, Stack, Text, Textarea, TextInput } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useEffect, useMemo, useState, type FormEvent } from 'react'
import { problemOf, type Problem } from '../../lib/api.ts'
import { fieldError } from '../../ui/forms.ts'
import { FormProblem } from '../../ui/FormProblem.tsx'
import { InputsEditor, newInputId, toInputDraft, toInputList, type InputDraft } from './InputsEditor.tsx'
import { ModelSelect } from './ModelSelect.tsx'
import { useUpdatePrompt } from './api.ts'
import { extraMetadata, MODEL_METADATA_KEY, VISIBILITY_OPTIONS, type Prompt, type PromptUpdate, type Visibility } from './promptTypes.ts'

type Preference = 'emoji' | 'image'

interface ExtraDraft {
  id: number
  key: string
  value: string
}

interface Draft {
  name: string
  description: string
  content: string
  visibility: Visibility
  emoji: string
  backgroundColor: string
  preference: Preference | ''
  model: string
  inputs: InputDraft[]
  extras: ExtraDraft[]
}

function toDraft(prompt: Prompt): Draft {
  const extra = extraMetadata(prompt)
  const config = prompt.profile_photo_config
  const preference = config?.preference === 'emoji' || config?.preference === 'image' ? config.preference : ''
  return {
    name: prompt.name,
    description: prompt.description,
    content: prompt.content,
    visibility: prompt.visibility,
    emoji: config?.emoji ?? '',
    backgroundColor: config?.background_color ?? '',
    preference,
    model: extra[MODEL_METADATA_KEY] ?? '',
    inputs: prompt.metadata.input.map(toInputDraft),
    extras: Object.entries(extra)
      .filter(([key]) => key !== MODEL_METADATA_KEY)
      .map(([key, value]) => ({ id: newInputId(), key, value })),
  }
}

/** What the draft compares by: everything but the rows' React ids. */
const comparable = (draft: Draft) =>
  JSON.stringify({ ...draft, inputs: toInputList(draft.inputs), extras: draft.extras.map(({ key, value }) => [key, value]) })

function toUpdate(prompt: Prompt, draft: Draft): PromptUpdate {
  const stored = extraMetadata(prompt)
  const metadata: Record<string, unknown> = { input: toInputList(draft.inputs) }
  // A key the form no longer holds is removed on the service by a null.
  for (const key of Object.keys(stored)) metadata[key] = null
  if (draft.model) metadata[MODEL_METADATA_KEY] = draft.model
  for (const { key, value } of draft.extras) if (key.trim()) metadata[key.trim()] = value
  const config = {
    ...(draft.emoji ? { emoji: draft.emoji } : {}),
    ...(draft.backgroundColor ? { background_color: draft.backgroundColor } : {}),
    ...(draft.preference ? { preference: draft.preference } : {}),
  }
  return {
    prompt_uuid: prompt.uuid,
    name: draft.name,
    description: draft.description,
    content: draft.content,
    visibility: draft.visibility,
    profile_photo_config: Object.keys(config).length ? config : null,
    metadata: metadata as PromptUpdate['metadata'],
  }
}

/** The fields the form shows a 400's issue at; anything else goes to the alert. */
function shownFields(draft: Draft): string[] {
  return [
    'name',
    'description',
    'content',
    'visibility',
    'profile_photo_config',
    'metadata.input',
    `metadata.${MODEL_METADATA_KEY}`,
    ...draft.extras.map((extra) => `metadata.${extra.key.trim()}`),
  ]
}

export function PromptForm({ prompt, onDirtyChange }: { prompt: Prompt; onDirtyChange: (dirty: boolean) => void }) {
  const initial = useMemo(() => toDraft(prompt), [prompt])
  const [draft, setDraft] = useState(initial)
  const dirty = comparable(draft) !== comparable(initial)
  useEffect(() => onDirtyChange(dirty), [dirty, onDirtyChange])
  const save = useUpdatePrompt({
    onSuccess: (answer) => {
      setDraft(toDraft(answer.data))
      notifications.show({ color: 'green', message: 'Prompt saved' })
    },
  })
  const problem = save.error ? problemOf(save.error) : null
  const set = <K extends keyof Draft>(key: K, value: Draft[K]) => setDraft((current) => ({ ...current, [key]: value }))
  const submit = (event: FormEvent) => {
    event.preventDefault()
    save.mutate(toUpdate(prompt, draft))
  }
  return (
    <form onSubmit={submit} noValidate aria-label="Edit prompt">
      <Stack>
        <FormProblem problem={problem} fields={shownFields(draft)} />
        <TextInput
          label="Name"
          required
          value={draft.name}
          onChange={(e) => set('name', e.currentTarget.value)}
          error={fieldError(problem, 'name')}
        />
        <Textarea
          label="Description"
          autosize
          minRows={2}
          maxRows={6}
          value={draft.description}
          onChange={(e) => set('description', e.currentTarget.value)}
          error={fieldError(problem, 'description')}
        />
        <Textarea
          label="Template"
          description="Mustache: {{key}} inserts an input's value; {{#key}}…{{/key}} shows a part only when it is set."
          required
          autosize
          minRows={5}
          maxRows={20}
          value={draft.content}
          onChange={(e) => set('content', e.currentTarget.value)}
          error={fieldError(problem, 'content')}
          styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }}
        />
        <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="sm">
          <Select
            label="Visibility"
            data={VISIBILITY_OPTIONS}
            value={draft.visibility}
            onChange={(value) => value && set('visibility', value as Visibility)}
            allowDeselect={false}
            error={fieldError(problem, 'visibility')}
            comboboxProps={{ withinPortal: true }}
          />
          <ModelSelect
            label="Model for runs"
            description="Kept with the prompt; the run form starts with it"
            value={draft.model}
            onChange={(slug) => set('model', slug)}
            error={fieldError(problem, `metadata.${MODEL_METADATA_KEY}`)}
          />
        </SimpleGrid>
        <Divider />
        <InputsEditor inputs={draft.inputs} template={draft.content} onChange={(inputs) => set('inputs', inputs)} problem={problem} />
        <Divider />
        <Appearance draft={draft} set={set} problem={problem} />
        <Divider />
        <ExtrasEditor extras={draft.extras} onChange={(extras) => set('extras', extras)} problem={problem} />
        <Group justify="flex-end" gap="sm">
          {dirty ? (
            <Text size="sm" c="dimmed" role="status">
              Unsaved changes
            </Text>
          ) : null}
          <Button variant="default" disabled={!dirty} onClick={() => setDraft(initial)}>
            Discard changes
          </Button>
          <Button type="submit" loading={save.isPending}>
            Save prompt
          </Button>
        </Group>
      </Stack>
    </form>
  )
}

/** The emoji look of the prompt (`profile_photo_config`); a photo needs the REST upload. */
function Appearance({
  draft,
  set,
  problem,
}: {
  draft: Draft
  set: <K extends keyof Draft>(key: K, value: Draft[K]) => void
  problem: Problem | null
}) {
  return (
    <Stack gap="sm">
      <Text fw={600}>Appearance</Text>
      <SimpleGrid cols={{ base: 1, sm: 3 }} spacing="sm">
        <TextInput
          label="Emoji"
          maxLength={32}
          value={draft.emoji}
          onChange={(e) => set('emoji', e.currentTarget.value)}
          error={fieldError(problem, 'profile_photo_config.emoji')}
        />
        <ColorInput
          label="Background colour"
          format="hex"
          value={draft.backgroundColor}
          onChange={(value) => set('backgroundColor', value)}
          error={fieldError(problem, 'profile_photo_config.background_color')}
        />
        <Select
          label="Show"
          data={[
            { value: 'emoji', label: 'The emoji' },
            { value: 'image', label: 'The photo' },
          ]}
          placeholder="Not set"
          value={draft.preference || null}
          onChange={(value) => set('preference', (value ?? '') as Preference | '')}
          clearable
          error={fieldError(problem, 'profile_photo_config.preference')}
          comboboxProps={{ withinPortal: true }}
        />
      </SimpleGrid>
    </Stack>
  )
}

/** The prompt's other metadata: free strings by key, kept for the integrations that read them. */
function ExtrasEditor({
  extras,
  onChange,
  problem,
}: {
  extras: ExtraDraft[]
  onChange: (extras: ExtraDraft[]) => void
  problem: Problem | null
}) {
  const set = (index: number, patch: Partial<ExtraDraft>) =>
    onChange(extras.map((extra, i) => (i === index ? { ...extra, ...patch } : extra)))
  return (
    <Stack gap="sm">
      <Text fw={600}>Other metadata</Text>
      {extras.length === 0 ? (
        <Text size="sm" c="dimmed">
          None. Integrations may keep their own strings here.
        </Text>
      ) : null}
      {extras.map((extra, index) => (
        <Group key={extra.id} align="flex-start" gap="sm" wrap="wrap">
          <TextInput
            label={`Metadata key ${index + 1}`}
            value={extra.key}
            onChange={(e) => set(index, { key: e.currentTarget.value })}
            error={fieldError(problem, `metadata.${extra.key.trim()}`)}
            style={{ flex: '1 1 160px' }}
          />
          <TextInput
            label={`Metadata value ${index + 1}`}
            value={extra.value}
            onChange={(e) => set(index, { value: e.currentTarget.value })}
            style={{ flex: '2 1 200px' }}
          />
          <ActionIcon
            variant="subtle"
            color="red"
            mt={26}
            aria-label={`Remove metadata ${index + 1}`}
            onClick={() => onChange(extras.filter((_, i) => i !== index))}
          >
            ✕
          </ActionIcon>
        </Group>
      ))}
      <Group>
        <Button variant="light" onClick={() => onChange([...extras, { id: newInputId(), key: '', value: '' }])}>
          Add metadata
        </Button>
      </Group>
    </Stack>
  )
}
