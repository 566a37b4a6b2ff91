/**
 * The declared inputs of a prompt (`metadata.input`, docs/api/resources.md, "Prompts"), as an
 * editable list: key, label, type, required and, for the select kinds, options; inputs can be
 * added, removed and reordered (the run form follows this order). The whole list is sent on save,
 * replacing the stored one, and a 400's issues (`metadata.input.N.key`) show at their control.
 *
 * The template's `{{names}}` (./templateVariables.ts, parsed as the service parses them) that no
 * input declares are proposed, each added with one click; a declared input the template does not
 * use is flagged, since its value would go nowhere.
 */
import {
  ActionIcon,
  Alert,
  Button,
  Checkbox,
  Fieldset,
  Group,
  Paper,
  Select,
  SimpleGrid,
  Stack,
  TagsInput,
  Text,
  TextInput,
} from '@mantine/core'
import { useMemo } from 'react'
import type { Problem } from '../../lib/api.ts'
import { fieldError } from '../../ui/forms.ts'
import { INPUT_TYPES, SELECT_TYPES, type InputType, type PromptInput } from './promptTypes.ts'
import { labelOf, templateNames } from './templateVariables.ts'

/** Most inputs a prompt declares. */
const MAX_INPUTS = 50

/** One input being edited; `id` keeps React's rows stable while keys are typed. */
export interface InputDraft {
  id: number
  key: string
  label: string
  type: InputType
  required: boolean
  options: string[]
}

let nextId = 1
export const newInputId = () => nextId++

export function toInputDraft(field: PromptInput): InputDraft {
  const type = INPUT_TYPES.some((option) => option.value === field.type) ? (field.type as InputType) : 'text'
  return { id: newInputId(), key: field.key, label: field.label, type, required: field.required, options: field.options ?? [] }
}

/** The list as the update takes it: `options` only (and always) for the select kinds. */
export function toInputList(inputs: InputDraft[]) {
  return inputs.map(({ key, label, type, required, options }) => ({
    key,
    label,
    type,
    required,
    ...(SELECT_TYPES.includes(type) ? { options } : {}),
  }))
}

