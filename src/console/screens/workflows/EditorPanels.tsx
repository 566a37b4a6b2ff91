/**
 * The editor's panels beside the canvas, which do everything the canvas does without a mouse
 * (nodes are added from the palette, ./NodePalette.tsx, whose entries are buttons too):
 * list the nodes (edit, delete), edit one node (name and
 * parameters), list the connections (delete) and connect two nodes; and the list of the last
 * save's problems, each leading to the node or connection it names.
 */
import { Alert, Badge, Button, CloseButton, Group, Paper, Select, Stack, Text, TextInput, Title, UnstyledButton } from '@mantine/core'
import { useState, type Ref } from 'react'
import { nodeLabel, outputsOf, type GraphProblem, type NodeType, type StepEdge, type StepNode } from './graph.ts'
import { ParameterForm } from './ParameterForm.tsx'

const LIST_STYLE = { listStyle: 'none', padding: 0, margin: 0 } as const

/** "Set 2" for a node named "Set 2", with its id when it has a name (the problems name ids). */
const describeNode = (node: StepNode) => (node.data.name ? `${node.data.name} (${node.id})` : node.id)

/** Where a problem is, in words. */
function placeOf(problem: GraphProblem, nodes: StepNode[], edges: StepEdge[]): string {
  if (problem.nodeId) {
    const node = nodes.find((n) => n.id === problem.nodeId)
    return `Node ${node ? nodeLabel(node) : problem.nodeId}${problem.field ? `, ${problem.field.replace(/^parameters\./, '')}` : ''}`
  }
  if (problem.edgeId) {
    const edge = edges.find((e) => e.id === problem.edgeId)
    return edge ? `Connection ${edge.source} → ${edge.target}${problem.field ? `, ${problem.field}` : ''}` : 'A connection'
  }
  return problem.field || 'The workflow'
}

export function ProblemList({
  problems,
  nodes,
  edges,
  onNode,
  onEdge,
}: {
  problems: GraphProblem[]
  nodes: StepNode[]
  edges: StepEdge[]
  onNode: (id: string) => void
  onEdge: (id: string) => void
}) {
  if (!problems.length) return null
  return (
    <Alert color="red" title={`Not saved: ${problems.length === 1 ? 'one problem' : `${problems.length} problems`}`} role="alert" mb="sm">
      <Stack component="ul" gap={4} style={LIST_STYLE} aria-label="Problems">
        {problems.map((problem) => {
          const place = placeOf(problem, nodes, edges)
          const target = problem.nodeId && nodes.some((n) => n.id === problem.nodeId) ? () => onNode(problem.nodeId!) : problem.edgeId && edges.some((e) => e.id === problem.edgeId) ? () => onEdge(problem.edgeId!) : undefined
          return (
            <li key={problem.key}>
              {target ? (
                <UnstyledButton onClick={target} style={{ textAlign: 'left' }} aria-label={`Show: ${place}: ${problem.message}`}>
                  <Text size="sm" component="span" td="underline" fw={600} style={{ overflowWrap: 'anywhere' }}>
                    {place}
                  </Text>
                  <Text size="sm" component="span" style={{ overflowWrap: 'anywhere' }}>
                    : {problem.message}
                  </Text>
                </UnstyledButton>
              ) : (
                <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
                  <b>{place}</b>: {problem.message}
                </Text>
              )}
            </li>
          )
        })}
      </Stack>
    </Alert>
  )
}

