/**
 * The "New evaluation" dialog (`evaluations.create`, `POST /api/v1/evaluations`): a name, the
 * dataset and the agent picked by name (`datasets.list`, `agents.list`), the agent's version
 * (optional: the current one is pinned), the scorers as repeatable rows and the concurrency. The
 * seven kinds of scorer, each with its settings: exact_match (none), contains (an optional text;
 * the item's expected output when empty), regex (a pattern), json_schema (a JSON Schema typed as
 * JSON text), max_latency_ms (milliseconds), max_cost (US dollars) and llm_judge (a rubric and an
 * optional model, picked like a prompt run's: empty sends none, so the workspace's default judges).
 *
 * A schema that is not a JSON object is said at its row's field (`scorers.<i>.schema`) and nothing
 * is sent. The service's 400 is shown at the fields its issues name: an invalid regular expression
 * at its row's pattern (`scorers.<i>.pattern`), a schema Ajv cannot compile at its schema, a cost
 * at its value, a rubric or a model the judge cannot use at theirs. A created evaluation opens its
 * screen.
 */
import { ActionIcon, Button, Group, Modal, NumberInput, Select, Stack, Text, Textarea, TextInput } from '@mantine/core'
import { useState, type FormEvent } from 'react'
import { useNavigate } from 'react-router'
import { problemOf, type Problem, type RouterInputs } from '../../lib/api.ts'
import { fieldError } from '../../ui/forms.ts'
import { FormProblem } from '../../ui/FormProblem.tsx'
import { useAgentChoices } from '../agents/api.ts'
import { ModelSelect } from '../prompts/ModelSelect.tsx'
import { useCreateEvaluation, useDatasets } from './api.ts'

type ScorerInput = RouterInputs['evaluations']['create']['scorers'][number]
type ScorerType = ScorerInput['type']

/** One row of the scorers' editor: its type, its one setting as typed, and the judge's model ('' for the default). */
interface ScorerRow {
  type: ScorerType
  setting: string
  model: string
}

const SCORER_TYPES: { value: ScorerType; label: string }[] = [
  { value: 'exact_match', label: 'Exact match' },
  { value: 'contains', label: 'Contains' },
  { value: 'regex', label: 'Regular expression' },
  { value: 'json_schema', label: 'JSON Schema' },
  { value: 'max_latency_ms', label: 'Maximum latency' },
  { value: 'max_cost', label: 'Maximum cost' },
  { value: 'llm_judge', label: 'Model as judge' },
]

interface Setting {
  field: 'value' | 'pattern' | 'schema' | 'rubric'
  label: string
  description: string
  /** Typed in a Textarea rather than a one-line input. */
  multiline?: boolean
  numeric?: boolean
  required: boolean
}

/** The setting each type takes: its field's name in the body and its label, or none. */
const SETTING: Record<ScorerType, Setting | null> = {
  exact_match: null,
  contains: { field: 'value', label: 'Text', description: "Optional: the item's expected output when empty", required: false },
  regex: { field: 'pattern', label: 'Pattern', description: 'A JavaScript regular expression (u flag)', required: true },
  json_schema: {
    field: 'schema',
    label: 'Schema',
    description: 'A JSON Schema object, as JSON: the whole output must be JSON that satisfies it',
    multiline: true,
    required: true,
  },
  max_latency_ms: {
    field: 'value',
    label: 'Milliseconds',
    description: 'Passes when the run took at most this',
    numeric: true,
    required: true,
  },
  max_cost: {
    field: 'value',
    label: 'Dollars',
    description: 'US dollars, at most 6 decimals: passes when the run cost at most this',
    numeric: true,
    required: true,
  },
  llm_judge: {
    field: 'rubric',
    label: 'Rubric',
    description: 'What a good output is, for the judge model',
    multiline: true,
    required: true,
  },
}

/** The JSON object `text` holds, or why it is not one. */
function parseSchema(text: string): { schema: Record<string, unknown> } | { error: string } {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    return { error: `is not valid JSON: ${error instanceof Error ? error.message : String(error)}` }
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { error: 'must be a JSON object' }
  return { schema: value as Record<string, unknown> }
}

