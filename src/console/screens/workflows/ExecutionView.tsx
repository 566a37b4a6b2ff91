/**
 * One workflow execution shown whole (docs/api/workflows.md, "Workflow executions API"): its
 * status, mode, timings, error, input and output, then each node's part in the order the nodes
 * ran: status, attempts, fired handles, timing, input, output and error. Shared by the
 * executions screen and the run dialog (a manual run answers the same shape).
 */
import { Alert, Badge, Code, Group, Paper, SimpleGrid, Stack, Text, Title } from '@mantine/core'
import dayjs from 'dayjs'
import type { ReactNode } from 'react'
import type { RouterOutputs } from '../../lib/api.ts'

export type ExecutionDetail = RouterOutputs['workflowExecutions']['retrieve']['data']
export type ExecutionSummary = RouterOutputs['workflowExecutions']['list']['data'][number]
export type NodeRun = ExecutionDetail['data'][number]

const STATUS_COLORS: Record<string, string> = {
  queued: 'gray',
  running: 'blue',
  succeeded: 'green',
  failed: 'red',
  canceled: 'yellow',
  skipped: 'gray',
}

/** An execution's or a node's status as a badge. */
export function StatusBadge({ status }: { status: string }) {
  return (
    <Badge color={STATUS_COLORS[status] ?? 'gray'} variant="light">
      {status}
    </Badge>
  )
}

/** Whether an execution may still change (the screens refresh it until it ends). */
export const isUnderway = (status: string) => status === 'queued' || status === 'running'

/** Milliseconds for a person: `850 ms`, `2.4 s`, `3 min 5 s`; a dash when unknown. */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '–'
  if (ms < 1000) return `${ms} ms`
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`
}

/** A timestamp in the browser's time, to the second; a dash when there is none. */
export function formatTime(iso: string | null | undefined): string {
  return iso ? dayjs(iso).format('YYYY-MM-DD HH:mm:ss') : '–'
}

/** A JSON value shown as indented text that wraps and scrolls rather than widening the page. */
export function JsonBlock({ label, value }: { label: string; value: unknown }) {
  const text = value === undefined ? 'null' : JSON.stringify(value, null, 2)
  return (
    <Stack gap={2} style={{ minWidth: 0 }}>
      <Text size="xs" fw={600} c="dimmed">
        {label}
      </Text>
      <Code block style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere', maxHeight: 240, overflow: 'auto' }} aria-label={label}>
        {text}
      </Code>
    </Stack>
  )
}

function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div>
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
        {children}
      </Text>
    </div>
  )
}

/** One node's part of an execution: status, timing, error, input and output. */
export function NodeRunView({ run }: { run: NodeRun }) {
  return (
    <Paper withBorder p="sm" radius="sm" component="section" aria-label={`Node ${run.node_id}`}>
      <Group justify="space-between" gap="xs" wrap="wrap" mb="xs">
        <Title order={4} size="h5" style={{ overflowWrap: 'anywhere', minWidth: 0 }}>
          {run.node_id} <Text span size="sm" c="dimmed">({run.node_type})</Text>
        </Title>
        <StatusBadge status={run.status} />
      </Group>
      <SimpleGrid cols={{ base: 2, sm: 4 }} spacing="xs" mb="xs">
        <Fact label="Started">{formatTime(run.started_at)}</Fact>
        <Fact label="Duration">{formatDuration(run.duration_ms)}</Fact>
        <Fact label="Attempts">{run.attempts}</Fact>
        <Fact label="Outputs fired">{run.branches?.length ? run.branches.join(', ') : '–'}</Fact>
      </SimpleGrid>
      {run.error ? (
        <Alert color="red" title={`Error: ${run.error.code}`} mb="xs">
          <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
            {run.error.message}
          </Text>
        </Alert>
      ) : null}
      <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="xs">
        <JsonBlock label={`Input of ${run.node_id}`} value={run.input} />
        <JsonBlock label={`Output of ${run.node_id}`} value={run.output} />
      </SimpleGrid>
    </Paper>
  )
}

/** The execution's facts, its error, input and output, then its nodes. */
export function ExecutionView({ execution }: { execution: ExecutionDetail }) {
  return (
    <Stack gap="sm">
      <Group gap="xs">
        <StatusBadge status={execution.status} />
        <Badge variant="outline">{execution.mode}</Badge>
        {execution.retry_of_uuid ? <Badge variant="outline">retry</Badge> : null}
      </Group>
      <SimpleGrid cols={{ base: 2, sm: 4 }} spacing="xs">
        <Fact label="Started">{formatTime(execution.started_at)}</Fact>
        <Fact label="Finished">{formatTime(execution.finished_at)}</Fact>
        <Fact label="Duration">{formatDuration(execution.duration_ms)}</Fact>
        <Fact label="By">{execution.user?.name ?? (execution.mode === 'manual' || execution.mode === 'retry' ? '–' : execution.mode)}</Fact>
      </SimpleGrid>
      {execution.error ? (
        <Alert color="red" title={`Failed: ${execution.error.code}`} role="alert">
          <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
            {execution.error.message}
            {execution.error.node_id ? ` (node ${execution.error.node_id})` : ''}
          </Text>
        </Alert>
      ) : null}
      <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="xs">
        <JsonBlock label="Execution input" value={execution.input} />
        <JsonBlock label="Execution output" value={execution.output} />
      </SimpleGrid>
      <Title order={3} size="h4">
        Nodes
      </Title>
      {execution.data.length === 0 ? (
        <Text c="dimmed" size="sm">
          {isUnderway(execution.status) ? 'No node has finished yet.' : 'No node ran.'}
        </Text>
      ) : (
        execution.data.map((run) => <NodeRunView key={run.node_id} run={run} />)
      )}
    </Stack>
  )
}
