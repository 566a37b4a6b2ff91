/**
 * The metrics screen's choices: which endpoint, which calculation (and its granularity and
 * column), the date range and the endpoint's own filters. A 400's issues show at the control of
 * the field they name (`date_from`, `column`, ...). The agent, thread and workflow pickers read
 * the first 100 of `agents.list`, `threads.list` and `workflows.list`.
 */
import { Group, SegmentedControl, Select, SimpleGrid, Stack, Switch, Text, TextInput } from '@mantine/core'
import { DateInput } from '@mantine/dates'
import type { Problem } from '../../lib/api.ts'
import { fieldError } from '../../ui/forms.ts'
import { useAgentChoices } from '../agents/api.ts'
import { useThreadChoices } from '../chat/api.ts'
import { useWorkflowChoices } from '../workflows/api.ts'
import {
  CALCULATIONS,
  GRANULARITIES,
  isAverage,
  isSeries,
  RESOURCE_KEYS,
  RESOURCES,
  takes,
  type Calculation,
  type Granularity,
  type MetricChoices,
  type ResourceKey,
  type Visibility,
} from './metrics-model.ts'

interface Props {
  choices: MetricChoices
  onChange: (next: Partial<MetricChoices>) => void
  /** The search as typed (the request gets it debounced). */
  searchText: string
  onSearchText: (value: string) => void
  problem: Problem | null
}

export function MetricControls({ choices, onChange, searchText, onSearchText, problem }: Props) {
  const { resource, calculation } = choices
  const columns = RESOURCES[resource].columns
  const columnOptions = isAverage(calculation) ? columns : [{ value: '*', label: 'Every row' }, ...columns.map((c) => ({ value: c.value, label: `Rows with ${c.label.toLowerCase()}` }))]
  return (
    <Stack gap="sm" mb="md">
      <SimpleGrid cols={{ base: 1, xs: 2, md: 4 }} spacing="sm">
        <Select
          label="Resource"
          data={RESOURCE_KEYS.map((key) => ({ value: key, label: RESOURCES[key].label }))}
          value={resource}
          allowDeselect={false}
          onChange={(value) => {
            const next = value as ResourceKey
            // Another endpoint has other columns: start again from its first (or from rows).
            onChange({ resource: next, column: isAverage(calculation) ? RESOURCES[next].columns[0]!.value : '*' })
          }}
        />
        <Select
          label="Calculation"
          data={CALCULATIONS}
          value={calculation}
          allowDeselect={false}
          error={fieldError(problem, 'calculation')}
          onChange={(value) => {
            const next = value as Calculation
            const column = isAverage(next) ? (choices.column === '*' ? columns[0]!.value : choices.column) : choices.column
            onChange({ calculation: next, column })
          }}
        />
        <Select
          label={isAverage(calculation) ? 'Column averaged' : 'Rows counted'}
          data={columnOptions}
          value={choices.column}
          allowDeselect={false}
          error={fieldError(problem, 'column')}
          onChange={(value) => value && onChange({ column: value })}
        />
        <Stack gap={4}>
          <Text component="span" size="sm" fw={500} id="metrics-granularity-label">
            Granularity
          </Text>
          <SegmentedControl
            aria-labelledby="metrics-granularity-label"
            data={GRANULARITIES}
            value={choices.granularity}
            disabled={!isSeries(calculation)}
            onChange={(value) => onChange({ granularity: value as Granularity })}
            fullWidth
          />
          {fieldError(problem, 'granularity') ? (
            <Text size="xs" c="red" role="alert">
              {fieldError(problem, 'granularity')}
            </Text>
          ) : !isSeries(calculation) ? (
            <Text size="xs" c="dimmed">
              For the calculations over time.
            </Text>
          ) : null}
        </Stack>
      </SimpleGrid>
      <SimpleGrid cols={{ base: 1, xs: 2, md: 4 }} spacing="sm">
        <DateInput
          label="From"
          description="First day, UTC"
          clearButtonProps={{ 'aria-label': 'Clear the first day' }}
          placeholder="YYYY-MM-DD"
          valueFormat="YYYY-MM-DD"
          clearable
          value={choices.dateFrom}
          onChange={(value) => onChange({ dateFrom: value })}
          error={fieldError(problem, 'date_from')}
          popoverProps={{ withinPortal: true }}
        />
        <DateInput
          label="To"
          description="Last day, UTC"
          clearButtonProps={{ 'aria-label': 'Clear the last day' }}
          placeholder="YYYY-MM-DD"
          valueFormat="YYYY-MM-DD"
          clearable
          value={choices.dateTo}
          onChange={(value) => onChange({ dateTo: value })}
          error={fieldError(problem, 'date_to')}
          popoverProps={{ withinPortal: true }}
        />
        {takes(resource, 'search') ? (
          <TextInput
            label="Search"
            description={resource === 'messages' ? 'In message text' : resource === 'threads' ? 'Thread names and messages' : 'Names and descriptions'}
            value={searchText}
            onChange={(event) => onSearchText(event.currentTarget.value)}
            error={fieldError(problem, 'search')}
          />
        ) : null}
        <TargetFilter choices={choices} onChange={onChange} problem={problem} />
      </SimpleGrid>
      <ResourceSwitches choices={choices} onChange={onChange} problem={problem} />
    </Stack>
  )
}

