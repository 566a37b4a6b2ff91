/**
 * Two versions of an agent compared (docs/api/versions.md): both snapshots are read
 * (`agents.version`) and shown field by field: the name, description and photo as before and
 * after, the instruction as a line diff (jsdiff's `diffLines`, removed lines struck out, added
 * ones inserted), metadata by key, and the tools and workflows added and removed by name. Fields
 * the two versions share are named once, as unchanged.
 *
 * Loaded only when a comparison is opened (./AgentVersions.tsx imports it lazily), so the
 * diff library stays out of every other screen's script.
 */
import { Alert, Badge, Code, Group, Stack, Table, Text } from '@mantine/core'
import { diffLines } from 'diff'
import type { ReactNode } from 'react'
import { ErrorNotice, Loading } from '../../ui/states.tsx'
import { useTools, useVersion, useWorkflowCatalogue, type VersionDetail } from './api.ts'

type Snapshot = VersionDetail['snapshot']

/** Whether two JSON values are the same (snapshots come from JSON, so key order is the service's). */
const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null)

const valueText = (value: unknown) =>
  value === undefined || value === null ? '' : typeof value === 'string' ? value : JSON.stringify(value)

export default function AgentVersionDiff({ agentUuid, from, to }: { agentUuid: string; from: number; to: number }) {
  const before = useVersion({ agent_uuid: agentUuid, version: from })
  const after = useVersion({ agent_uuid: agentUuid, version: to })
  const failed = before.error ?? after.error
  if (failed) return <ErrorNotice error={failed} onRetry={() => void Promise.all([before.refetch(), after.refetch()])} />
  if (!before.data || !after.data) return <Loading label="Loading both versions" />
  return <SnapshotDiff from={from} to={to} before={before.data.data.snapshot} after={after.data.data.snapshot} />
}

function SnapshotDiff({ from, to, before, after }: { from: number; to: number; before: Snapshot; after: Snapshot }) {
  const tools = useTools()
  const workflows = useWorkflowCatalogue()
  const toolName = (uuid: string) => tools.data?.data.find((tool) => tool.uuid === uuid)?.name ?? uuid
  const workflowName = (uuid: string) => workflows.data?.data.find((workflow) => workflow.uuid === uuid)?.name ?? uuid
  const toolKey = (tool: Snapshot['tools'][number]) => `${toolName(tool.tool_uuid)}${tool.account_uuid ? ' (with an account)' : ''}`
  const parts: { label: string; changed: boolean; body: ReactNode }[] = [
    { label: 'Name', changed: before.name !== after.name, body: <FromTo from={from} to={to} before={before.name} after={after.name} /> },
    {
      label: 'Description',
      changed: before.description !== after.description,
      body: <FromTo from={from} to={to} before={before.description} after={after.description} />,
    },
    {
      label: 'Instruction',
      changed: before.instruction !== after.instruction,
      body: <LineDiff before={before.instruction} after={after.instruction} />,
    },
    {
      label: 'Metadata',
      changed: !same(before.metadata, after.metadata),
      body: <MetadataDiff from={from} to={to} before={before.metadata ?? {}} after={after.metadata ?? {}} />,
    },
    {
      label: 'Photo',
      changed: !same(before.profile_photo_config, after.profile_photo_config),
      body: (
        <FromTo from={from} to={to} before={valueText(before.profile_photo_config)} after={valueText(after.profile_photo_config)} mono />
      ),
    },
    {
      label: 'Tools',
      changed: !same(before.tools, after.tools),
      body: <SetDiff before={before.tools.map(toolKey)} after={after.tools.map(toolKey)} />,
    },
    {
      label: 'Workflows',
      changed: !same(before.workflows, after.workflows),
      body: (
        <SetDiff
          before={before.workflows.map((w) => workflowName(w.workflow_uuid))}
          after={after.workflows.map((w) => workflowName(w.workflow_uuid))}
        />
      ),
    },
  ]
  const changed = parts.filter((part) => part.changed)
  const unchanged = parts.filter((part) => !part.changed).map((part) => part.label.toLowerCase())
  return (
    <Stack gap="md">
      {changed.length === 0 ? (
        <Alert color="gray" title="The same">
          Versions {from} and {to} hold the same name, description, instruction, metadata, photo, tools and workflows.
        </Alert>
      ) : (
        changed.map((part) => (
          <section key={part.label} aria-label={`${part.label} changed`}>
            <Text size="sm" fw={600} mb={4}>
              {part.label}
            </Text>
            {part.body}
          </section>
        ))
      )}
      {unchanged.length && changed.length ? (
        <Text size="sm" c="dimmed">
          Unchanged: {unchanged.join(', ')}.
        </Text>
      ) : null}
    </Stack>
  )
}

