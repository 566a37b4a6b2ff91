/**
 * One task (`commandRoom.retrieve`, `GET /api/v1/command-room/tasks/{task_uuid}`): what it runs,
 * when, in which zone, how it last went; its actions (edit, pause or resume, run now, delete
 * after a confirmation) and its firing history. A task that is gone, or not the caller's, is a
 * 404 in words.
 */
import { Anchor, Badge, Button, Code, Group, Modal, Paper, SimpleGrid, Stack, Text, Title } from '@mantine/core'
import { useState, type ReactNode } from 'react'
import { Link } from 'react-router'
import { ErrorNotice, Loading } from '../../ui/states.tsx'
import { FiringHistory, STATUS_COLORS } from './FiringHistory.tsx'
import { useTask } from './api.ts'
import { notifyDeleted, useTaskActions } from './task-actions.ts'
import { describeSchedule, formatIn, type Task } from './task-model.ts'

interface Props {
  taskUuid: string
  onEdit: (task: Task) => void
  onDeleted: () => void
}

export function TaskDetail({ taskUuid, onEdit, onDeleted }: Props) {
  const task = useTask(taskUuid)
  return (
    <>
      <Anchor component={Link} to="/command-room" size="sm">
        ← All tasks
      </Anchor>
      {task.isPending ? <Loading label="Loading the task" /> : null}
      {task.error ? <ErrorNotice error={task.error} onRetry={() => void task.refetch()} /> : null}
      {task.data ? <TaskView task={task.data.data} onEdit={onEdit} onDeleted={onDeleted} /> : null}
    </>
  )
}

function TaskView({ task, onEdit, onDeleted }: { task: Task; onEdit: (task: Task) => void; onDeleted: () => void }) {
  const { setActive, runNow, remove } = useTaskActions()
  const [confirming, setConfirming] = useState(false)
  return (
    <Stack gap="md" mt="xs">
      <Group justify="space-between" wrap="wrap" gap="sm">
        <Title order={2} style={{ overflowWrap: 'anywhere', minWidth: 0 }}>
          {task.name}
        </Title>
        <Group gap="xs" wrap="wrap">
          <Button variant="default" onClick={() => onEdit(task)}>
            Edit
          </Button>
          <Button variant="default" loading={setActive.isPending} onClick={() => setActive.mutate({ task_uuid: task.uuid, is_active: !task.is_active })}>
            {task.is_active ? 'Pause' : 'Resume'}
          </Button>
          <Button loading={runNow.isPending} onClick={() => runNow.mutate({ task_uuid: task.uuid })}>
            Run now
          </Button>
          <Button color="red" variant="light" onClick={() => setConfirming(true)}>
            Delete
          </Button>
        </Group>
      </Group>
      <TaskFacts task={task} />
      <section aria-labelledby="firing-history-title">
        <Title order={3} size="h4" mb="xs" id="firing-history-title">
          Firing history
        </Title>
        <FiringHistory task={task} />
      </section>
      <Modal opened={confirming} onClose={() => setConfirming(false)} title="Delete this task?">
        <Text mb="md" style={{ overflowWrap: 'anywhere' }}>
          “{task.name}” will not fire again. The runs and executions it already made stay.
        </Text>
        <Group justify="flex-end">
          <Button variant="default" onClick={() => setConfirming(false)}>
            Keep it
          </Button>
          <Button
            color="red"
            loading={remove.isPending}
            onClick={() =>
              remove.mutate(
                { task_uuid: task.uuid },
                {
                  onSuccess: () => {
                    notifyDeleted(task.name)
                    setConfirming(false)
                    onDeleted()
                  },
                },
              )
            }
          >
            Delete task
          </Button>
        </Group>
      </Modal>
    </Stack>
  )
}

/** The task's settings and state, as terms and their values. */
function TaskFacts({ task }: { task: Task }) {
  const target = task.agent ? `Agent: ${task.agent.name}` : task.workflow ? `Workflow: ${task.workflow.name}` : 'Deleted target'
  const facts: [string, ReactNode][] = [
    ['Target', target],
    ['Schedule', describeSchedule(task)],
    ['Time zone', task.timezone],
    ['State', <TaskState key="state" task={task} />],
    ['Next run', formatIn(task.next_run_at, task.timezone)],
    ['Last run', formatIn(task.last_run_at, task.timezone)],
    ['Firings', String(task.firings_count)],
    ['Created', formatIn(task.created_at, task.timezone)],
  ]
  return (
    <Paper withBorder p="md" radius="md">
      <SimpleGrid component="dl" cols={{ base: 1, xs: 2, md: 4 }} spacing="sm" m={0}>
        {facts.map(([term, value]) => (
          <div key={term}>
            <Text component="dt" size="xs" c="dimmed" tt="uppercase" fw={600}>
              {term}
            </Text>
            <Text component="dd" m={0} style={{ overflowWrap: 'anywhere' }}>
              {value}
            </Text>
          </div>
        ))}
      </SimpleGrid>
      <Text size="xs" c="dimmed" tt="uppercase" fw={600} mt="sm">
        Input
      </Text>
      <Code block style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>
        {typeof task.input === 'string' ? task.input || '(empty)' : JSON.stringify(task.input, null, 2)}
      </Code>
    </Paper>
  )
}

/** Active, paused or done (a `once` task that has fired), and how the last firing ended. */
export function TaskState({ task }: { task: Task }) {
  const state = !task.is_active ? ['Paused', 'gray'] : task.next_run_at ? ['Active', 'green'] : ['Nothing left to fire', 'gray']
  return (
    <Group gap={4} component="span" wrap="wrap">
      <Badge color={state[1]} variant={task.is_active ? 'filled' : 'outline'}>
        {state[0]}
      </Badge>
      {task.last_status ? (
        <Badge color={STATUS_COLORS[task.last_status]} variant="light">
          last {task.last_status}
        </Badge>
      ) : null}
    </Group>
  )
}
