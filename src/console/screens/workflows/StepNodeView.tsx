/**
 * A node on the editor's canvas: its name and type, an input handle (not on triggers), one output
 * handle or one per named output (an if's `true`/`false`, a switch's cases), and the last save's
 * problems of the node, in red, with a red border.
 */
import { Text } from '@mantine/core'
import { Handle, Position, type NodeProps } from '@xyflow/react'
import { createContext, memo, useContext } from 'react'
import { outputsOf, type GraphProblem, type NodeType, type StepNode } from './graph.ts'

/** What every node on the canvas reads: the catalogue and the problems by node id. */
export interface CanvasContextValue {
  catalog: Map<string, NodeType>
  problemsByNode: Map<string, GraphProblem[]>
}
export const CanvasContext = createContext<CanvasContextValue>({ catalog: new Map(), problemsByNode: new Map() })

const HANDLE_STYLE = { width: 10, height: 10 }

function StepNodeView({ id, data, selected }: NodeProps<StepNode>) {
  const { catalog, problemsByNode } = useContext(CanvasContext)
  const type = catalog.get(data.type)
  const problems = problemsByNode.get(id) ?? []
  const outputs = outputsOf(data, type)
  const invalid = problems.length > 0
  return (
    <div
      data-invalid={invalid || undefined}
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
      <Text size="sm" fw={600} truncate="end" title={data.name || id}>
        {data.name || id}
      </Text>
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
