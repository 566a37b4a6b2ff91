/**
 * Store or edit a task (`commandRoom.store`, `POST /api/v1/command-room/tasks`;
 * `commandRoom.update`, `PUT .../{task_uuid}`) in a dialog: its name, its agent or workflow
 * (picked from `agents.list` / `workflows.list`), the input that target takes, the schedule
 * with the fields its kind needs, the IANA time zone, and whether it is active. The service's
 * 400 issues show at their fields (an invalid cron expression at "Cron expression", an unknown
 * zone at "Time zone", a past `run_at` at "Run at"); nothing is stored on a 400.
 */
import { Alert, Button, Group, JsonInput, Modal, SegmentedControl, Select, Stack, Switch, Text, Textarea, TextInput } from '@mantine/core'
import { DateInput } from '@mantine/dates'
import { useMediaQuery } from '@mantine/hooks'
import { useMemo, useState, type FormEvent } from 'react'
import { problemOf, type Problem } from '../../lib/api.ts'
import { fieldError, otherIssues } from '../../ui/forms.ts'
import { describeStatus } from '../../ui/states.tsx'
import { useAgentChoices } from '../agents/api.ts'
import { useWorkflowChoices } from '../workflows/api.ts'
import { useStoreTask, useUpdateTask } from './api.ts'
import { draftOf, emptyDraft, SCHEDULE_KINDS, storeBody, timeZones, updateBody, type LocalIssues, type ScheduleKind, type Task, type TaskDraft } from './task-model.ts'

const FIELDS = ['name', 'agent_uuid', 'workflow_uuid', 'input', 'schedule', 'timezone', 'run_at', 'is_active']

interface Props {
  /** The task to edit, or null to store a new one. */
  task: Task | null
  onClose: () => void
  onSaved: (task: Task) => void
}

export function TaskForm({ task, onClose, onSaved }: Props) {
  const narrow = useMediaQuery('(max-width: 48em)')
  const [draft, setDraft] = useState<TaskDraft>(() => (task ? draftOf(task) : emptyDraft()))
  const [local, setLocal] = useState<LocalIssues>({})
  const set = (patch: Partial<TaskDraft>) => setDraft((current) => ({ ...current, ...patch }))
  const store = useStoreTask({ onSuccess: (answer) => onSaved(answer.data) })
  const update = useUpdateTask({ onSuccess: (answer) => onSaved(answer.data) })
  const save = task ? update : store
  const problem = save.error ? problemOf(save.error) : null
  const issue = (path: string) => local[path] ?? fieldError(problem, path)
  // Issues found here are shown instead of sending (and of the service's last answer).
  const submit = (event: FormEvent) => {
    event.preventDefault()
    if (task) {
      const built = updateBody(task, draft)
      setLocal(built.issues)
      if (built.body) update.mutate(built.body)
      else update.reset()
      return
    }
    const built = storeBody(draft)
    setLocal(built.issues)
    if (built.body) store.mutate(built.body)
    else store.reset()
  }
  return (
    <Modal opened onClose={onClose} title={task ? `Edit ${task.name}` : 'New task'} size="lg" fullScreen={narrow} styles={{ title: { overflowWrap: 'anywhere', fontWeight: 700 } }}>
      <form onSubmit={submit} noValidate>
        <Stack>
          <FormProblem problem={problem} />
          <TextInput label="Name" required value={draft.name} onChange={(e) => set({ name: e.currentTarget.value })} error={issue('name')} />
          <TargetFields draft={draft} set={set} issue={issue} />
          <ScheduleFields draft={draft} set={set} issue={issue} />
          <Switch label="Active" description="A paused task does not fire on its schedule" checked={draft.isActive} onChange={(e) => set({ isActive: e.currentTarget.checked })} error={issue('is_active')} />
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" loading={save.isPending}>
              {task ? 'Save changes' : 'Create task'}
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  )
}

/** The issues of a failed save that no field shows, or a failure that is not a 400. */
function FormProblem({ problem }: { problem: Problem | null }) {
  if (!problem) return null
  const others = otherIssues(problem, FIELDS)
  if (problem.status === 400 && others.length === 0) {
    return (
      <Alert color="red" role="alert" title="Check the form">
        Nothing was saved: see the fields marked below.
      </Alert>
    )
  }
  const { title, detail } = describeStatus(problem)
  return (
    <Alert color="red" role="alert" title={problem.status === 400 ? 'Check the form' : title}>
      <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
        {others.length ? others.join('; ') : detail}
      </Text>
    </Alert>
  )
}

interface FieldsProps {
  draft: TaskDraft
  set: (patch: Partial<TaskDraft>) => void
  issue: (path: string) => string | undefined
}

