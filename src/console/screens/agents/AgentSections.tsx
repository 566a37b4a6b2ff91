/**
 * The sections of the agent form (every field of "Update an Agent", docs/api/resources.md):
 * basics, persona, capabilities, appearance and extra metadata. Each shows the 400's issues at
 * its own fields by their dotted paths (`metadata.role`, `tools.0.account_uuid`);
 * {@link SECTION_FIELDS} says which paths each section shows, so the form can open the sections
 * holding issues and put the rest in one alert.
 */
import {
  ActionIcon,
  Anchor,
  Avatar,
  Button,
  ColorInput,
  Group,
  Paper,
  Select,
  SimpleGrid,
  Stack,
  Switch,
  TagsInput,
  Text,
  Textarea,
  TextInput,
} from '@mantine/core'
import { useState } from 'react'
import type { Problem } from '../../lib/api.ts'
import { uploadProblemOf, useUpload } from '../../lib/upload.ts'
import { FileDrop } from '../../ui/FileDrop.tsx'
import { fieldError } from '../../ui/forms.ts'
import {
  CONVERSATION_STARTERS_MAX,
  DISC_PERSONALITIES,
  LINKS_MAX,
  newExtra,
  OPENAI_VOICES,
  type Agent,
  type Draft,
  type FlagMetadataKey,
  type TextMetadataKey,
} from './agentDraft.ts'
import { CategoryPicker, ModelSelect, ToolLinks, WorkflowPicker } from './AgentPickers.tsx'

export type SectionKey = 'basics' | 'persona' | 'capabilities' | 'appearance' | 'extra'

/** The issue paths each section shows at a field (a path also covers those below it). */
export function sectionFields(draft: Draft): Record<SectionKey, string[]> {
  return {
    basics: ['name', 'description', 'instruction', 'visibility', 'is_template', 'metadata.large_language_model', 'category_uuids'],
    persona: [
      'metadata.role',
      'metadata.tone_of_voice',
      'metadata.goal_statement',
      'metadata.backstory',
      'metadata.guardrails',
      'metadata.base_instructions',
      'metadata.greetings',
      'metadata.disc_personality',
      'metadata.openai_voice',
      'metadata.conversation_starters',
    ],
    capabilities: ['metadata.memory', 'metadata.knowledge', 'metadata.web_search', 'tools', 'workflows', 'file'],
    appearance: ['profile_photo_key', 'profile_photo_config.emoji', 'profile_photo_config.background_color', 'profile_photo_config.preference'],
    extra: draft.extras.filter((extra) => extra.key).map((extra) => `metadata.${extra.key}`),
  }
}

export const SECTION_TITLES: Record<SectionKey, string> = {
  basics: 'Basics',
  persona: 'Persona',
  capabilities: 'Tools and capabilities',
  appearance: 'Photo',
  extra: 'Extra metadata',
}

export interface SectionProps {
  draft: Draft
  /** Changes the draft from its latest value (typing fast must not lose keystrokes). */
  change: (update: (draft: Draft) => Partial<Draft>) => void
  problem: Problem | null
  agent?: Agent
}

/** `onChange` of a text input writing `field` of the draft. */
const textField =
  <K extends 'name' | 'description' | 'instruction' | 'photo_key'>(change: SectionProps['change'], field: K) =>
  (event: { currentTarget: { value: string } }) => {
    const value = event.currentTarget.value
    change(() => ({ [field]: value }) as Partial<Draft>)
  }

/** Long user text wraps anywhere rather than widening the form. */
const wrap = { input: { overflowWrap: 'anywhere' as const } }

