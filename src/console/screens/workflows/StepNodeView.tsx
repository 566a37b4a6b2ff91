/**
 * A node on the editor's canvas: its name and type, an input handle (not on triggers), one output
 * handle or one per named output (an if's `true`/`false`, a switch's cases), the last save's
 * problems of the node, in red, with a red border, and, when an execution is shown on the canvas,
 * the node's part in it (succeeded, failed, skipped, running, waiting, not run) as a badge.
 */
import { Badge, Group, Text } from '@mantine/core'
import { Handle, Position, type NodeProps } from '@xyflow/react'
import { createContext, memo, useContext } from 'react'
import { outputsOf, type GraphProblem, type NodeType, type StepNode } from './graph.ts'

/** What every node on the canvas reads: the catalogue, the problems and the shown execution's statuses by node id. */
export interface CanvasContextValue {
  catalog: Map<string, NodeType>
  problemsByNode: Map<string, GraphProblem[]>
  runStatuses: Map<string, string>
}
export const CanvasContext = createContext<CanvasContextValue>({ catalog: new Map(), problemsByNode: new Map(), runStatuses: new Map() })

const RUN_COLORS: Record<string, string> = {
  succeeded: 'green',
  failed: 'red',
  skipped: 'gray',
  pinned: 'grape',
  canceled: 'yellow',
  running: 'blue',
  waiting: 'gray',
  'not run': 'gray',
}

const HANDLE_STYLE = { width: 10, height: 10 }

function StepNodeView({ id, data, selected }: NodeProps<StepNode>) {
  const { catalog, problemsByNode, runStatuses } = useContext(CanvasContext)
  const runStatus = runStatuses.get(id)
  const type = catalog.get(data.type)
  const problems = problemsByNode.get(id) ?? []
  const outputs = outputsOf(data, type)
  const invalid = problems.length > 0
  return (
    <div
      data-invalid={invalid || undefined}
      data-run-status={runStatus}
      style={{
        width: 200,
        // Room for each named output's handle and label.
        minHeight: outputs.length > 1 ? outputs.length * 18 + 16 : undefined,
        padding: '8px 10px',
        borderRadius: 8,
        background: 'var(--mantine-color-body)',
        border: `2px solid ${invalid ? 'var(--mantine-color-red-6)' : selected ? 'var(--mantine-color-blue-6)' : 'var(--mantine-color-default-border)'}`,
        boxShadow: selected ? '0 0 0 3px var(--mantine-color-blue-light)' : undefined,
      }}
    >
      {type?.kind === 'trigger' ? null : <Handle type="target" position={Position.Left} style={HANDLE_STYLE} />}
      <Group gap={4} wrap="nowrap" justify="space-between">
        <Text size="sm" fw={600} truncate="end" title={data.name || id} style={{ minWidth: 0 }}>
          {data.name || id}
        </Text>
        {runStatus ? (
          <Badge size="xs" variant={runStatus === 'running' ? 'filled' : 'light'} color={RUN_COLORS[runStatus] ?? 'gray'} aria-label={`Run status: ${runStatus}`} style={{ flexShrink: 0 }}>
            {runStatus}
          </Badge>
        ) : null}
      </Group>
      <Text size="xs" c="dimmed" truncate="end">
        {type?.label ?? `Unknown type ${data.type}`}
      </Text>
      {problems.map((problem) => (
        <Text key={problem.key} size="xs" c="red" mt={4} style={{ overflowWrap: 'anywhere' }} lineClamp={3}>
          {problem.field ? `${problem.field.replace(/^parameters\./, '')}: ` : ''}
          {problem.message}
        </Text>
      ))}
      {outputs.map((handle, index) => {
        const top = `${((index + 1) / (outputs.length + 1)) * 100}%`
        return (
          <div key={handle ?? ''}>
            <Handle type="source" position={Position.Right} id={handle ?? undefined} style={{ ...HANDLE_STYLE, top }} aria-label={handle ? `Output ${handle}` : 'Output'} />
            {handle ? (
              <Text size="10px" c="dimmed" style={{ position: 'absolute', right: 10, top, transform: 'translateY(-50%)', pointerEvents: 'none' }}>
                {handle}
              </Text>
            ) : null}
          </div>
        )
      })}
    </div>
  )
}

export const NODE_TYPES = { step: memo(StepNodeView) }