export function NodeList({
  nodes,
  catalog,
  problemsByNode,
  selectedId,
  onEdit,
  onDelete,
}: {
  nodes: StepNode[]
  catalog: Map<string, NodeType>
  problemsByNode: Map<string, GraphProblem[]>
  selectedId: string | null
  onEdit: (id: string) => void
  onDelete: (id: string) => void
}) {
  return (
    <Paper withBorder p="sm" component="section" aria-labelledby="node-list-title">
      <Title order={3} size="h5" id="node-list-title" mb="xs">
        Nodes ({nodes.length})
      </Title>
      {nodes.length === 0 ? (
        <Text size="sm" c="dimmed">
          No nodes yet: add a trigger first.
        </Text>
      ) : null}
      <Stack component="ul" gap={6} style={LIST_STYLE}>
        {nodes.map((node) => {
          const label = nodeLabel(node)
          const count = problemsByNode.get(node.id)?.length ?? 0
          return (
            <li key={node.id}>
              <Group justify="space-between" wrap="nowrap" gap="xs">
                <div style={{ minWidth: 0 }}>
                  <Text size="sm" fw={node.id === selectedId ? 700 : 500} truncate="end" title={describeNode(node)}>
                    {describeNode(node)}
                  </Text>
                  <Group gap={4}>
                    <Text size="xs" c="dimmed">
                      {catalog.get(node.data.type)?.label ?? node.data.type}
                    </Text>
                    {count ? (
                      <Badge size="xs" color="red">
                        {count === 1 ? '1 problem' : `${count} problems`}
                      </Badge>
                    ) : null}
                  </Group>
                </div>
                <Group gap={4} wrap="nowrap">
                  <Button size="xs" variant="light" onClick={() => onEdit(node.id)} aria-label={`Edit ${label}`}>
                    Edit
                  </Button>
                  <Button size="xs" variant="subtle" color="red" onClick={() => onDelete(node.id)} aria-label={`Delete ${label}`}>
                    Delete
                  </Button>
                </Group>
              </Group>
            </li>
          )
        })}
      </Stack>
    </Paper>
  )
}

/** The chosen node: name, parameters (the type's JSON Schema form), its problems, delete. */
export function NodeEditor({
  node,
  type,
  problems,
  onRename,
  onParameters,
  onDelete,
  onClose,
  headingRef,
}: {
  node: StepNode
  type: NodeType | undefined
  problems: GraphProblem[]
  onRename: (name: string) => void
  onParameters: (parameters: Record<string, unknown>) => void
  onDelete: () => void
  onClose: () => void
  /** The heading, focused when a node is chosen from a list. */
  headingRef: Ref<HTMLHeadingElement>
}) {
  const label = nodeLabel(node)
  // Issues at one parameter go to its field; the rest (the type, retry, the parameters as a whole) above the form.
  const fieldErrors: Record<string, string> = {}
  const general: GraphProblem[] = []
  for (const problem of problems) {
    if (problem.field.startsWith('parameters.')) fieldErrors[problem.field.slice('parameters.'.length)] ??= problem.message
    else general.push(problem)
  }
  return (
    <Paper withBorder p="sm" component="section" aria-labelledby="node-editor-title" style={{ borderColor: problems.length ? 'var(--mantine-color-red-6)' : undefined }}>
      <Group justify="space-between" wrap="nowrap" gap="xs" mb={4}>
        <Title order={3} size="h5" id="node-editor-title" ref={headingRef} tabIndex={-1} style={{ overflowWrap: 'anywhere', minWidth: 0 }}>
          Edit {label}
        </Title>
        <CloseButton onClick={onClose} aria-label="Close the node editor" />
      </Group>
      <Text size="xs" c="dimmed" mb="xs" style={{ overflowWrap: 'anywhere' }}>
        {type?.label ?? `Unknown type ${node.data.type}`} · id {node.id}
        {type ? ` · ${type.description}` : ''}
      </Text>
      {general.length ? (
        <Alert color="red" mb="xs" p="xs">
          {general.map((problem) => (
            <Text key={problem.key} size="sm" style={{ overflowWrap: 'anywhere' }}>
              {problem.field ? `${problem.field}: ` : ''}
              {problem.message}
            </Text>
          ))}
        </Alert>
      ) : null}
      <Stack gap="xs">
        <TextInput label="Node name" description="Shown on the canvas; the id is what expressions use ($nodes.id)." value={node.data.name} onChange={(event) => onRename(event.currentTarget.value)} />
        {type ? (
          <ParameterForm
            key={node.id}
            nodeKey={`node-${node.id.replace(/[^A-Za-z0-9_-]/g, '_')}`}
            parametersSchema={type.parameters}
            parameters={node.data.parameters}
            onChange={onParameters}
            serverErrors={fieldErrors}
          />
        ) : null}
        <Group justify="flex-end">
          <Button color="red" variant="light" onClick={onDelete}>
            Delete node
          </Button>
        </Group>
      </Stack>
    </Paper>
  )
}