/** A row as the body's scorer, or the problem found before sending (a schema that is not a JSON object). */
function toScorer(row: ScorerRow): ScorerInput | { problem: string } {
  switch (row.type) {
    case 'contains':
      return row.setting.trim() ? { type: 'contains', value: row.setting } : { type: 'contains' }
    case 'regex':
      return { type: 'regex', pattern: row.setting }
    case 'json_schema': {
      const parsed = parseSchema(row.setting)
      return 'error' in parsed ? { problem: parsed.error } : { type: 'json_schema', schema: parsed.schema }
    }
    case 'max_latency_ms':
      return { type: 'max_latency_ms', value: Number(row.setting) }
    case 'max_cost':
      return { type: 'max_cost', value: Number(row.setting) }
    case 'llm_judge':
      return { type: 'llm_judge', rubric: row.setting, ...(row.model ? { large_language_model: row.model } : {}) }
    default:
      return { type: 'exact_match' }
  }
}

const EMPTY = {
  name: '',
  dataset: null as string | null,
  agent: null as string | null,
  version: '' as string | number,
  concurrency: 4 as string | number,
}
const FIRST_ROWS: ScorerRow[] = [{ type: 'exact_match', setting: '', model: '' }]
const NEW_ROW: ScorerRow = { type: 'contains', setting: '', model: '' }

export function NewEvaluationModal({ opened, onClose }: { opened: boolean; onClose: () => void }) {
  const navigate = useNavigate()
  const [form, setForm] = useState(EMPTY)
  const [rows, setRows] = useState<ScorerRow[]>(FIRST_ROWS)
  const [local, setLocal] = useState<Record<string, string>>({})
  const datasets = useDatasets({ page: 1, per_page: 100, sort: 'name' })
  const agents = useAgentChoices(opened)
  const create = useCreateEvaluation({ onSuccess: (answer) => void navigate(`/evaluations/${answer.data.uuid}`) })
  const problem = create.error ? problemOf(create.error) : null
  const reset = () => {
    create.reset()
    setForm(EMPTY)
    setRows(FIRST_ROWS)
    setLocal({})
  }
  const submit = (event: FormEvent) => {
    event.preventDefault()
    // Each row read once: its scorer, or its problem at `scorers.<i>.schema`.
    const scorers: ScorerInput[] = []
    const found: Record<string, string> = {}
    rows.map(toScorer).forEach((scorer, index) => {
      if ('problem' in scorer) found[`scorers.${index}.schema`] = scorer.problem
      else scorers.push(scorer)
    })
    setLocal(found)
    if (Object.keys(found).length) {
      create.reset()
      return
    }
    create.mutate({
      name: form.name,
      dataset_uuid: form.dataset ?? '',
      agent_uuid: form.agent ?? '',
      ...(form.version === '' ? {} : { agent_version: Number(form.version) }),
      scorers,
      concurrency: Number(form.concurrency),
    })
  }
  const setRow = (index: number, row: ScorerRow) => setRows(rows.map((old, i) => (i === index ? row : old)))
  const errorAt = (path: string) => local[path] ?? fieldError(problem, path)
  return (
    <Modal opened={opened} onClose={onClose} onExitTransitionEnd={reset} title="New evaluation" size="lg">
      <form onSubmit={submit} noValidate>
        <Stack>
          <FormProblem problem={problem} fields={['name', 'dataset_uuid', 'agent_uuid', 'agent_version', 'scorers', 'concurrency']} />
          <TextInput
            label="Name"
            required
            data-autofocus
            value={form.name}
            onChange={(e) => setForm({ ...form, name: e.currentTarget.value })}
            error={fieldError(problem, 'name')}
          />
          <Select
            label="Dataset"
            required
            searchable
            data={(datasets.data?.data ?? []).map((d) => ({ value: d.uuid, label: `${d.name} (${d.items_count} items)` }))}
            value={form.dataset}
            onChange={(value) => setForm({ ...form, dataset: value })}
            error={fieldError(problem, 'dataset_uuid')}
            comboboxProps={{ withinPortal: true }}
          />
          <Group grow align="flex-start" wrap="wrap">
            <Select
              label="Agent"
              required
              searchable
              data={(agents.data?.data ?? []).map((a) => ({ value: a.uuid, label: a.name }))}
              value={form.agent}
              onChange={(value) => setForm({ ...form, agent: value })}
              error={fieldError(problem, 'agent_uuid')}
              comboboxProps={{ withinPortal: true }}
              style={{ minWidth: 180 }}
            />
            <NumberInput
              label="Agent version"
              description="Empty: the current one"
              min={1}
              allowDecimal={false}
              value={form.version}
              onChange={(value) => setForm({ ...form, version: value })}
              error={fieldError(problem, 'agent_version')}
              style={{ minWidth: 140 }}
            />
          </Group>
          <ScorersEditor
            rows={rows}
            problem={problem}
            errorAt={errorAt}
            onChange={setRow}
            onAdd={() => setRows([...rows, NEW_ROW])}
            onRemove={(index) => {
              setRows(rows.filter((_, i) => i !== index))
              setLocal({})
            }}
          />
          <NumberInput
            label="Concurrency"
            description="How many items run at once, 1 to 10"
            min={1}
            max={10}
            allowDecimal={false}
            value={form.concurrency}
            onChange={(value) => setForm({ ...form, concurrency: value })}
            error={fieldError(problem, 'concurrency')}
          />
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" loading={create.isPending}>
              Start evaluation
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  )
}