export function BasicsSection({ draft, change, problem, agent }: SectionProps) {
  return (
    <Stack>
      <TextInput label="Name" required maxLength={255} value={draft.name} onChange={textField(change, 'name')} error={fieldError(problem, 'name')} />
      <Textarea
        label="Description"
        description="What the agent is for (at most 2,000 characters)."
        autosize
        minRows={2}
        maxRows={6}
        value={draft.description}
        onChange={textField(change, 'description')}
        error={fieldError(problem, 'description')}
        styles={wrap}
      />
      <Textarea
        label="Instruction"
        description="The system prompt every run starts from."
        autosize
        minRows={4}
        maxRows={16}
        value={draft.instruction}
        onChange={textField(change, 'instruction')}
        error={fieldError(problem, 'instruction')}
        styles={wrap}
      />
      <SimpleGrid cols={{ base: 1, sm: 2 }}>
        <ModelSelect
          value={draft.large_language_model}
          onChange={(value) => change(() => ({ large_language_model: value }))}
          error={fieldError(problem, 'metadata.large_language_model')}
        />
        <Select
          label="Visibility"
          description="Who else sees it: nobody, this workspace's members, or everyone."
          data={[
            { value: 'private', label: 'Private' },
            { value: 'workspace', label: 'Workspace' },
            { value: 'public', label: 'Public' },
          ]}
          value={draft.visibility}
          onChange={(value) => value && change(() => ({ visibility: value as Draft['visibility'] }))}
          allowDeselect={false}
          error={fieldError(problem, 'visibility')}
          comboboxProps={{ withinPortal: true }}
        />
      </SimpleGrid>
      <CategoryPicker agent={agent} value={draft.category_uuids} onChange={(value) => change(() => ({ category_uuids: value }))} error={fieldError(problem, 'category_uuids')} />
      <Switch
        label="Template"
        description="Offered to others as a starting point."
        checked={draft.is_template}
        onChange={(event) => {
          const checked = event.currentTarget.checked
          change(() => ({ is_template: checked }))
        }}
        error={fieldError(problem, 'is_template')}
      />
    </Stack>
  )
}

/** The persona's free-text fields: label, bound and how many rows. */
const PERSONA_TEXT: [TextMetadataKey, string, number, number][] = [
  ['role', 'Role', 255, 1],
  ['tone_of_voice', 'Tone of voice', 255, 1],
  ['goal_statement', 'Goal', 5_000, 2],
  ['backstory', 'Backstory', 10_000, 3],
  ['guardrails', 'Guardrails', 10_000, 3],
  ['base_instructions', 'Base instructions', 20_000, 3],
  ['greetings', 'Greeting', 2_000, 2],
]

export function PersonaSection({ draft, change, problem }: SectionProps) {
  const setText = (key: TextMetadataKey) => (event: { currentTarget: { value: string } }) => {
    const value = event.currentTarget.value
    change((latest) => ({ text: { ...latest.text, [key]: value } }))
  }
  return (
    <Stack>
      <SimpleGrid cols={{ base: 1, sm: 2 }}>
        {PERSONA_TEXT.filter(([, , , rows]) => rows === 1).map(([key, label]) => (
          <TextInput key={key} label={label} value={draft.text[key]} onChange={setText(key)} error={fieldError(problem, `metadata.${key}`)} />
        ))}
        <Select
          label="DISC personality"
          data={DISC_PERSONALITIES.map((value) => ({ value, label: value[0].toUpperCase() + value.slice(1) }))}
          value={draft.disc_personality || null}
          onChange={(value) => change(() => ({ disc_personality: value ?? '' }))}
          clearable
          placeholder="None"
          error={fieldError(problem, 'metadata.disc_personality')}
          comboboxProps={{ withinPortal: true }}
        />
        <Select
          label="Voice"
          description="OpenAI text-to-speech voice."
          data={[...OPENAI_VOICES]}
          value={draft.openai_voice || null}
          onChange={(value) => change(() => ({ openai_voice: value ?? '' }))}
          clearable
          placeholder="None"
          error={fieldError(problem, 'metadata.openai_voice')}
          comboboxProps={{ withinPortal: true }}
        />
      </SimpleGrid>
      {PERSONA_TEXT.filter(([, , , rows]) => rows > 1).map(([key, label, max, rows]) => (
        <Textarea
          key={key}
          label={label}
          description={`At most ${max.toLocaleString('en')} characters.`}
          autosize
          minRows={rows}
          maxRows={12}
          value={draft.text[key]}
          onChange={setText(key)}
          error={fieldError(problem, `metadata.${key}`)}
          styles={wrap}
        />
      ))}
      <ConversationStarters draft={draft} change={change} problem={problem} />
    </Stack>
  )
}

