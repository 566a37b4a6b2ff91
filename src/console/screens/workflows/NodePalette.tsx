/**
 * The editor's palette: the node types of `workflowNodeTypes.list`, searched by name, type or
 * description and grouped (triggers, flow, data, calls to the service and the web). An entry is
 * dragged onto the canvas (React Flow's drag-and-drop pattern: the type travels in the drag's
 * data, the editor places it where it is dropped) or clicked, which adds it after the selected
 * node, connected to it.
 */
import { Paper, ScrollArea, Stack, Text, TextInput, Title, UnstyledButton } from '@mantine/core'
import { useMemo, useState, type DragEvent } from 'react'
import type { NodeType } from './graph.ts'

/** The drag's data type that carries a node type's name from the palette to the canvas. */
export const NODE_TYPE_MIME = 'application/x-workflow-node-type'

/** The palette's groups, in order; a type not listed goes by its kind. */
const GROUP_OF: Record<string, string> = {
  if: 'Flow',
  switch: 'Flow',
  merge: 'Flow',
  wait: 'Flow',
  set: 'Data',
  http_request: 'Calls',
  run_prompt: 'Calls',
  run_agent: 'Calls',
  respond_to_webhook: 'Calls',
}
const GROUPS = ['Triggers', 'Flow', 'Data', 'Calls', 'Other']

const groupOf = (type: NodeType) => (type.kind === 'trigger' ? 'Triggers' : (GROUP_OF[type.type] ?? 'Other'))

export function NodePalette({
  types,
  onAdd,
  selectedLabel,
}: {
  types: NodeType[]
  onAdd: (type: string) => void
  selectedLabel: string | null
}) {
  const [search, setSearch] = useState('')
  const groups = useMemo(() => {
    const words = search.trim().toLowerCase().split(/\s+/).filter(Boolean)
    const found = types.filter((type) => {
      const text = `${type.label} ${type.type} ${type.description}`.toLowerCase()
      return words.every((word) => text.includes(word))
    })
    return GROUPS.map((name) => ({ name, types: found.filter((type) => groupOf(type) === name) })).filter((group) => group.types.length)
  }, [types, search])
  const start = (event: DragEvent, type: string) => {
    event.dataTransfer.setData(NODE_TYPE_MIME, type)
    event.dataTransfer.effectAllowed = 'move'
  }
  return (
    <Paper withBorder p="sm" component="section" aria-labelledby="palette-title">
      <Title order={3} size="h5" id="palette-title" mb={4}>
        Nodes
      </Title>
      <Text size="xs" c="dimmed" mb="xs">
        Drag one onto the canvas, or click it to add it {selectedLabel ? `after ${selectedLabel}, connected` : 'at the end'}.
      </Text>
      <TextInput
        aria-label="Search node types"
        placeholder="Search nodes"
        value={search}
        onChange={(event) => setSearch(event.currentTarget.value)}
        mb="xs"
      />
      <ScrollArea.Autosize mah={480} type="auto">
        {groups.length === 0 ? (
          <Text size="sm" c="dimmed">
            No node type matches.
          </Text>
        ) : null}
        <Stack gap="sm">
          {groups.map((group) => (
            <section key={group.name} aria-label={group.name}>
              <Text size="xs" fw={700} tt="uppercase" c="dimmed" mb={4}>
                {group.name}
              </Text>
              <Stack gap={4} component="ul" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
                {group.types.map((type) => (
                  <li key={type.type}>
                    <UnstyledButton
                      draggable
                      onDragStart={(event) => start(event, type.type)}
                      onClick={() => onAdd(type.type)}
                      aria-label={`Add ${type.label}`}
                      data-node-type={type.type}
                      title={type.description}
                      style={{
                        display: 'block',
                        width: '100%',
                        padding: '6px 8px',
                        borderRadius: 6,
                        border: '1px solid var(--mantine-color-default-border)',
                        cursor: 'grab',
                      }}
                    >
                      <Text size="sm" fw={600}>
                        {type.label}
                      </Text>
                      <Text size="xs" c="dimmed" lineClamp={2}>
                        {type.description}
                      </Text>
                    </UnstyledButton>
                  </li>
                ))}
              </Stack>
            </section>
          ))}
        </Stack>
      </ScrollArea.Autosize>
    </Paper>
  )
}
