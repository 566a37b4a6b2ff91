/**
 * The workflow editor: the graph drawn and edited with React Flow (drag nodes, connect a node's
 * output handle to another's input, Delete/Backspace removes the selection), nodes dragged from
 * the palette of node types (./NodePalette.tsx) onto the canvas or clicked there, a clicked one
 * placed after the selected node and connected to it; their parameters as forms built from each
 * type's JSON Schema, and the same done from lists beside the canvas for the keyboard
 * (./EditorPanels.tsx). A run (./RunDialog.tsx) is followed on the canvas: each node shows its
 * status in the execution (`?execution=<uuid>`, also opened from the executions screen) and a
 * node clicked shows its input and output in the side panel. Save stores the
 * name, description and whole graph; when the service refuses it (400), each issue is shown on
 * the node or connection it names (a red border and the message on the canvas, at its field in
 * the node's form) and listed, each entry leading to its node. Also here: turn the workflow on or
 * off, run it (./RunDialog.tsx), and its executions.
 * Procedures: `workflows.retrieve` (`GET /api/v1/workflows/{workflow_uuid}`),
 * `workflowNodeTypes.list` (`GET /api/v1/workflow-node-types`), `workflows.update` (`PUT`),
 * `workflows.run` (`POST .../run`, queued), `workflowExecutions.retrieve` (read again while it runs).
 *
 * React Flow's stylesheet is imported here so that it is loaded with this screen only.
 */
import '@xyflow/react/dist/style.css'
import { Alert, Anchor, Badge, Button, CloseButton, Grid, Group, Modal, Paper, Stack, Switch, Text, TextInput, Title, useComputedColorScheme } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import {
  addEdge,
  Background,
  Controls,
  ReactFlow,
  ReactFlowProvider,
  useEdgesState,
  useNodesState,
  useReactFlow,
  type Connection,
  type OnSelectionChangeParams,
} from '@xyflow/react'
import { useCallback, useEffect, useMemo, useRef, useState, type DragEvent } from 'react'
import { Link, useBlocker, useParams, useSearchParams } from 'react-router'
import { problemOf, type Problem } from '../../lib/api.ts'
import { fieldError } from '../../ui/forms.ts'
import { ScreenTitle } from '../../ui/ListControls.tsx'
import { describeProblem, ErrorNotice, Loading } from '../../ui/states.tsx'
import { useExecution, useNodeTypes, useUpdateWorkflow, useWorkflow } from './api.ts'
import { Connections, NodeEditor, NodeList, ProblemList } from './EditorPanels.tsx'
import { formatDuration, formatTime, isUnderway, NodeRunView, StatusBadge, type ExecutionDetail } from './ExecutionView.tsx'
import {
  freshId,
  graphProblems,
  nodeLabel,
  outputsOf,
  runStatuses,
  toFlow,
  toStored,
  type GraphProblem,
  type NodeType,
  type StepEdge,
  type StepNode,
  type Workflow,
} from './graph.ts'
import { NODE_TYPE_MIME, NodePalette } from './NodePalette.tsx'
import { RunDialog } from './RunDialog.tsx'
import { CanvasContext, NODE_TYPES } from './StepNodeView.tsx'

export default function WorkflowEditScreen() {
  const { workflowUuid = '' } = useParams()
  const workflow = useWorkflow(workflowUuid)
  const types = useNodeTypes()
  const error = workflow.error ?? types.error
  if (error) {
    return (
      <>
        <ScreenTitle title="Workflow" />
        <ErrorNotice error={error} onRetry={() => void (workflow.error ? workflow.refetch() : types.refetch())} />
        <Button component={Link} to="/workflows" variant="light">
          Back to workflows
        </Button>
      </>
    )
  }
  if (!workflow.data || !types.data) return <Loading label="Loading the workflow" />
  return (
    <ReactFlowProvider>
      <Editor key={workflowUuid} workflow={workflow.data.data} types={types.data.data} />
    </ReactFlowProvider>
  )
}

interface Details {
  name: string
  description: string
}

/** What a save sends, to compare with the last one saved. */
const snapshotOf = (details: Details, nodes: StepNode[], edges: StepEdge[]) => JSON.stringify({ ...details, ...toStored(nodes, edges) })

