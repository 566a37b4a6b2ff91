/**
 * The declared inputs of a prompt (`metadata.input`, docs/api/resources.md, "Prompts"), as an
 * editable list: key, label, type, required and, for the select kinds, options; inputs can be
 * added, removed and reordered (the run form follows this order). The whole list is sent on save,
 * replacing the stored one, and a 400's issues (`metadata.input.N.key`) show at their control.
 */
import { ActionIcon, Alert, Button, Checkbox, Fieldset, Group, Select, SimpleGrid, Stack, TagsInput, Text, TextInput } from '@mantine/core'
import type { Problem } from '../../lib/api.ts'
import { fieldError } from '../../ui/forms.ts'
import { INPUT_TYPES, SELECT_TYPES, type InputType, type PromptInput } from './promptTypes.ts'

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
  onChange,
  problem,
}: {
  inputs: InputDraft[]
  onChange: (inputs: InputDraft[]) => void
  problem: Problem | null
}) {
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
      {inputs.length === 0 ? <Text size="sm">No inputs declared: the template runs as written.</Text> : null}
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
