/**
 * A workflow's executions: the list (status, mode, started, duration; filter by status), and one
 * execution's details (`?execution=<uuid>`) with each node's input, output, error and timing
 * (./ExecutionView.tsx). Both refresh every two seconds while something is queued or running. A
 * queued or running execution can be cancelled, a failed or cancelled one retried.
 * Procedures: `workflows.retrieve` (the name), `workflowExecutions.list`
 * (`GET /api/v1/workflow-executions?workflow_uuid=`), `workflowExecutions.retrieve`
 * (`GET .../{execution_uuid}`), `workflowExecutions.cancel` and `.retry` (`POST .../cancel`, `.../retry`).
 */
import { Anchor, Button, CloseButton, Group, Paper, Select, Table, Text, Title } from '@mantine/core'
import { useEffect, useRef, useState } from 'react'
import { Link, useParams, useSearchParams } from 'react-router'
import { ScreenTitle, useFilter } from '../../ui/ListControls.tsx'
import { DataTable, ListStates } from '../../ui/ListTable.tsx'
import { ErrorNotice, Loading } from '../../ui/states.tsx'
import { useCancelExecution, useExecution, useExecutions, useRetryExecution, useWorkflow, type ExecutionsInput } from './api.ts'
import { ExecutionView, formatDuration, formatTime, isUnderway, StatusBadge } from './ExecutionView.tsx'

type Status = NonNullable<ExecutionsInput['status']>
const STATUSES: Status[] = ['queued', 'running', 'succeeded', 'failed', 'canceled']

export default function ExecutionsScreen() {
  const { workflowUuid = '' } = useParams()
  const [params, setParams] = useSearchParams()
  const [page, setPage] = useState(1)
  const [status, setStatus] = useFilter<Status | null>(null, setPage)
  const selected = params.get('execution')
  const workflow = useWorkflow(workflowUuid)
  const input = { workflow_uuid: workflowUuid, page, per_page: 20, ...(status ? { status } : {}) }
  const executions = useExecutions(input)
  const open = (uuid: string | null) => setParams(uuid ? { execution: uuid } : {}, { replace: true })
  const name = workflow.data?.data.name
  return (
    <>
      <ScreenTitle title={name ? `Executions of ${name}` : 'Executions'}>
        <Button variant="default" component={Link} to={`/workflows/${workflowUuid}`}>
          Open the editor
        </Button>
      </ScreenTitle>
      {workflow.error ? <ErrorNotice error={workflow.error} /> : null}
      <Group mb="md" align="end" wrap="wrap">
        <Select
          label="Status"
          placeholder="Any status"
          clearable
          data={STATUSES}
          value={status}
          onChange={(value) => setStatus(value as Status | null)}
          w={200}
          comboboxProps={{ withinPortal: true }}
        />
      </Group>
      <ListStates
        query={executions}
        rows={executions.data?.data}
        loading="Loading executions"
        empty={
          status
            ? { title: 'No execution with this status', detail: 'Choose another status.' }
            : { title: 'No executions yet', detail: 'Run the workflow, or call its webhook.' }
        }
        paging={{ page, onChange: setPage }}
      >
        {(rows) => (
          <DataTable
            columns={['Status', 'Mode', 'Started', 'Duration', { hidden: 'Details' }]}
            minWidth={520}
            label="Executions"
            highlightOnHover
          >
            {rows.map((execution) => (
              <Table.Tr key={execution.uuid} bg={execution.uuid === selected ? 'var(--mantine-color-blue-light)' : undefined}>
                <Table.Td>
                  <StatusBadge status={execution.status} />
                </Table.Td>
                <Table.Td>{execution.mode}</Table.Td>
                <Table.Td>{formatTime(execution.started_at ?? execution.created_at)}</Table.Td>
                <Table.Td>{formatDuration(execution.duration_ms)}</Table.Td>
                <Table.Td>
                  <Button
                    size="xs"
                    variant="light"
                    onClick={() => open(execution.uuid)}
                    aria-label={`Details of the execution of ${formatTime(execution.started_at ?? execution.created_at)}`}
                    aria-pressed={execution.uuid === selected}
                  >
                    Details
                  </Button>
                </Table.Td>
              </Table.Tr>
            ))}
          </DataTable>
        )}
      </ListStates>
      {selected ? <ExecutionPanel key={selected} uuid={selected} onOpen={open} /> : null}
    </>
  )
}

function ExecutionPanel({ uuid, onOpen }: { uuid: string; onOpen: (uuid: string | null) => void }) {
  const heading = useRef<HTMLHeadingElement>(null)
  const execution = useExecution(uuid)
  const cancel = useCancelExecution()
  const retry = useRetryExecution()
  const loaded = Boolean(execution.data)
  useEffect(() => {
    if (loaded) heading.current?.focus()
  }, [loaded])
  const data = execution.data?.data
  return (
    <Paper withBorder p="md" mt="lg" component="section" aria-labelledby="execution-title">
      <Group justify="space-between" wrap="nowrap" mb="sm">
        <Title order={3} id="execution-title" ref={heading} tabIndex={-1} style={{ overflowWrap: 'anywhere', minWidth: 0 }}>
          Execution {data ? `of ${formatTime(data.started_at ?? data.created_at)}` : ''}
        </Title>
        <CloseButton onClick={() => onOpen(null)} aria-label="Close the execution" />
      </Group>
      {execution.isPending ? <Loading label="Loading the execution" /> : null}
      {execution.error ? <ErrorNotice error={execution.error} onRetry={() => void execution.refetch()} /> : null}
      {cancel.error ? <ErrorNotice error={cancel.error} /> : null}
      {retry.error ? <ErrorNotice error={retry.error} /> : null}
      {data ? (
        <>
          <Group gap="xs" mb="sm">
            {isUnderway(data.status) ? (
              <Button size="xs" color="red" variant="light" loading={cancel.isPending} onClick={() => cancel.mutate({ execution_uuid: uuid })}>
                Cancel execution
              </Button>
            ) : null}
            {data.status === 'failed' || data.status === 'canceled' ? (
              <Button size="xs" variant="light" loading={retry.isPending} onClick={() => retry.mutate({ execution_uuid: uuid })}>
                Retry
              </Button>
            ) : null}
            <Button size="xs" variant="default" component={Link} to={`/workflows/${data.workflow.uuid}?execution=${data.uuid}`}>
              Show on the canvas
            </Button>
            {retry.data ? (
              <Anchor size="sm" component="button" onClick={() => retry.data && onOpen(retry.data.data.uuid)}>
                Open the retry
              </Anchor>
            ) : null}
          </Group>
          <Text size="xs" c="dimmed" mb="xs" style={{ overflowWrap: 'anywhere' }}>
            {data.uuid}
          </Text>
          <ExecutionView execution={data} />
        </>
      ) : null}
    </Paper>
  )
}
