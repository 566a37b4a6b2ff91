/**
 * Runs a prompt (`runs.prompt`, `POST /api/v1/prompts/{prompt_uuid}/run`) with a form built from
 * its stored inputs: one labelled control per input, by type, the required ones marked. The
 * service checks the values (docs/api/runs.md, "Prompt inputs"), so the form leaves that to it and
 * shows a 400's `input.<key>` issue at that input's control; the answer is the run's `output`.
 */
import {
  Alert,
  Badge,
  Button,
  Checkbox,
  Group,
  MultiSelect,
  NumberInput,
  Paper,
  Select,
  Stack,
  Text,
  Textarea,
  TextInput,
  Title,
} from '@mantine/core'
import { useState, type FormEvent } from 'react'
import { problemOf, type RouterOutputs } from '../../lib/api.ts'
import { fieldError } from '../../ui/forms.ts'
import { FormProblem } from '../../ui/FormProblem.tsx'
import { useRunPrompt } from './api.ts'
import { ModelSelect } from './ModelSelect.tsx'
import { promptModel, type Prompt, type PromptInput } from './promptTypes.ts'

type Value = string | number | boolean | string[]
type RunAnswer = RouterOutputs['runs']['prompt']['data']

/** A control's empty value by input type: booleans start unchecked, lists empty, the rest blank. */
function emptyValue(type: string): Value {
  if (type === 'boolean') return false
  if (type === 'multiselect') return []
  return ''
}

/**
 * The run's `input`: blank text and unset numbers are left out (an optional input may be absent,
 * and a required one left out gets the service's "is required" at its field).
 */
function toRunInput(inputs: PromptInput[], values: Record<string, Value>): Record<string, Value> {
  const result: Record<string, Value> = {}
  for (const input of inputs) {
    const value = values[input.key] ?? emptyValue(input.type)
    if (input.type === 'number') {
      if (typeof value === 'number') result[input.key] = value
    } else if (typeof value === 'string') {
      if (value !== '') result[input.key] = value
    } else if (Array.isArray(value)) {
      if (value.length) result[input.key] = value
    } else {
      result[input.key] = value
    }
  }
  return result
}

export function RunPanel({ prompt, unsaved }: { prompt: Prompt; unsaved: boolean }) {
  const inputs = prompt.metadata.input
  const [values, setValues] = useState<Record<string, Value>>({})
  const [model, setModel] = useState(() => promptModel(prompt))
  const run = useRunPrompt()
  const problem = run.error ? problemOf(run.error) : null
  const submit = (event: FormEvent) => {
    event.preventDefault()
    run.mutate({ prompt_uuid: prompt.uuid, input: toRunInput(inputs, values), ...(model ? { large_language_model: model } : {}) })
  }
  const set = (key: string, value: Value) => setValues((current) => ({ ...current, [key]: value }))
  return (
    <Stack>
      {unsaved ? (
        <Alert color="yellow" role="status">
          The prompt has unsaved changes: a run uses the saved template and inputs.
        </Alert>
      ) : null}
      <form onSubmit={submit} noValidate aria-label="Run prompt">
        <Stack>
          <FormProblem problem={problem} fields={[...inputs.map((input) => `input.${input.key}`), 'large_language_model']} />
          {inputs.length === 0 ? <Text size="sm">This prompt declares no inputs: it runs its template as written.</Text> : null}
          {inputs.map((input) => (
            <InputControl
              key={input.key}
              input={input}
              value={values[input.key] ?? emptyValue(input.type)}
              onChange={(value) => set(input.key, value)}
              error={fieldError(problem, `input.${input.key}`)}
            />
          ))}
          <ModelSelect label="Model" value={model} onChange={setModel} error={fieldError(problem, 'large_language_model')} />
          <Group>
            <Button type="submit" loading={run.isPending}>
              Run prompt
            </Button>
          </Group>
        </Stack>
      </form>
      {run.data ? <Answer run={run.data.data} /> : null}
    </Stack>
  )
}

/** One input's control, by its type; the label is the input's, the key its description. */
function InputControl({
  input,
  value,
  onChange,
  error,
}: {
  input: PromptInput
  value: Value
  onChange: (value: Value) => void
  error?: string
}) {
  const common = { label: input.label, description: `{{${input.key}}}`, withAsterisk: input.required, error }
  const options = input.options ?? []
  switch (input.type) {
    case 'textarea':
      return (
        <Textarea {...common} autosize minRows={3} maxRows={12} value={String(value)} onChange={(e) => onChange(e.currentTarget.value)} />
      )
    case 'number':
      return (
        <NumberInput
          {...common}
          value={typeof value === 'number' ? value : ''}
          onChange={(next) => onChange(typeof next === 'number' ? next : '')}
        />
      )
    case 'boolean':
      return (
        <Checkbox
          label={input.label}
          description={common.description}
          error={error}
          checked={value === true}
          onChange={(e) => onChange(e.currentTarget.checked)}
        />
      )
    case 'date':
      return <TextInput {...common} type="date" value={String(value)} onChange={(e) => onChange(e.currentTarget.value)} />
    case 'select':
      return (
        <Select
          {...common}
          data={options}
          value={typeof value === 'string' && value ? value : null}
          onChange={(next) => onChange(next ?? '')}
          clearable={!input.required}
          placeholder="Choose one"
          comboboxProps={{ withinPortal: true }}
        />
      )
    case 'multiselect':
      return (
        <MultiSelect
          {...common}
          data={options}
          value={Array.isArray(value) ? value : []}
          onChange={onChange}
          clearable
          placeholder="Choose any"
          comboboxProps={{ withinPortal: true }}
        />
      )
    default:
      return <TextInput {...common} value={String(value)} onChange={(e) => onChange(e.currentTarget.value)} />
  }
}

/** The run's answer, with its model, tokens and time. */
function Answer({ run }: { run: RunAnswer }) {
  const { status, output, model, usage, latency_ms: latency, error, warnings } = run.run
  return (
    <Paper withBorder p="md" radius="md" component="section" aria-labelledby="prompt-answer-title">
      <Group justify="space-between" mb="xs" wrap="wrap" gap="xs">
        <Title order={3} size="h4" id="prompt-answer-title">
          Answer
        </Title>
        <Group gap="xs">
          <Badge color={status === 'succeeded' ? 'green' : status === 'failed' ? 'red' : 'gray'} variant="light">
            {status}
          </Badge>
          {model ? (
            <Badge variant="outline" tt="none">
              {model}
            </Badge>
          ) : null}
        </Group>
      </Group>
      {warnings.map((warning) => (
        <Alert key={warning.code} color="yellow" mb="xs">
          {warning.message}
        </Alert>
      ))}
      {error ? (
        <Alert color="red" role="alert" mb="xs">
          {error.message}
        </Alert>
      ) : null}
      <Text style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }} data-testid="prompt-answer">
        {output ?? ''}
      </Text>
      <Text size="xs" c="dimmed" mt="sm">
        {usage.total_tokens} tokens ({usage.prompt_tokens} in, {usage.completion_tokens} out)
        {latency !== null ? `, ${(latency / 1000).toFixed(1)} s` : ''}
        {usage.cost ? `, $${usage.cost.toFixed(6)}` : ''}
      </Text>
    </Paper>
  )
}