export function InputsEditor({
  inputs,
  template,
  onChange,
  problem,
}: {
  inputs: InputDraft[]
  /** The prompt's template as edited, whose names are proposed as inputs. */
  template: string
  onChange: (inputs: InputDraft[]) => void
  problem: Problem | null
}) {
  const parsed = useMemo(() => templateNames(template), [template])
  const declared = new Set(inputs.map((input) => input.key))
  const proposed = parsed.names.filter((name) => !declared.has(name))
  const used = new Set(parsed.names)
  const room = MAX_INPUTS - inputs.length
  const propose = (keys: string[]) =>
    onChange([
      ...inputs,
      ...keys.map((key) => ({ id: newInputId(), key, label: labelOf(key), type: 'text' as const, required: false, options: [] })),
    ])
  const set = (index: number, patch: Partial<InputDraft>) =>
    onChange(inputs.map((input, i) => (i === index ? { ...input, ...patch } : input)))
  const move = (index: number, by: number) => {
    const next = [...inputs]
    const [moved] = next.splice(index, 1)
    next.splice(index + by, 0, moved!)
    onChange(next)
  }
  const listError = problem?.fields['metadata.input']
  return (
    <Stack gap="sm">
      <Text fw={600}>Inputs</Text>
      <Text size="sm" c="dimmed">
        Each input is a field of the run form; the template inserts it as {'{{key}}'}.
      </Text>
      {listError ? (
        <Alert color="red" role="alert">
          {listError}
        </Alert>
      ) : null}
      {proposed.length ? (
        <Paper withBorder p="sm" bg="var(--mantine-color-blue-light)" component="section" aria-label="Proposed inputs">
          <Stack gap="xs">
            <Text size="sm" fw={600}>
              The template names inputs not declared yet
            </Text>
            <Text size="sm">Undeclared names insert nothing. Add each as a text input, then change its label and type if needed.</Text>
            <Group gap="xs">
              {proposed.map((name, index) => (
                <Button
                  key={name}
                  size="xs"
                  variant="default"
                  aria-label={`Declare input ${name}`}
                  disabled={index >= room}
                  onClick={() => propose([name])}
                  styles={{ label: { fontFamily: 'var(--mantine-font-family-monospace)' } }}
                >
                  + {name}
                </Button>
              ))}
              {proposed.length > 1 ? (
                <Button size="xs" variant="subtle" disabled={room <= 0} onClick={() => propose(proposed.slice(0, room))}>
                  Add all
                </Button>
              ) : null}
            </Group>
          </Stack>
        </Paper>
      ) : null}
      {parsed.error ? (
        <Text size="sm" c="orange">
          The template is not valid Mustache yet ({parsed.error}), so its inputs cannot be read from it.
        </Text>
      ) : null}
      {inputs.length === 0 && proposed.length === 0 ? <Text size="sm">No inputs declared: the template runs as written.</Text> : null}
      {inputs.map((input, index) => {
        const path = `metadata.input.${index}`
        const legend = `Input ${index + 1}`
        return (
          <Fieldset key={input.id} legend={legend} p="sm">
            <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="sm">
              <TextInput
                label="Key"
                description="Letters, digits and _; used as {{key}}"
                required
                value={input.key}
                onChange={(e) => set(index, { key: e.currentTarget.value })}
                error={fieldError(problem, `${path}.key`)}
                styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }}
              />
              <TextInput
                label="Label"
                description="What the run form shows"
                required
                value={input.label}
                onChange={(e) => set(index, { label: e.currentTarget.value })}
                error={fieldError(problem, `${path}.label`)}
              />
              <Select
                label="Type"
                data={INPUT_TYPES}
                value={input.type}
                onChange={(value) => value && set(index, { type: value as InputType })}
                allowDeselect={false}
                error={fieldError(problem, `${path}.type`)}
                comboboxProps={{ withinPortal: true }}
              />
              {SELECT_TYPES.includes(input.type) ? (
                <TagsInput
                  label="Options"
                  description="Press Enter after each option"
                  required
                  value={input.options}
                  onChange={(options) => set(index, { options })}
                  error={fieldError(problem, `${path}.options`)}
                  clearable
                />
              ) : null}
            </SimpleGrid>
            {input.key && !parsed.error && !used.has(input.key) ? (
              <Text size="sm" c="orange" mt="xs">
                The template does not use {`{{${input.key}}}`}: this input's value goes nowhere.
              </Text>
            ) : null}
            <Group justify="space-between" mt="sm" wrap="wrap" gap="xs">
              <Checkbox label="Required" checked={input.required} onChange={(e) => set(index, { required: e.currentTarget.checked })} />
              <Group gap={4}>
                <ActionIcon
                  variant="default"
                  aria-label={`Move input ${index + 1} up`}
                  disabled={index === 0}
                  onClick={() => move(index, -1)}
                >
                  ↑
                </ActionIcon>
                <ActionIcon
                  variant="default"
                  aria-label={`Move input ${index + 1} down`}
                  disabled={index === inputs.length - 1}
                  onClick={() => move(index, 1)}
                >
                  ↓
                </ActionIcon>
                <Button
                  size="xs"
                  variant="subtle"
                  color="red"
                  aria-label={`Remove input ${index + 1}`}
                  onClick={() => onChange(inputs.filter((_, i) => i !== index))}
                >
                  Remove
                </Button>
              </Group>
            </Group>
          </Fieldset>
        )
      })}
      <Group>
        <Button
          variant="light"
          disabled={inputs.length >= MAX_INPUTS}
          onClick={() => onChange([...inputs, { id: newInputId(), key: '', label: '', type: 'text', required: false, options: [] }])}
        >
          Add input
        </Button>
      </Group>
    </Stack>
  )
}