/** Visibility, favourites, templates and "mine", where the endpoint takes them. */
function ResourceSwitches({ choices, onChange, problem }: Omit<Props, 'searchText' | 'onSearchText'>) {
  const { resource } = choices
  return (
    <Group gap="md" wrap="wrap" align="end">
      {takes(resource, 'visibility') ? (
        <Select
          label="Visibility"
          placeholder="Any"
          clearable
          clearButtonProps={{ 'aria-label': 'Any visibility' }}
          data={[
            { value: 'private', label: 'Private' },
            { value: 'workspace', label: 'Workspace' },
            { value: 'public', label: 'Public' },
          ]}
          value={choices.visibility}
          onChange={(value) => onChange({ visibility: value as Visibility | null })}
          error={fieldError(problem, 'visibility')}
          w={180}
        />
      ) : null}
      {takes(resource, 'favorite') ? (
        <Switch label="My favourites only" checked={choices.favorite} onChange={(event) => onChange({ favorite: event.currentTarget.checked })} />
      ) : null}
      {takes(resource, 'template') ? (
        <Switch label="Templates only" checked={choices.template} onChange={(event) => onChange({ template: event.currentTarget.checked })} />
      ) : null}
      {takes(resource, 'mine') ? (
        <Switch
          label={resource === 'workflowExecutions' ? 'Triggered by me' : resource === 'threads' ? 'Started by me' : 'Created by me'}
          checked={choices.mine}
          onChange={(event) => onChange({ mine: event.currentTarget.checked })}
        />
      ) : null}
    </Group>
  )
}

/** The agent (threads), thread (messages) or workflow (executions) to count within. */
function TargetFilter({ choices, onChange, problem }: Omit<Props, 'searchText' | 'onSearchText'>) {
  const { resource } = choices
  const agents = useAgentChoices(takes(resource, 'agent'))
  const threads = useThreadChoices(takes(resource, 'thread'))
  const workflows = useWorkflowChoices(takes(resource, 'workflow'))
  const common = { searchable: true, clearable: true, placeholder: 'Any', nothingFoundMessage: 'Nothing found', comboboxProps: { withinPortal: true } }
  if (takes(resource, 'agent')) {
    return (
      <Select
        {...common}
        label="Agent"
        clearButtonProps={{ 'aria-label': 'Any agent' }}
        data={(agents.data?.data ?? []).map((a) => ({ value: a.uuid, label: a.name }))}
        value={choices.agentUuid}
        onChange={(value) => onChange({ agentUuid: value })}
        error={fieldError(problem, 'agent_uuid') ?? (agents.error ? 'The agents could not be read' : undefined)}
      />
    )
  }
  if (takes(resource, 'thread')) {
    return (
      <Select
        {...common}
        label="Thread"
        clearButtonProps={{ 'aria-label': 'Any thread' }}
        data={(threads.data?.data ?? []).map((t) => ({ value: t.uuid, label: t.name ?? `Untitled thread ${t.uuid.slice(0, 8)}` }))}
        value={choices.threadUuid}
        onChange={(value) => onChange({ threadUuid: value })}
        error={fieldError(problem, 'thread_uuid') ?? (threads.error ? 'The threads could not be read' : undefined)}
      />
    )
  }
  if (takes(resource, 'workflow')) {
    return (
      <Select
        {...common}
        label="Workflow"
        clearButtonProps={{ 'aria-label': 'Any workflow' }}
        data={(workflows.data?.data ?? []).map((w) => ({ value: w.uuid, label: w.name }))}
        value={choices.workflowUuid}
        onChange={(value) => onChange({ workflowUuid: value })}
        error={fieldError(problem, 'workflow_uuid') ?? (workflows.error ? 'The workflows could not be read' : undefined)}
      />
    )
  }
  return null
}