function ScorersEditor({
  rows,
  problem,
  errorAt,
  onChange,
  onAdd,
  onRemove,
}: {
  rows: ScorerRow[]
  problem: Problem | null
  /** The message at a field: found before sending, or the service's issue. */
  errorAt: (path: string) => string | undefined
  onChange: (index: number, row: ScorerRow) => void
  onAdd: () => void
  onRemove: (index: number) => void
}) {
  return (
    <Stack gap="xs" role="group" aria-label="Scorers">
      <Text fw={500} size="sm">
        Scorers
      </Text>
      {problem?.fields.scorers ? (
        <Text c="red" size="sm">
          {problem.fields.scorers}
        </Text>
      ) : null}
      {rows.map((row, index) => (
        <Group key={index} align="flex-start" gap="xs" wrap="wrap">
          <Select
            label={`Scorer ${index + 1}`}
            data={SCORER_TYPES}
            value={row.type}
            allowDeselect={false}
            onChange={(value) => value && onChange(index, { type: value as ScorerType, setting: '', model: '' })}
            error={problem?.fields[`scorers.${index}.type`] ?? problem?.fields[`scorers.${index}`]}
            comboboxProps={{ withinPortal: true }}
            style={{ flex: '1 1 160px' }}
          />
          <ScorerSettings row={row} index={index} errorAt={errorAt} onChange={(next) => onChange(index, next)} />
          {rows.length > 1 ? (
            <ActionIcon variant="subtle" color="red" mt={26} aria-label={`Remove scorer ${index + 1}`} onClick={() => onRemove(index)}>
              ×
            </ActionIcon>
          ) : null}
        </Group>
      ))}
      {rows.length < 10 ? (
        <Group>
          <Button size="xs" variant="light" onClick={onAdd}>
            Add a scorer
          </Button>
        </Group>
      ) : null}
    </Stack>
  )
}

/** A row's settings: its one setting (a line or a Textarea), and for a judge its model. */
function ScorerSettings({
  row,
  index,
  errorAt,
  onChange,
}: {
  row: ScorerRow
  index: number
  errorAt: (path: string) => string | undefined
  onChange: (row: ScorerRow) => void
}) {
  const setting = SETTING[row.type]
  if (!setting) return null
  const n = index + 1
  const common = {
    label: `Scorer ${n} ${setting.label.toLowerCase()}`,
    description: setting.description,
    required: setting.required,
    value: row.setting,
    onChange: (e: { currentTarget: { value: string } }) => onChange({ ...row, setting: e.currentTarget.value }),
    error: errorAt(`scorers.${index}.${setting.field}`),
  }
  return (
    <Stack gap="xs" style={{ flex: '2 1 200px' }}>
      {setting.multiline ? (
        <Textarea
          {...common}
          autosize
          minRows={3}
          maxRows={12}
          styles={{ input: { fontFamily: row.type === 'json_schema' ? 'monospace' : undefined } }}
        />
      ) : (
        <TextInput {...common} inputMode={row.type === 'max_latency_ms' ? 'numeric' : setting.numeric ? 'decimal' : undefined} />
      )}
      {row.type === 'llm_judge' ? (
        <ModelSelect
          label={`Scorer ${n} model`}
          description="The judge's model; the default: the workspace's default model"
          value={row.model}
          onChange={(model) => onChange({ ...row, model })}
          error={errorAt(`scorers.${index}.large_language_model`)}
        />
      ) : null}
    </Stack>
  )
}
