/**
 * A task's firings, newest due time first (`commandRoom.firings`,
 * `GET /api/v1/command-room/tasks/{task_uuid}/firings`): status, due and fired times in the
 * task's zone, the error of a failed one, and a link to what it made (the agent's new thread in
 * the chat, or the workflow's executions). While a firing is queued or running the list is read
 * again every 1.5 s, so "run now" shows its outcome without a reload.
 */
import { Anchor, Badge, Table, Text } from '@mantine/core'
import { useState } from 'react'
import { Link } from 'react-router'
import { Pager } from '../../ui/ListControls.tsx'
import { Empty, ErrorNotice, Loading } from '../../ui/states.tsx'
import { useFirings } from './api.ts'
import { formatIn, type Firing, type Task } from './task-model.ts'

export const STATUS_COLORS: Record<string, string> = { queued: 'gray', running: 'blue', succeeded: 'green', failed: 'red', skipped: 'yellow' }

export function FiringHistory({ task }: { task: Task }) {
  const [page, setPage] = useState(1)
  const firings = useFirings(task, page)
  if (firings.isPending) return <Loading label="Loading the history" />
  if (firings.error) return <ErrorNotice error={firings.error} onRetry={() => void firings.refetch()} />
  if (firings.data.data.length === 0) return <Empty title="No firings yet">The task has not fired. “Run now” fires it at once.</Empty>
  return (
    <>
      <Table.ScrollContainer minWidth={640}>
        <Table striped aria-label="Firing history">
          <Table.Thead>
            <Table.Tr>
              <Table.Th scope="col">Status</Table.Th>
              <Table.Th scope="col">Due</Table.Th>
              <Table.Th scope="col">Fired</Table.Th>
              <Table.Th scope="col">Result</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {firings.data.data.map((firing) => (
              <Table.Tr key={firing.uuid}>
                <Table.Td>
                  <Badge color={STATUS_COLORS[firing.status]} variant="light">
                    {firing.status}
                  </Badge>
                </Table.Td>
                <Table.Td>{formatIn(firing.due_at, task.timezone)}</Table.Td>
                <Table.Td>{formatIn(firing.fired_at, task.timezone)}</Table.Td>
                <Table.Td style={{ maxWidth: 320 }}>
                  <FiringResult firing={firing} task={task} />
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      <Pager page={page} lastPage={firings.data.meta.last_page} onChange={setPage} />
    </>
  )
}

/** Where the firing's outcome can be read, and why it failed. */
function FiringResult({ firing, task }: { firing: Firing; task: Task }) {
  return (
    <>
      {firing.thread_uuid && task.agent ? (
        <Anchor component={Link} to={`/chat/${task.agent.uuid}/${firing.thread_uuid}`} size="sm">
          Open the conversation
        </Anchor>
      ) : null}
      {firing.execution_uuid && task.workflow ? (
        <Anchor component={Link} to={`/workflows/${task.workflow.uuid}/executions?execution=${firing.execution_uuid}`} size="sm">
          Open the execution
        </Anchor>
      ) : null}
      {firing.run_uuid ? (
        <Text size="xs" c="dimmed" ff="monospace" truncate="end" title={firing.run_uuid}>
          run {firing.run_uuid}
        </Text>
      ) : null}
      {firing.error ? (
        <Text size="sm" c="red" style={{ overflowWrap: 'anywhere' }}>
          {firing.error}
        </Text>
      ) : null}
      {!firing.thread_uuid && !firing.execution_uuid && !firing.error ? (
        <Text size="sm" c="dimmed">
          —
        </Text>
      ) : null}
    </>
  )
}