export function Connections({
  nodes,
  edges,
  catalog,
  problemsByEdge,
  highlighted,
  onConnect,
  onDelete,
}: {
  nodes: StepNode[]
  edges: StepEdge[]
  catalog: Map<string, NodeType>
  problemsByEdge: Map<string, GraphProblem[]>
  highlighted: string | null
  onConnect: (source: string, sourceHandle: string | null, target: string) => void
  onDelete: (id: string) => void
}) {
  const [from, setFrom] = useState<string | null>(null)
  const [output, setOutput] = useState<string | null>(null)
  const [to, setTo] = useState<string | null>(null)
  const source = nodes.find((node) => node.id === from)
  const outputs = source ? outputsOf(source.data, catalog.get(source.data.type)) : []
  const named = outputs.filter((handle): handle is string => handle !== null)
  const targets = nodes.filter((node) => node.id !== from && catalog.get(node.data.type)?.kind !== 'trigger')
  const ready = Boolean(from && to && (named.length === 0 || output))
  const labelOf = (id: string) => {
    const node = nodes.find((n) => n.id === id)
    return node ? nodeLabel(node) : id
  }
  return (
    <Paper withBorder p="sm" component="section" aria-labelledby="connections-title">
      <Title order={3} size="h5" id="connections-title" mb="xs">
        Connections ({edges.length})
      </Title>
      <Stack component="ul" gap={6} style={LIST_STYLE} mb="sm">
        {edges.map((edge) => {
          const text = `${labelOf(edge.source)}${edge.sourceHandle ? ` (${edge.sourceHandle})` : ''} → ${labelOf(edge.target)}`
          const problems = problemsByEdge.get(edge.id) ?? []
          return (
            <li key={edge.id} id={`connection-${edge.id}`} tabIndex={-1} style={{ outlineOffset: 2, borderRadius: 4, background: highlighted === edge.id ? 'var(--mantine-color-blue-light)' : undefined }}>
              <Group justify="space-between" wrap="nowrap" gap="xs">
                <div style={{ minWidth: 0 }}>
                  <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
                    {text}
                  </Text>
                  {problems.map((problem) => (
                    <Text key={problem.key} size="xs" c="red" style={{ overflowWrap: 'anywhere' }}>
                      {problem.message}
                    </Text>
                  ))}
                </div>
                <Button size="xs" variant="subtle" color="red" onClick={() => onDelete(edge.id)} aria-label={`Delete connection ${text}`}>
                  Delete
                </Button>
              </Group>
            </li>
          )
        })}
      </Stack>
      <Stack gap="xs">
        <Select
          label="Connect from"
          data={nodes.map((node) => ({ value: node.id, label: describeNode(node) }))}
          value={from}
          onChange={(value) => {
            setFrom(value)
            setOutput(null)
          }}
          comboboxProps={{ withinPortal: true }}
        />
        {named.length ? <Select label="Output" data={named} value={output} onChange={setOutput} comboboxProps={{ withinPortal: true }} /> : null}
        <Select label="Connect to" data={targets.map((node) => ({ value: node.id, label: describeNode(node) }))} value={to} onChange={setTo} comboboxProps={{ withinPortal: true }} />
        <Group justify="flex-end">
          <Button
            variant="light"
            disabled={!ready}
            onClick={() => {
              if (!from || !to) return
              onConnect(from, named.length ? output : null, to)
              setTo(null)
            }}
          >
            Connect
          </Button>
        </Group>
      </Stack>
    </Paper>
  )
}