/** A connection id not yet used. */
function freshEdgeId(edges: StepEdge[]): string {
  const taken = new Set(edges.map((edge) => edge.id))
  let n = edges.length + 1
  while (taken.has(`edge_${n}`)) n += 1
  return `edge_${n}`
}

function Editor({ workflow, types }: { workflow: Workflow; types: NodeType[] }) {
  const flow = useReactFlow<StepNode, StepEdge>()
  const colorScheme = useComputedColorScheme('light')
  const catalog = useMemo(() => new Map(types.map((type) => [type.type, type])), [types])
  const [initial] = useState(() => toFlow(workflow.nodes, workflow.edges))
  const [nodes, setNodes, onNodesChange] = useNodesState<StepNode>(initial.nodes)
  const [edges, setEdges, onEdgesChange] = useEdgesState<StepEdge>(initial.edges)
  const [details, setDetails] = useState<Details>({ name: workflow.name, description: workflow.description })
  const [saved, setSaved] = useState(() => snapshotOf({ name: workflow.name, description: workflow.description }, initial.nodes, initial.edges))
  const [problems, setProblems] = useState<GraphProblem[]>([])
  const [saveProblem, setSaveProblem] = useState<Problem | null>(null)
  const [selectedId, setSelectedId] = useState<string | null>(null)
  const [highlightedEdge, setHighlightedEdge] = useState<string | null>(null)
  const [running, setRunning] = useState(false)
  const [focusRequest, setFocusRequest] = useState(0)
  const [savedAt, setSavedAt] = useState<string | null>(null)
  const [searchParams, setSearchParams] = useSearchParams()
  const executionUuid = searchParams.get('execution')
  const execution = useExecution(executionUuid)
  const shownExecution = executionUuid ? execution.data?.data : undefined
  const headingRef = useRef<HTMLHeadingElement>(null)
  const dirty = snapshotOf(details, nodes, edges) !== saved

  // A problem of a node or connection deleted since the save (on the canvas, with the Delete key) is gone with it.
  // Keyed by the ids alone, so that dragging a node does not redraw every node.
  const nodeIds = nodes.map((node) => node.id).join('\n')
  const edgeIds = edges.map((edge) => edge.id).join('\n')
  const shown = useMemo(() => {
    const liveNodes = new Set(nodeIds.split('\n'))
    const liveEdges = new Set(edgeIds.split('\n'))
    return problems.filter((problem) => (!problem.nodeId || liveNodes.has(problem.nodeId)) && (!problem.edgeId || liveEdges.has(problem.edgeId)))
  }, [problems, nodeIds, edgeIds])
  const problemsByNode = useMemo(() => groupBy(shown, (problem) => problem.nodeId), [shown])
  const problemsByEdge = useMemo(() => groupBy(shown, (problem) => problem.edgeId), [shown])
  // Keyed by ids and connections, not positions, so that dragging a node does not redraw every node.
  const edgeKey = edges.map((edge) => `${edge.source}>${edge.target}`).join('\n')
  const statuses = useMemo(
    () => (shownExecution ? runStatuses(shownExecution, nodes, edges, catalog) : new Map<string, string>()),
    // nodes and edges matter here only through nodeIds and edgeKey.
    [shownExecution, nodeIds, edgeKey, catalog],
  )
  const canvasContext = useMemo(() => ({ catalog, problemsByNode, runStatuses: statuses }), [catalog, problemsByNode, statuses])
  const selected = nodes.find((node) => node.id === selectedId) ?? null

  // A node deleted on the canvas (Delete key) closes its editor.
  useEffect(() => {
    if (selectedId && !nodes.some((node) => node.id === selectedId)) setSelectedId(null)
  }, [nodes, selectedId])
  // A node chosen from a list: its editor's heading takes the focus once it is drawn.
  useEffect(() => {
    if (focusRequest) headingRef.current?.focus()
  }, [focusRequest])

  const blocker = useBlocker(({ currentLocation, nextLocation }) => dirty && currentLocation.pathname !== nextLocation.pathname)
  useEffect(() => {
    if (!dirty) return
    const warn = (event: BeforeUnloadEvent) => event.preventDefault()
    window.addEventListener('beforeunload', warn)
    return () => window.removeEventListener('beforeunload', warn)
  }, [dirty])

  const showNode = useCallback(
    (id: string) => {
      const node = flow.getNode(id)
      setSelectedId(id)
      setNodes((all) => all.map((n) => (n.selected === (n.id === id) ? n : { ...n, selected: n.id === id })))
      if (node) void flow.setCenter(node.position.x + 100, node.position.y + 40, { zoom: Math.max(flow.getZoom(), 0.8), duration: 300 })
      setFocusRequest((n) => n + 1)
    },
    [flow, setNodes],
  )
  const showEdge = useCallback(
    (id: string) => {
      setHighlightedEdge(id)
      setEdges((all) => all.map((e) => (e.selected === (e.id === id) ? e : { ...e, selected: e.id === id })))
      const edge = flow.getEdge(id)
      const source = edge ? flow.getNode(edge.source) : undefined
      if (source) void flow.setCenter(source.position.x + 200, source.position.y + 40, { zoom: Math.max(flow.getZoom(), 0.8), duration: 300 })
      requestAnimationFrame(() => document.getElementById(`connection-${id}`)?.focus())
    },
    [flow, setEdges],
  )

  /**
   * Adds a node of `type`, where it was dropped or else after the selected node (below the nodes
   * already after it) or the rightmost one; one added while a node is selected is connected from
   * that node's first output, as n8n does, unless it is a trigger (which takes no input).
   */
  const addNode = (type: string, dropped?: { x: number; y: number }) => {
    const nodeType = catalog.get(type)
    const id = freshId(type, new Set(nodes.map((node) => node.id)))
    const from = selected && nodeType?.kind !== 'trigger' ? selected : null
    const anchor = selected ?? nodes.reduce<StepNode | null>((right, node) => (!right || node.position.x > right.position.x ? node : right), null)
    const siblings = from ? edges.filter((edge) => edge.source === from.id).length : 0
    const position = dropped ?? (anchor ? { x: anchor.position.x + 260, y: anchor.position.y + siblings * 110 } : { x: 0, y: 80 })
    const takenNames = new Set(nodes.map((node) => node.data.name))
    const base = nodeType?.label ?? type
    let name = base
    for (let n = 2; takenNames.has(name); n += 1) name = `${base} ${n}`
    const node: StepNode = { id, type: 'step', position, data: { type, name, parameters: {}, extra: {} } }
    setNodes((all) => [...all.map((n) => (n.selected ? { ...n, selected: false } : n)), { ...node, selected: true }])
    if (from) {
      const sourceHandle = outputsOf(from.data, catalog.get(from.data.type))[0]
      setEdges((all) => [...all, { id: freshEdgeId(all), source: from.id, sourceHandle, target: id, targetHandle: null, data: { extra: {} } }])
    }
    setSelectedId(id)
    setFocusRequest((n) => n + 1)
    // Once it is drawn, bring the new node into view (a dropped one is where the pointer left it).
    if (!dropped) requestAnimationFrame(() => void flow.fitView({ maxZoom: 1, padding: 0.2, duration: 200 }))
  }
  const dragOver = useCallback((event: DragEvent) => {
    if (!event.dataTransfer.types.includes(NODE_TYPE_MIME)) return
    event.preventDefault()
    event.dataTransfer.dropEffect = 'move'
  }, [])
  const drop = (event: DragEvent) => {
    const type = event.dataTransfer.getData(NODE_TYPE_MIME)
    if (!type) return
    event.preventDefault()
    // The pointer is about the node's middle: a node is 200 px wide and about 50 high.
    const at = flow.screenToFlowPosition({ x: event.clientX, y: event.clientY })
    addNode(type, { x: at.x - 100, y: at.y - 25 })
  }
  const showExecution = (uuid: string | null) =>
    setSearchParams(
      (params) => {
        const next = new URLSearchParams(params)
        if (uuid) next.set('execution', uuid)
        else next.delete('execution')
        return next
      },
      { replace: true },
    )
  const deleteNode = (id: string) => {
    setNodes((all) => all.filter((node) => node.id !== id))
    setEdges((all) => all.filter((edge) => edge.source !== id && edge.target !== id))
    setProblems((all) => all.filter((problem) => problem.nodeId !== id))
  }
  const updateNode = (id: string, change: (data: StepNode['data']) => StepNode['data']) =>
    setNodes((all) => all.map((node) => (node.id === id ? { ...node, data: change(node.data) } : node)))
  const changeParameters = (id: string, parameters: Record<string, unknown>) => {
    const before = nodes.find((node) => node.id === id)?.data.parameters ?? {}
    // A parameter changed since the save: its problem is no longer what the service said of it.
    const changed = new Set([...Object.keys(before), ...Object.keys(parameters)].filter((key) => JSON.stringify(before[key]) !== JSON.stringify(parameters[key])))
    if (!changed.size) return
    updateNode(id, (data) => ({ ...data, parameters }))
    setProblems((all) => all.filter((problem) => problem.nodeId !== id || !changed.has(problem.field.split('.')[1] ?? '')))
  }
  const connect = useCallback(
    (connection: Connection) => setEdges((all) => addEdge({ ...connection, id: freshEdgeId(all), data: { extra: {} } }, all)),
    [setEdges],
  )
  const onSelectionChange = useCallback(({ nodes: chosen }: OnSelectionChangeParams<StepNode, StepEdge>) => {
    if (chosen.length === 1) setSelectedId(chosen[0].id)
  }, [])

  const save = useUpdateWorkflow()
  // The graph sent stays with its own callbacks: a refusal's issues name its nodes and connections by position.
  const saveGraph = (sent: { details: Details; nodes: StepNode[]; edges: StepEdge[] }) =>
    save.mutate(
      { workflow_uuid: workflow.uuid, ...sent.details, ...toStored(sent.nodes, sent.edges) },
      {
        onSuccess: () => {
          setSaved(snapshotOf(sent.details, sent.nodes, sent.edges))
          setProblems([])
          setSaveProblem(null)
          setSavedAt(new Date().toLocaleTimeString())
        },
        onError: (error) => {
          const problem = problemOf(error)
          setSaveProblem(problem)
          setProblems(problem.status === 400 ? graphProblems(problem, sent).filter((p) => p.nodeId || p.edgeId || !['name', 'description'].includes(p.field)) : [])
        },
      },
    )
  const activation = useUpdateWorkflow({
    onError: (error) => {
      const { title, detail } = describeProblem(error)
      notifications.show({ color: 'red', title, message: detail })
    },
  })

  const displayEdges = useMemo(
    () =>
      edges.map((edge) => {
        const edgeProblems = problemsByEdge.get(edge.id)
        if (!edgeProblems) return edge
        return {
          ...edge,
          style: { stroke: 'var(--mantine-color-red-6)', strokeWidth: 2 },
          label: edgeProblems[0].message,
          labelStyle: { fill: 'var(--mantine-color-red-7)', fontSize: 11 },
        }
      }),
    [edges, problemsByEdge],
  )

  return (
    <>
      <ScreenTitle title={workflow.name}>
        <div role="status">
          {dirty ? (
            <Badge color="yellow" variant="light">
              Unsaved changes
            </Badge>
          ) : savedAt ? (
            <Text size="sm" c="dimmed">
              Saved at {savedAt}
            </Text>
          ) : null}
        </div>
        <Switch
          label="Active"
          checked={workflow.is_active}
          disabled={activation.isPending}
          onChange={(event) => activation.mutate({ workflow_uuid: workflow.uuid, is_active: event.currentTarget.checked })}
        />
        <Button variant="default" onClick={() => setRunning(true)}>
          Run
        </Button>
        <Button variant="default" component={Link} to={`/workflows/${workflow.uuid}/executions`}>
          Executions
        </Button>
        <Button onClick={() => saveGraph({ details, nodes, edges })} loading={save.isPending}>
          Save
        </Button>
      </ScreenTitle>
      <Group gap="sm" mb="sm" align="start" wrap="wrap">
        <TextInput
          label="Name"
          required
          value={details.name}
          onChange={(event) => setDetails({ ...details, name: event.currentTarget.value })}
          error={fieldError(saveProblem, 'name')}
          style={{ flex: '1 1 220px' }}
        />
        <TextInput
          label="Description"
          value={details.description}
          onChange={(event) => setDetails({ ...details, description: event.currentTarget.value })}
          error={fieldError(saveProblem, 'description')}
          style={{ flex: '2 1 280px' }}
        />
      </Group>
      {saveProblem && saveProblem.status !== 400 ? <ErrorNotice error={save.error} /> : null}
      <ProblemList problems={shown} nodes={nodes} edges={edges} onNode={showNode} onEdge={showEdge} />
      {executionUuid ? (
        <ExecutionBar
          workflowUuid={workflow.uuid}
          executionUuid={executionUuid}
          execution={shownExecution}
          error={execution.error}
          onRetry={() => void execution.refetch()}
          onHide={() => showExecution(null)}
        />
      ) : null}
      <Grid gap="sm">
        <Grid.Col span={{ base: 12, md: 3, lg: 2.5 }}>
          <NodePalette types={types} onAdd={(type) => addNode(type)} selectedLabel={selected ? nodeLabel(selected) : null} />
        </Grid.Col>
        <Grid.Col span={{ base: 12, md: 9, lg: 6 }}>
          <Paper withBorder h={{ base: 420, sm: 600 }} style={{ overflow: 'hidden' }} aria-label="Workflow canvas" component="section">
            <CanvasContext.Provider value={canvasContext}>
              <ReactFlow<StepNode, StepEdge>
                nodes={nodes}
                edges={displayEdges}
                nodeTypes={NODE_TYPES}
                onNodesChange={onNodesChange}
                onEdgesChange={onEdgesChange}
                onConnect={connect}
                onNodeClick={(_, node) => setSelectedId(node.id)}
                onPaneClick={() => setSelectedId(null)}
                onDragOver={dragOver}
                onDrop={drop}
                onSelectionChange={onSelectionChange}
                isValidConnection={(connection) => connection.source !== connection.target}
                deleteKeyCode={['Backspace', 'Delete']}
                colorMode={colorScheme}
                // Fitted only to a stored graph: an empty canvas's first node, dropped, stays where it was dropped.
                fitView={initial.nodes.length > 0}
                fitViewOptions={{ maxZoom: 1, padding: 0.2 }}
                minZoom={0.2}
              >
                <Background />
                <Controls />
              </ReactFlow>
            </CanvasContext.Provider>
          </Paper>
          <Text size="xs" c="dimmed" mt={4}>
            Drag from a node's right handle to another node's left handle to connect them; Delete or Backspace removes what is selected; a click on the
            background unselects. The lists beside the canvas do the same from the keyboard.
          </Text>
        </Grid.Col>
        <Grid.Col span={{ base: 12, lg: 3.5 }}>
          <Stack gap="sm">
            {selected && executionUuid ? <NodeRunPanel node={selected} execution={shownExecution} status={statuses.get(selected.id)} /> : null}
            {selected ? (
              <NodeEditor
                node={selected}
                type={catalog.get(selected.data.type)}
                problems={problemsByNode.get(selected.id) ?? []}
                onRename={(name) => updateNode(selected.id, (data) => ({ ...data, name }))}
                onParameters={(parameters) => changeParameters(selected.id, parameters)}
                onDelete={() => deleteNode(selected.id)}
                onClose={() => setSelectedId(null)}
                headingRef={headingRef}
              />
            ) : null}
            <NodeList nodes={nodes} catalog={catalog} problemsByNode={problemsByNode} selectedId={selectedId} onEdit={showNode} onDelete={deleteNode} />
            <Connections
              nodes={nodes}
              edges={edges}
              catalog={catalog}
              problemsByEdge={problemsByEdge}
              highlighted={highlightedEdge}
              onConnect={(source, sourceHandle, target) => connect({ source, sourceHandle, target, targetHandle: null })}
              onDelete={(id) => {
                setEdges((all) => all.filter((edge) => edge.id !== id))
                setProblems((all) => all.filter((problem) => problem.edgeId !== id))
              }}
            />
          </Stack>
        </Grid.Col>
      </Grid>
      {running ? (
        <RunDialog
          workflow={workflow}
          opened
          onClose={() => setRunning(false)}
          note={dirty ? 'A run uses the saved workflow: your unsaved changes are not part of it.' : undefined}
          onStarted={(uuid) => showExecution(uuid)}
        />
      ) : null}
      <Modal opened={blocker.state === 'blocked'} onClose={() => blocker.reset?.()} title="Leave without saving?">
        <Text mb="md">Your changes to this workflow are not saved.</Text>
        <Group justify="flex-end">
          <Button variant="default" onClick={() => blocker.reset?.()}>
            Stay
          </Button>
          <Button color="red" onClick={() => blocker.proceed?.()}>
            Leave
          </Button>
        </Group>
      </Modal>
    </>
  )
}

