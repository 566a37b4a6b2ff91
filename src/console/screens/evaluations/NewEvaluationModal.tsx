/**
 * The "New evaluation" dialog (`evaluations.create`, `POST /api/v1/evaluations`): a name, the
 * dataset and the agent picked by name (`datasets.list`, `agents.list`), the agent's version
 * (optional: the current one is pinned), the scorers as repeatable rows (exact_match, contains
 * with an optional value, regex with its pattern, max_latency_ms with its limit) and the
 * concurrency. The service's 400 is shown at the fields its issues name: an invalid regular
 * expression at its row's pattern (`scorers.<i>.pattern`). A created evaluation opens its screen.
 */
import { ActionIcon, Button, Group, Modal, NumberInput, Select, Stack, Text, TextInput } from '@mantine/core'
import { useState, type FormEvent } from 'react'
import { useNavigate } from 'react-router'
import { problemOf, type Problem, type RouterInputs } from '../../lib/api.ts'
import { fieldError } from '../../ui/forms.ts'
import { FormProblem } from '../../ui/FormProblem.tsx'
import { useAgentChoices } from '../agents/api.ts'
import { useCreateEvaluation, useDatasets } from './api.ts'

type ScorerInput = RouterInputs['evaluations']['create']['scorers'][number]
type ScorerType = 'exact_match' | 'contains' | 'regex' | 'max_latency_ms'

/** One row of the scorers' editor: its type and its one setting, as typed. */
interface ScorerRow {
  type: ScorerType
  setting: string
}

const SCORER_TYPES: { value: ScorerType; label: string }[] = [
  { value: 'exact_match', label: 'Exact match' },
  { value: 'contains', label: 'Contains' },
  { value: 'regex', label: 'Regular expression' },
  { value: 'max_latency_ms', label: 'Maximum latency' },
]

/** The setting each type takes: its field's name in the body and its label, or none. */
const SETTING: Record<ScorerType, { field: 'value' | 'pattern'; label: string; description: string } | null> = {
  exact_match: null,
  contains: { field: 'value', label: 'Text', description: "Optional: the item's expected output when empty" },
  regex: { field: 'pattern', label: 'Pattern', description: 'A JavaScript regular expression (u flag)' },
  max_latency_ms: { field: 'value', label: 'Milliseconds', description: 'Passes when the run took at most this' },
}

function toScorer(row: ScorerRow): ScorerInput {
  switch (row.type) {
    case 'contains':
      return row.setting.trim() ? { type: 'contains', value: row.setting } : { type: 'contains' }
    case 'regex':
      return { type: 'regex', pattern: row.setting }
    case 'max_latency_ms':
      return { type: 'max_latency_ms', value: Number(row.setting) }
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
const FIRST_ROWS: ScorerRow[] = [{ type: 'exact_match', setting: '' }]

export function NewEvaluationModal({ opened, onClose }: { opened: boolean; onClose: () => void }) {
  const navigate = useNavigate()
  const [form, setForm] = useState(EMPTY)
  const [rows, setRows] = useState<ScorerRow[]>(FIRST_ROWS)
  const datasets = useDatasets({ page: 1, per_page: 100, sort: 'name' })
  const agents = useAgentChoices(opened)
  const create = useCreateEvaluation({ onSuccess: (answer) => void navigate(`/evaluations/${answer.data.uuid}`) })
  const problem = create.error ? problemOf(create.error) : null
  const reset = () => {
    create.reset()
    setForm(EMPTY)
    setRows(FIRST_ROWS)
  }
  const submit = (event: FormEvent) => {
    event.preventDefault()
    create.mutate({
      name: form.name,
      dataset_uuid: form.dataset ?? '',
      agent_uuid: form.agent ?? '',
      ...(form.version === '' ? {} : { agent_version: Number(form.version) }),
      scorers: rows.map(toScorer),
      concurrency: Number(form.concurrency),
    })
  }
  const setRow = (index: number, row: ScorerRow) => setRows(rows.map((old, i) => (i === index ? row : old)))
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
            onChange={setRow}
            onAdd={() => setRows([...rows, { type: 'contains', setting: '' }])}
            onRemove={(index) => setRows(rows.filter((_, i) => i !== index))}
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
  onChange,
  onAdd,
  onRemove,
}: {
  rows: ScorerRow[]
  problem: Problem | null
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
      {rows.map((row, index) => {
        const setting = SETTING[row.type]
        const n = index + 1
        return (
          <Group key={index} align="flex-start" gap="xs" wrap="wrap">
            <Select
              label={`Scorer ${n}`}
              data={SCORER_TYPES}
              value={row.type}
              allowDeselect={false}
              onChange={(value) => value && onChange(index, { type: value as ScorerType, setting: '' })}
              error={problem?.fields[`scorers.${index}.type`] ?? problem?.fields[`scorers.${index}`]}
              comboboxProps={{ withinPortal: true }}
              style={{ flex: '1 1 160px' }}
            />
            {setting ? (
              <TextInput
                label={`Scorer ${n} ${setting.label.toLowerCase()}`}
                description={setting.description}
                inputMode={row.type === 'max_latency_ms' ? 'numeric' : undefined}
                required={row.type !== 'contains'}
                value={row.setting}
                onChange={(e) => onChange(index, { ...row, setting: e.currentTarget.value })}
                error={fieldError(problem, `scorers.${index}.${setting.field}`)}
                style={{ flex: '2 1 200px' }}
              />
            ) : null}
            {rows.length > 1 ? (
              <ActionIcon variant="subtle" color="red" mt={26} aria-label={`Remove scorer ${n}`} onClick={() => onRemove(index)}>
                ×
              </ActionIcon>
            ) : null}
          </Group>
        )
      })}
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