/** A text field before and after. */
function FromTo({ from, to, before, after, mono = false }: { from: number; to: number; before: string; after: string; mono?: boolean }) {
  const cell = (value: string) => (
    <Text
      size="sm"
      ff={mono ? 'monospace' : undefined}
      c={value ? undefined : 'dimmed'}
      style={{ overflowWrap: 'anywhere', whiteSpace: 'pre-wrap' }}
    >
      {value || 'None'}
    </Text>
  )
  return (
    <Table withTableBorder verticalSpacing={4} aria-label="Before and after">
      <Table.Tbody>
        <Table.Tr>
          <Table.Th scope="row" style={{ width: 60 }}>
            v{from}
          </Table.Th>
          <Table.Td>{cell(before)}</Table.Td>
        </Table.Tr>
        <Table.Tr>
          <Table.Th scope="row">v{to}</Table.Th>
          <Table.Td>{cell(after)}</Table.Td>
        </Table.Tr>
      </Table.Tbody>
    </Table>
  )
}

/** The lines of a change, without the line break that ends its last one. */
const linesOf = (value: string) => value.replace(/\n$/, '').split('\n')

/** The instruction's lines: kept ones plain, removed ones struck out (`del`), added ones marked (`ins`). */
function LineDiff({ before, after }: { before: string; after: string }) {
  const changes = diffLines(before, after)
  const rows: { kind: 'same' | 'added' | 'removed'; text: string }[] = []
  for (const change of changes) {
    const kind = change.added ? 'added' : change.removed ? 'removed' : 'same'
    for (const text of linesOf(change.value)) rows.push({ kind, text })
  }
  const added = rows.filter((row) => row.kind === 'added').length
  const removed = rows.filter((row) => row.kind === 'removed').length
  return (
    <>
      <Group gap="xs" mb={4}>
        <Badge color="green" variant="light" tt="none">
          +{added} line{added === 1 ? '' : 's'}
        </Badge>
        <Badge color="red" variant="light" tt="none">
          −{removed} line{removed === 1 ? '' : 's'}
        </Badge>
      </Group>
      <Code block aria-label="Instruction diff" style={{ maxHeight: 360, overflowY: 'auto', padding: 0 }}>
        {rows.map((row, index) => {
          const style = {
            display: 'block',
            whiteSpace: 'pre-wrap' as const,
            overflowWrap: 'anywhere' as const,
            padding: '0 8px',
            textDecoration: 'none',
            background:
              row.kind === 'added'
                ? 'var(--mantine-color-green-light)'
                : row.kind === 'removed'
                  ? 'var(--mantine-color-red-light)'
                  : undefined,
          }
          const sign = row.kind === 'added' ? '+ ' : row.kind === 'removed' ? '- ' : '  '
          if (row.kind === 'added') {
            return (
              <ins key={index} style={style}>
                {sign}
                {row.text}
              </ins>
            )
          }
          if (row.kind === 'removed') {
            return (
              <del key={index} style={style}>
                {sign}
                {row.text}
              </del>
            )
          }
          return (
            <span key={index} style={style}>
              {sign}
              {row.text}
            </span>
          )
        })}
      </Code>
    </>
  )
}

/** Metadata keys added, removed or changed, each with its value in both versions. */
function MetadataDiff({
  from,
  to,
  before,
  after,
}: {
  from: number
  to: number
  before: Record<string, unknown>
  after: Record<string, unknown>
}) {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((key) => !same(before[key], after[key])).sort()
  return (
    <Table.ScrollContainer minWidth={420}>
      <Table striped withTableBorder aria-label="Metadata changes" verticalSpacing={4}>
        <Table.Thead>
          <Table.Tr>
            <Table.Th scope="col">Key</Table.Th>
            <Table.Th scope="col">v{from}</Table.Th>
            <Table.Th scope="col">v{to}</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {keys.map((key) => (
            <Table.Tr key={key}>
              <Table.Th scope="row">
                <Code>{key}</Code>
              </Table.Th>
              {[before[key], after[key]].map((value, index) => (
                <Table.Td key={index} style={{ overflowWrap: 'anywhere' }}>
                  {key in (index === 0 ? before : after) ? (
                    <Text size="sm">{valueText(value)}</Text>
                  ) : (
                    <Text size="sm" c="dimmed">
                      not set
                    </Text>
                  )}
                </Table.Td>
              ))}
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  )
}

/** Names added and removed between two lists (tools, workflows). */
function SetDiff({ before, after }: { before: string[]; after: string[] }) {
  const added = after.filter((name) => !before.includes(name))
  const removed = before.filter((name) => !after.includes(name))
  return (
    <Stack gap={2}>
      {added.map((name) => (
        <Text key={`+${name}`} size="sm" c="green.8">
          + {name}
        </Text>
      ))}
      {removed.map((name) => (
        <Text key={`-${name}`} size="sm" c="red.8" td="line-through">
          − {name}
        </Text>
      ))}
      {added.length === 0 && removed.length === 0 ? (
        <Text size="sm" c="dimmed">
          The same, in another order or with other accounts.
        </Text>
      ) : null}
    </Stack>
  )
}