/** The starters a chat offers; blank ones are not sent, so issue indexes skip them. */
function ConversationStarters({ draft, change, problem }: SectionProps) {
  const starters = draft.conversation_starters
  const set = (index: number, value: string) => change((latest) => ({ conversation_starters: latest.conversation_starters.map((old, i) => (i === index ? value : old)) }))
  let sent = 0
  return (
    <Stack gap="xs">
      <Text fw={500} size="sm">
        Conversation starters
      </Text>
      {starters.map((starter, index) => {
        const sentIndex = starter.trim() ? sent++ : -1
        return (
          <Group key={index} gap="xs" wrap="nowrap" align="start">
            <TextInput
              label={`Starter ${index + 1}`}
              value={starter}
              onChange={(event) => set(index, event.currentTarget.value)}
              error={sentIndex >= 0 ? fieldError(problem, `metadata.conversation_starters.${sentIndex}`) : undefined}
              style={{ flex: 1, minWidth: 0 }}
            />
            <ActionIcon
              variant="subtle"
              color="red"
              size="lg"
              mt={24}
              aria-label={`Remove starter ${index + 1}`}
              onClick={() => change((latest) => ({ conversation_starters: latest.conversation_starters.filter((_, i) => i !== index) }))}
            >
              ×
            </ActionIcon>
          </Group>
        )
      })}
      {problem?.fields['metadata.conversation_starters'] ? (
        <Text c="red" size="sm">
          {problem.fields['metadata.conversation_starters']}
        </Text>
      ) : null}
      <Group>
        <Button
          variant="light"
          size="xs"
          disabled={starters.length >= CONVERSATION_STARTERS_MAX}
          onClick={() => change((latest) => ({ conversation_starters: [...latest.conversation_starters, ''] }))}
        >
          Add starter
        </Button>
      </Group>
    </Stack>
  )
}

const FLAGS: [FlagMetadataKey, string, string][] = [
  ['memory', 'Memory', 'Remembers facts about each user across chats.'],
  ['knowledge', 'Knowledge', 'Answers from its trained knowledge files.'],
  ['web_search', 'Web search', "Searches the web through its model's provider."],
]

export function CapabilitiesSection({ draft, change, problem, agent }: SectionProps) {
  const files = new Map((agent?.files ?? []).map((file) => [file.key, file]))
  return (
    <Stack>
      <Group gap="lg" wrap="wrap">
        {FLAGS.map(([key, label, description]) => (
          <Switch
            key={key}
            label={label}
            description={description}
            checked={draft.flags[key]}
            onChange={(event) => {
              const checked = event.currentTarget.checked
              change((latest) => ({ flags: { ...latest.flags, [key]: checked } }))
            }}
            error={fieldError(problem, `metadata.${key}`)}
            style={{ flex: '1 1 200px' }}
          />
        ))}
      </Group>
      <ToolLinks agent={agent} links={draft.tools} onChange={(tools) => change(() => ({ tools }))} problem={problem} />
      <WorkflowPicker agent={agent} value={draft.workflows} onChange={(workflows) => change(() => ({ workflows }))} error={fieldError(problem, 'workflows')} />
      <TagsInput
        label="Knowledge files"
        description="Keys of uploaded files (POST /api/v1/media) the agent is trained on; removing one untrains it."
        value={draft.file_keys}
        onChange={(file_keys) => change(() => ({ file_keys }))}
        maxTags={LINKS_MAX}
        splitChars={[',', ' ']}
        clearable
        error={fieldError(problem, 'file')}
      />
      {draft.file_keys.some((key) => files.has(key)) ? (
        <Stack gap={2}>
          {draft.file_keys
            .filter((key) => files.has(key))
            .map((key) => {
              const file = files.get(key)!
              return (
                <Anchor key={key} href={file.url} target="_blank" rel="noreferrer" size="sm" style={{ overflowWrap: 'anywhere' }}>
                  {key} ({file.mime_type}, {Math.max(1, Math.round(file.size / 1024))} KB)
                </Anchor>
              )
            })}
        </Stack>
      ) : null}
    </Stack>
  )
}

/** The image types the service stores (docs/api/resources.md, "Media"); SVG is refused. */
const PHOTO_TYPES = { 'image/png': ['.png'], 'image/jpeg': ['.jpg', '.jpeg'], 'image/gif': ['.gif'], 'image/webp': ['.webp'] }