function groupBy<T>(items: T[], keyOf: (item: T) => string | undefined): Map<string, T[]> {
  const groups = new Map<string, T[]>()
  for (const item of items) {
    const key = keyOf(item)
    if (key !== undefined) groups.set(key, [...(groups.get(key) ?? []), item])
  }
  return groups
}

/** The execution shown on the canvas: its status, timing and error, a link to it, and "Hide". */
function ExecutionBar({
  workflowUuid,
  executionUuid,
  execution,
  error,
  onRetry,
  onHide,
}: {
  workflowUuid: string
  executionUuid: string
  execution: ExecutionDetail | undefined
  error: unknown
  onRetry: () => void
  onHide: () => void
}) {
  return (
    <Paper withBorder p="xs" mb="sm" component="section" aria-label="Execution on the canvas">
      <Group justify="space-between" wrap="wrap" gap="xs">
        <Group gap="xs" wrap="wrap" style={{ minWidth: 0 }}>
          <Text size="sm" fw={600}>
            Execution
          </Text>
          {execution ? (
            <>
              <StatusBadge status={execution.status} />
              <Text size="sm" c="dimmed">
                {formatTime(execution.started_at ?? execution.created_at)}
                {isUnderway(execution.status) ? '' : ` · ${formatDuration(execution.duration_ms)}`}
              </Text>
            </>
          ) : error ? null : (
            <Text size="sm" c="dimmed">
              Loading…
            </Text>
          )}
          <Text size="xs" c="dimmed">
            Click a node for its input and output.
          </Text>
        </Group>
        <Group gap="xs" wrap="nowrap">
          <Anchor component={Link} to={`/workflows/${workflowUuid}/executions?execution=${executionUuid}`} size="sm">
            Open among the executions
          </Anchor>
          <CloseButton onClick={onHide} aria-label="Hide the execution" />
        </Group>
      </Group>
      {error ? <ErrorNotice error={error} onRetry={onRetry} /> : null}
      {execution?.error ? (
        <Alert color="red" mt="xs" p="xs" title={`Failed: ${execution.error.code}`}>
          <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
            {execution.error.message}
            {execution.error.node_id ? ` (node ${execution.error.node_id})` : ''}
          </Text>
        </Alert>
      ) : null}
    </Paper>
  )
}

/** The selected node's part in the execution shown: its run, or why it has none. */
function NodeRunPanel({ node, execution, status }: { node: StepNode; execution: ExecutionDetail | undefined; status: string | undefined }) {
  const run = execution?.data.find((item) => item.node_id === node.id)
  const label = nodeLabel(node)
  return (
    <Paper withBorder p="sm" component="section" aria-label={`Run of ${label}`}>
      <Title order={3} size="h5" mb="xs" style={{ overflowWrap: 'anywhere' }}>
        {label} in this execution
      </Title>
      {run ? (
        <NodeRunView run={run} />
      ) : (
        <Text size="sm" c="dimmed">
          {!execution
            ? 'Loading the execution…'
            : status === 'running'
              ? 'Running now.'
              : status === 'waiting'
                ? 'Waiting for the nodes before it.'
                : 'This node did not run in this execution.'}
        </Text>
      )}
    </Paper>
  )
}