/** Agent or workflow, which one, and the input it takes (a message, or a JSON object). */
function TargetFields({ draft, set, issue }: FieldsProps) {
  const agents = useAgentChoices()
  const workflows = useWorkflowChoices(draft.targetKind === 'workflow')
  const isAgent = draft.targetKind === 'agent'
  const list = isAgent ? agents : workflows
  // Neither target named is an issue at `agent_uuid`, both at `workflow_uuid`: one picker shows either.
  const targetError = issue('agent_uuid') ?? issue('workflow_uuid') ?? (list.error ? `The ${isAgent ? 'agents' : 'workflows'} could not be read` : undefined)
  return (
    <>
      <Stack gap={4}>
        <Text component="span" size="sm" fw={500} id="task-target-kind">
          Target
        </Text>
        <SegmentedControl
          aria-labelledby="task-target-kind"
          data={[
            { value: 'agent', label: 'Agent' },
            { value: 'workflow', label: 'Workflow' },
          ]}
          value={draft.targetKind}
          onChange={(value) => set({ targetKind: value as TaskDraft['targetKind'] })}
        />
      </Stack>
      <Select
        label={isAgent ? 'Agent' : 'Workflow'}
        placeholder={list.isPending ? 'Loading…' : isAgent ? 'Pick an agent' : 'Pick a workflow'}
        required
        searchable
        nothingFoundMessage="Nothing found"
        data={(isAgent ? (agents.data?.data ?? []) : (workflows.data?.data ?? [])).map((t) => ({ value: t.uuid, label: t.name }))}
        value={isAgent ? draft.agentUuid : draft.workflowUuid}
        onChange={(value) => set(isAgent ? { agentUuid: value } : { workflowUuid: value })}
        error={targetError}
        comboboxProps={{ withinPortal: true }}
      />
      {isAgent ? (
        <Textarea
          label="Message"
          description="What the agent is told each time the task fires"
          autosize
          minRows={2}
          maxRows={8}
          value={draft.message}
          onChange={(e) => set({ message: e.currentTarget.value })}
          error={issue('input')}
        />
      ) : (
        <JsonInput
          label="Input"
          description="A JSON object: the workflow trigger's input"
          autosize
          minRows={3}
          maxRows={10}
          formatOnBlur
          value={draft.json}
          onChange={(value) => set({ json: value })}
          error={issue('input')}
        />
      )}
    </>
  )
}

const RUN_AT_HELP: Record<ScheduleKind, string> = {
  once: 'When it fires, in the task’s time zone (YYYY-MM-DD HH:mm); must be in the future',
  hourly: 'The first firing; then every hour at its minute. Empty: the next whole minute',
  daily: 'The first firing; then every day at its time. Empty: the next whole minute',
  weekly: 'The first firing; then every week on its weekday and time. Empty: the next whole minute',
  cron: 'When the schedule starts: it fires at the first match from then on. Empty: from the next whole minute',
}

/** The schedule's kind, its expression (cron), its first or only time, and the time zone. */
function ScheduleFields({ draft, set, issue }: FieldsProps) {
  const zones = useMemo(() => timeZones().map((zone) => ({ value: zone, label: zone.replaceAll('_', ' ') })), [])
  return (
    <>
      <Select
        label="Schedule"
        required
        data={SCHEDULE_KINDS}
        value={draft.kind}
        allowDeselect={false}
        onChange={(value) => value && set({ kind: value as ScheduleKind })}
        error={draft.kind === 'cron' ? undefined : issue('schedule')}
        comboboxProps={{ withinPortal: true }}
      />
      {draft.kind === 'cron' ? (
        <TextInput
          label="Cron expression"
          description="Five fields: minute hour day-of-month month day-of-week, e.g. 0 9 * * 1-5"
          required
          value={draft.cron}
          onChange={(e) => set({ cron: e.currentTarget.value })}
          error={issue('schedule')}
          styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }}
        />
      ) : null}
      <DateInput
        label={draft.kind === 'once' ? 'Run at' : draft.kind === 'cron' ? 'Starts at' : 'First run'}
        description={RUN_AT_HELP[draft.kind]}
        placeholder="YYYY-MM-DD HH:mm"
        valueFormat="YYYY-MM-DD HH:mm"
        withTime
        clearable
        clearButtonProps={{ 'aria-label': 'Clear the time' }}
        required={draft.kind === 'once'}
        value={draft.runAt}
        onChange={(value) => set({ runAt: value })}
        error={issue('run_at')}
        popoverProps={{ withinPortal: true }}
      />
      <Select
        label="Time zone"
        description="The schedule's times are read in it"
        required
        searchable
        limit={100}
        nothingFoundMessage="No such time zone"
        data={zones}
        value={draft.timezone}
        allowDeselect={false}
        onChange={(value) => value && set({ timezone: value })}
        error={issue('timezone')}
        comboboxProps={{ withinPortal: true }}
      />
    </>
  )
}