export function AppearanceSection({ draft, change, problem, agent }: SectionProps) {
  const setPhoto = (key: keyof Draft['photo'], value: string) => change((latest) => ({ photo: { ...latest.photo, [key]: value } }))
  // The draft keeps only the new upload's key; its name and URL are kept here to show it before the save.
  const [uploaded, setUploaded] = useState<{ name: string; key: string; url: string } | null>(null)
  const upload = useUpload({
    onSuccess: (stored, file) => {
      setUploaded({ name: file.name, key: stored.key, url: stored.url })
      change(() => ({ photo_key: stored.key }))
    },
  })
  const photo = uploaded && draft.photo_key === uploaded.key && !draft.remove_photo ? uploaded : null
  const url = draft.remove_photo ? null : (photo?.url ?? agent?.profile_photo_url)
  return (
    <Stack>
      <Group gap="md" wrap="nowrap">
        <Avatar
          src={url ?? undefined}
          size="lg"
          radius="xl"
          alt={photo ? 'New photo' : url ? 'Current photo' : undefined}
          style={{ background: draft.photo.background_color || undefined, flexShrink: 0 }}
        >
          {draft.photo.emoji || draft.name.slice(0, 1).toUpperCase() || '?'}
        </Avatar>
        <Text size="sm" c="dimmed">
          {photo
            ? 'The new photo, once saved.'
            : url
              ? 'The agent has a photo.'
              : 'No photo: the emoji on its colour stands for the agent.'}
        </Text>
      </Group>
      <SimpleGrid cols={{ base: 1, sm: 3 }}>
        <TextInput label="Emoji" maxLength={32} value={draft.photo.emoji} onChange={(event) => setPhoto('emoji', event.currentTarget.value)} error={fieldError(problem, 'profile_photo_config.emoji')} />
        <ColorInput
          label="Background colour"
          format="hex"
          value={draft.photo.background_color}
          onChange={(value) => setPhoto('background_color', value)}
          error={fieldError(problem, 'profile_photo_config.background_color')}
          popoverProps={{ withinPortal: true }}
        />
        <Select
          label="Show"
          data={[
            { value: 'emoji', label: 'The emoji' },
            { value: 'image', label: 'The photo' },
          ]}
          value={draft.photo.preference || null}
          onChange={(value) => setPhoto('preference', value ?? '')}
          clearable
          placeholder="Not set"
          error={fieldError(problem, 'profile_photo_config.preference')}
          comboboxProps={{ withinPortal: true }}
        />
      </SimpleGrid>
      <FileDrop
        label={agent?.profile_photo_url ? 'New photo' : 'Photo'}
        hint={`PNG, JPEG, GIF or WebP; it is kept when the agent is ${agent ? 'saved' : 'created'}.`}
        accept={PHOTO_TYPES}
        loading={upload.isPending}
        disabled={draft.remove_photo}
        error={upload.error ? uploadProblemOf(upload.error).message : fieldError(problem, 'profile_photo_key')}
        onFiles={([file]) => file && upload.mutate(file)}
      />
      {photo ? (
        <Group gap="xs" wrap="nowrap">
          <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
            “{photo.name}” uploaded; {agent ? 'save' : 'create'} the agent to use it.
          </Text>
          <Button size="xs" variant="subtle" onClick={() => change(() => ({ photo_key: '' }))}>
            Discard
          </Button>
        </Group>
      ) : null}
      {agent?.profile_photo_url ? (
        <Switch
          label="Remove the photo"
          checked={draft.remove_photo}
          onChange={(event) => {
            const checked = event.currentTarget.checked
            change(() => ({ remove_photo: checked }))
          }}
        />
      ) : null}
    </Stack>
  )
}

export function ExtraSection({ draft, change, problem }: SectionProps) {
  const set = (id: number, update: { key?: string; value?: string }) =>
    change((latest) => ({ extras: latest.extras.map((extra) => (extra.id === id ? { ...extra, ...update } : extra)) }))
  return (
    <Stack gap="xs">
      <Text size="sm" c="dimmed">
        Your own metadata keys (letters, digits and <code>_.-</code>) with text values; runs never read them.
      </Text>
      {draft.extras.map((extra, index) => {
        const issue = extra.key ? fieldError(problem, `metadata.${extra.key}`) : undefined
        const aboutKey = issue?.includes('keys')
        return (
          <Paper key={extra.id} withBorder p="xs">
            <Group gap="xs" align="start" wrap="wrap">
              <TextInput
                label={`Key ${index + 1}`}
                value={extra.key}
                maxLength={64}
                onChange={(event) => set(extra.id, { key: event.currentTarget.value })}
                error={aboutKey ? issue : undefined}
                style={{ flex: '1 1 140px', minWidth: 0 }}
              />
              <TextInput
                label={`Value ${index + 1}`}
                value={extra.value}
                onChange={(event) => set(extra.id, { value: event.currentTarget.value })}
                error={aboutKey ? undefined : issue}
                style={{ flex: '2 1 180px', minWidth: 0 }}
              />
              <ActionIcon
                variant="subtle"
                color="red"
                size="lg"
                mt={24}
                aria-label={`Remove key ${extra.key || index + 1}`}
                onClick={() => change((latest) => ({ extras: latest.extras.filter((other) => other.id !== extra.id) }))}
              >
                ×
              </ActionIcon>
            </Group>
          </Paper>
        )
      })}
      <Group>
        <Button variant="light" size="xs" onClick={() => change((latest) => ({ extras: [...latest.extras, newExtra()] }))}>
          Add key
        </Button>
      </Group>
    </Stack>
  )
}
