/**
 * The caller's tasks in the workspace (`commandRoom.list`, `GET /api/v1/command-room/tasks`),
 * filtered by state and sorted, each with its target, schedule, zone, next run and state, and
 * the quick actions run now and pause or resume.
 */
import { Anchor, Button, Group, SegmentedControl, Select, Table, Text } from '@mantine/core'
import { useState } from 'react'
import { Link } from 'react-router'
import { useFilter } from '../../ui/ListControls.tsx'
import { DataTable, ListStates } from '../../ui/ListTable.tsx'
import { useTasks, type TasksInput } from './api.ts'
import { TaskState } from './TaskDetail.tsx'
import { useTaskActions } from './task-actions.ts'
import { describeSchedule, formatIn, type Task } from './task-model.ts'

type Sort = NonNullable<TasksInput['sort']>

const SORTS: { value: Sort; label: string }[] = [
  { value: '-created_at', label: 'Newest first' },
  { value: 'next_run_at', label: 'Next to run' },
  { value: 'name', label: 'Name' },
  { value: '-updated_at', label: 'Recently changed' },
]

export function TaskList() {
  const [page, setPage] = useState(1)
  const [state, setState] = useFilter<'all' | 'active' | 'paused'>('all', setPage)
  const [sort, setSort] = useState<Sort>('-created_at')
  const input = { page, per_page: 20, sort, ...(state !== 'all' ? { is_active: state === 'active' } : {}) }
  const tasks = useTasks(input)
  return (
    <>
      <Group mb="md" gap="sm" wrap="wrap" align="end">
        <SegmentedControl
          aria-label="State"
          value={state}
          onChange={(value) => setState(value as typeof state)}
          data={[
            { value: 'all', label: 'All' },
            { value: 'active', label: 'Active' },
            { value: 'paused', label: 'Paused' },
          ]}
        />
        <Select
          label="Sort"
          data={SORTS}
          value={sort}
          allowDeselect={false}
          onChange={(value) => value && setSort(value as Sort)}
          w={200}
        />
      </Group>
      <ListStates
        query={tasks}
        rows={tasks.data?.data}
        loading="Loading tasks"
        empty={
          state === 'all'
            ? {
                title: 'No tasks yet',
                detail: 'A task runs an agent or a workflow once or on a schedule, as you. Create one with “New task”.',
              }
            : { title: `No ${state} tasks`, detail: 'Show all tasks to see the others.' }
        }
        paging={{ page, onChange: setPage }}
      >
        {(rows) => <TaskTable tasks={rows} />}
      </ListStates>
    </>
  )
}

function TaskTable({ tasks }: { tasks: Task[] }) {
  const { setActive, runNow } = useTaskActions()
  return (
    <DataTable
      columns={['Name', 'Target', 'Schedule', 'Time zone', 'Next run', 'State', { hidden: 'Actions' }]}
      minWidth={860}
      label="Tasks"
      highlightOnHover
    >
      {tasks.map((task) => (
        <Table.Tr key={task.uuid}>
          <Table.Td style={{ maxWidth: 240 }}>
            <Anchor component={Link} to={`/command-room?task=${task.uuid}`} fw={600} truncate="end" display="block" title={task.name}>
              {task.name}
            </Anchor>
          </Table.Td>
          <Table.Td style={{ maxWidth: 200 }}>
            <Text size="sm" truncate="end" title={task.agent?.name ?? task.workflow?.name ?? undefined}>
              {task.agent ? `Agent: ${task.agent.name}` : task.workflow ? `Workflow: ${task.workflow.name}` : 'Deleted target'}
            </Text>
          </Table.Td>
          <Table.Td style={{ maxWidth: 220 }}>
            <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
              {describeSchedule(task)}
            </Text>
          </Table.Td>
          <Table.Td>
            <Text size="sm">{task.timezone}</Text>
          </Table.Td>
          <Table.Td miw={130}>
            <Text size="sm">{formatIn(task.next_run_at, task.timezone)}</Text>
          </Table.Td>
          <Table.Td miw={150}>
            <TaskState task={task} />
          </Table.Td>
          <Table.Td>
            <Group gap={4} wrap="nowrap">
              <Button
                size="xs"
                variant="light"
                aria-label={`Run ${task.name} now`}
                loading={runNow.isPending && runNow.variables?.task_uuid === task.uuid}
                onClick={() => runNow.mutate({ task_uuid: task.uuid })}
              >
                Run now
              </Button>
              <Button
                size="xs"
                variant="default"
                aria-label={`${task.is_active ? 'Pause' : 'Resume'} ${task.name}`}
                loading={setActive.isPending && setActive.variables?.task_uuid === task.uuid}
                onClick={() => setActive.mutate({ task_uuid: task.uuid, is_active: !task.is_active })}
              >
                {task.is_active ? 'Pause' : 'Resume'}
              </Button>
            </Group>
          </Table.Td>
        </Table.Tr>
      ))}
    </DataTable>
  )
}
