/**
 * An agent's versions (docs/api/versions.md): the list, newest first, 20 a page
 * (`agents.versions`, `GET /api/v1/agents/{agent_uuid}/versions`), each with its number, when and
 * by whom it was made, what changed and its note; a version opened shows its snapshot
 * (`agents.version`); a note is edited in its row (`agents.annotateVersion`), and a version is
 * restored after a confirmation (`agents.restoreVersion`), which makes a new version.
 *
 * Two versions picked are compared field by field, the instruction as a line diff
 * (./AgentVersionDiff.tsx, loaded with its diff library only when a comparison is opened).
 *
 * Whether the caller may write is learnt on trying, as for saving the form: a note or a restore
 * refused with a 403 says so in words, and nothing changes.
 */
import { Alert, Badge, Button, Code, Group, Modal, Paper, Select, Stack, Table, Text, Textarea, Title } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { lazy, Suspense, useState, type FormEvent, type ReactNode } from 'react'
import { problemOf, type Problem } from '../../lib/api.ts'
import { fieldError, otherIssues } from '../../ui/forms.ts'
import { DataTable, ListStates } from '../../ui/ListTable.tsx'
import { describeStatus, ErrorNotice, Loading } from '../../ui/states.tsx'
import type { Agent } from './agentDraft.ts'
import {
  useAnnotateVersion,
  useRestoreVersion,
  useTools,
  useVersion,
  useVersions,
  useWorkflowCatalogue,
  type Version,
  type VersionDetail,
} from './api.ts'

/** The comparison and its diff library, fetched when a comparison is first opened. */
const AgentVersionDiff = lazy(() => import('./AgentVersionDiff.tsx'))

/** Longest note the service takes (docs/api/versions.md, "Note"); longer ones are sent, and its 400 shown. */
const NOTE_MAX = 2_000
const PER_PAGE = 20

const dateTimeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })

/** The behaviour fields in words, in the order `changed` lists them. */
const FIELD_WORDS: Record<Version['changed'][number], string> = {
  name: 'name',
  description: 'description',
  instruction: 'instruction',
  metadata: 'metadata',
  profile_photo_config: 'photo',
  tools: 'tools',
  workflows: 'workflows',
}

/** What a version changed, in words: "Created" for the first. */
export function changedInWords(version: Pick<Version, 'version' | 'changed'>): string {
  if (version.changed.length === 0) return version.version === 1 ? 'Created' : 'Nothing'
  const words = version.changed.map((field) => FIELD_WORDS[field])
  const text = words.length === 1 ? words[0] : `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]}`
  return text.charAt(0).toUpperCase() + text.slice(1)
}

/** A refused note or restore, in words: a 403 names the permission it needs, with the service's message. */
function ChangeProblem({ problem, action, shown = [] }: { problem: Problem | null; action: 'note' | 'restore'; shown?: string[] }) {
  if (!problem) return null
  const others = otherIssues(problem, shown)
  if (problem.status === 400 && others.length === 0) return null
  const notAllowed = problem.status === 403
  const { title, detail } = describeStatus(problem)
  return (
    <Alert
      color="red"
      role="alert"
      title={
        notAllowed
          ? action === 'note'
            ? 'Not allowed to change this note'
            : 'Not allowed to restore this version'
          : problem.status === 400
            ? 'The request was refused'
            : title
      }
    >
      <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
        {notAllowed
          ? `${action === 'note' ? 'Notes need' : 'Restoring needs'} write permission on the agent; you can view its versions. ${problem.message}`
          : others.length
            ? others.join('; ')
            : detail}
      </Text>
    </Alert>
  )
}

export function AgentVersions({ agent, onRestored }: { agent: Agent; onRestored: () => void }) {
  const [page, setPage] = useState(1)
  const [opened, setOpened] = useState<number | null>(null)
  const [restoring, setRestoring] = useState<number | null>(null)
  const versions = useVersions({ agent_uuid: agent.uuid, page, per_page: PER_PAGE })
  return (
    <Paper withBorder p="md" component="section" aria-labelledby="agent-versions">
      <Stack>
        <div>
          <Title order={3} size="h4" id="agent-versions">
            Versions
          </Title>
          <Text size="sm" c="dimmed">
            Each change of the name, description, instruction, metadata, photo, tools or workflows is kept as a version. Restoring one makes
            a new version; nothing is lost.
          </Text>
        </div>
        <ListStates
          query={versions}
          rows={versions.data?.data}
          loading="Loading the versions"
          empty={{ title: 'No versions yet' }}
          paging={{ page, onChange: setPage }}
        >
          {(rows) => (
            <DataTable columns={['Version', 'Made', 'By', 'What changed', 'Note', { hidden: 'Actions' }]} minWidth={720} label="Versions">
              {rows.map((version) => (
                <VersionRow
                  key={version.version}
                  agentUuid={agent.uuid}
                  version={version}
                  current={version.version === agent.version}
                  onOpen={() => setOpened(version.version)}
                />
              ))}
            </DataTable>
          )}
        </ListStates>
        <CompareVersions agent={agent} />
      </Stack>
      <VersionDialog
        agent={agent}
        version={opened}
        onClose={() => setOpened(null)}
        onRestore={(version) => {
          setOpened(null)
          setRestoring(version)
        }}
      />
      <RestoreDialog
        agent={agent}
        version={restoring}
        onClose={() => setRestoring(null)}
        onRestored={() => {
          setRestoring(null)
          setPage(1)
          onRestored()
        }}
      />
    </Paper>
  )
}

/** Two versions picked (the one before the current and the current, at first) and compared in a dialog. */
function CompareVersions({ agent }: { agent: Agent }) {
  const [picked, setPicked] = useState<{ from: string | null; to: string | null }>({ from: null, to: null })
  const [comparing, setComparing] = useState<{ from: number; to: number } | null>(null)
  if (agent.version < 2) return null
  // Versions are numbered 1 to the current one, none skipped (docs/api/versions.md).
  const options = Array.from({ length: agent.version }, (_, index) => {
    const number = agent.version - index
    return { value: String(number), label: `v${number}${number === agent.version ? ' (current)' : ''}` }
  })
  const from = picked.from ?? String(agent.version - 1)
  const to = picked.to ?? String(agent.version)
  return (
    <Group align="end" gap="xs" wrap="wrap" role="group" aria-label="Compare two versions">
      <Select
        label="Compare version"
        data={options}
        value={from}
        onChange={(value) => setPicked((current) => ({ ...current, from: value }))}
        allowDeselect={false}
        w={160}
        comboboxProps={{ withinPortal: true }}
      />
      <Select
        label="with version"
        data={options}
        value={to}
        onChange={(value) => setPicked((current) => ({ ...current, to: value }))}
        allowDeselect={false}
        w={160}
        comboboxProps={{ withinPortal: true }}
      />
      <Button variant="light" disabled={from === to} onClick={() => setComparing({ from: Number(from), to: Number(to) })}>
        Compare
      </Button>
      <Modal
        opened={comparing !== null}
        onClose={() => setComparing(null)}
        title={comparing ? `Version ${comparing.from} compared with version ${comparing.to}` : ''}
        size="xl"
      >
        {comparing ? (
          <Suspense fallback={<Loading label="Loading the comparison" />}>
            <AgentVersionDiff agentUuid={agent.uuid} from={comparing.from} to={comparing.to} />
          </Suspense>
        ) : null}
      </Modal>
    </Group>
  )
}

function VersionRow({
  agentUuid,
  version,
  current,
  onOpen,
}: {
  agentUuid: string
  version: Version
  current: boolean
  onOpen: () => void
}) {
  return (
    <Table.Tr>
      <Table.Td>
        <Group gap={6} wrap="nowrap">
          <Text fw={600}>v{version.version}</Text>
          {current ? (
            <Badge size="sm" variant="light">
              current
            </Badge>
          ) : null}
        </Group>
      </Table.Td>
      <Table.Td>
        <Text size="sm">{dateTimeFormat.format(new Date(version.created_at))}</Text>
      </Table.Td>
      <Table.Td style={{ maxWidth: 160 }}>
        <Text size="sm" truncate="end" title={version.created_by?.name}>
          {version.created_by ? (
            version.created_by.name
          ) : (
            <Text span c="dimmed" size="sm">
              a deleted user
            </Text>
          )}
        </Text>
      </Table.Td>
      <Table.Td>
        <Text size="sm">{changedInWords(version)}</Text>
      </Table.Td>
      <Table.Td style={{ minWidth: 220, maxWidth: 360 }}>
        <NoteCell agentUuid={agentUuid} version={version} />
      </Table.Td>
      <Table.Td>
        <Button size="xs" variant="light" onClick={onOpen} aria-label={`Open version ${version.version}`}>
          Open
        </Button>
      </Table.Td>
    </Table.Tr>
  )
}

/** A version's note, edited where it is shown: empty removes it. */
function NoteCell({ agentUuid, version }: { agentUuid: string; version: Version }) {
  const [editing, setEditing] = useState(false)
  const [value, setValue] = useState('')
  const annotate = useAnnotateVersion({
    onSuccess: (answer) => {
      setEditing(false)
      notifications.show({
        color: 'green',
        message:
          answer.data.note === null ? `Note of version ${answer.data.version} removed` : `Note of version ${answer.data.version} saved`,
      })
    },
  })
  const problem = annotate.error ? problemOf(annotate.error) : null
  if (!editing) {
    return (
      <Group gap="xs" wrap="nowrap" align="start">
        <Text
          size="sm"
          lineClamp={3}
          title={version.note ?? undefined}
          style={{ overflowWrap: 'anywhere', flex: 1, minWidth: 0 }}
          c={version.note ? undefined : 'dimmed'}
        >
          {version.note ?? 'No note'}
        </Text>
        <Button
          size="compact-xs"
          variant="subtle"
          aria-label={`Edit the note of version ${version.version}`}
          onClick={() => {
            setValue(version.note ?? '')
            annotate.reset()
            setEditing(true)
          }}
        >
          Edit
        </Button>
      </Group>
    )
  }
  const submit = (event: FormEvent) => {
    event.preventDefault()
    annotate.mutate({ agent_uuid: agentUuid, version: version.version, note: value.trim() === '' ? null : value })
  }
  return (
    <form onSubmit={submit} noValidate aria-label={`Note of version ${version.version}`}>
      <Stack gap={6}>
        <Textarea
          label={`Note of version ${version.version}`}
          value={value}
          onChange={(event) => setValue(event.currentTarget.value)}
          autosize
          minRows={2}
          maxRows={8}
          autoFocus
          description={`${value.length.toLocaleString('en')} / ${NOTE_MAX.toLocaleString('en')} characters; empty removes the note.`}
          error={fieldError(problem, 'note')}
          onKeyDown={(event) => {
            if (event.key === 'Escape') setEditing(false)
          }}
        />
        <ChangeProblem problem={problem} action="note" shown={['note']} />
        <Group gap="xs">
          <Button type="submit" size="xs" loading={annotate.isPending}>
            Save note
          </Button>
          <Button size="xs" variant="default" onClick={() => setEditing(false)}>
            Cancel
          </Button>
        </Group>
      </Stack>
    </form>
  )
}

/** A labelled part of a snapshot. */
function Part({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div>
      <Text size="sm" fw={600}>
        {label}
      </Text>
      {children}
    </div>
  )
}

const metadataValue = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value))

/** One version opened: its snapshot, and the way to restore it. */
function VersionDialog({
  agent,
  version,
  onClose,
  onRestore,
}: {
  agent: Agent
  version: number | null
  onClose: () => void
  onRestore: (version: number) => void
}) {
  return (
    <Modal opened={version !== null} onClose={onClose} title={version === null ? '' : `Version ${version}`} size="lg">
      {version === null ? null : <VersionBody agent={agent} version={version} onRestore={onRestore} />}
    </Modal>
  )
}

function VersionBody({ agent, version, onRestore }: { agent: Agent; version: number; onRestore: (version: number) => void }) {
  const detail = useVersion({ agent_uuid: agent.uuid, version })
  if (detail.isPending) return <Loading label="Loading the version" />
  if (detail.error) return <ErrorNotice error={detail.error} onRetry={() => void detail.refetch()} />
  const data = detail.data.data
  const current = version === agent.version
  return (
    <Stack gap="sm">
      <Text size="sm" c="dimmed">
        Made {dateTimeFormat.format(new Date(data.created_at))} by {data.created_by?.name ?? 'a deleted user'} · {changedInWords(data)}
        {data.note ? ` · “${data.note}”` : ''}
      </Text>
      <Snapshot snapshot={data.snapshot} />
      <Group justify="space-between" wrap="wrap" gap="xs">
        <Text size="sm" c="dimmed">
          {current ? 'This is the current version.' : ''}
        </Text>
        <Button disabled={current} onClick={() => onRestore(version)}>
          Restore this version
        </Button>
      </Group>
    </Stack>
  )
}

/** What a version keeps: the text fields, metadata by key, and the tools and workflows by name where the catalogues know them. */
function Snapshot({ snapshot }: { snapshot: VersionDetail['snapshot'] }) {
  const tools = useTools()
  const workflows = useWorkflowCatalogue()
  const toolName = (uuid: string) => tools.data?.data.find((tool) => tool.uuid === uuid)?.name ?? uuid
  const workflowName = (uuid: string) => workflows.data?.data.find((workflow) => workflow.uuid === uuid)?.name ?? uuid
  const metadata = Object.entries(snapshot.metadata ?? {})
  return (
    <Stack gap="sm">
      <Part label="Name">
        <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
          {snapshot.name}
        </Text>
      </Part>
      <Part label="Description">
        <Text size="sm" c={snapshot.description ? undefined : 'dimmed'} style={{ overflowWrap: 'anywhere' }}>
          {snapshot.description || 'None'}
        </Text>
      </Part>
      <Part label="Instruction">
        {snapshot.instruction ? (
          <Code
            block
            aria-label="Instruction of this version"
            style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere', maxHeight: 280, overflowY: 'auto' }}
          >
            {snapshot.instruction}
          </Code>
        ) : (
          <Text size="sm" c="dimmed">
            None
          </Text>
        )}
      </Part>
      <Part label="Metadata">
        {metadata.length ? (
          <Table.ScrollContainer minWidth={320}>
            <Table aria-label="Metadata of this version" withRowBorders={false} verticalSpacing={2}>
              <Table.Tbody>
                {metadata.map(([key, value]) => (
                  <Table.Tr key={key}>
                    <Table.Th scope="row" style={{ width: '35%', verticalAlign: 'top' }}>
                      <Code>{key}</Code>
                    </Table.Th>
                    <Table.Td>
                      <Text size="sm" style={{ overflowWrap: 'anywhere', whiteSpace: 'pre-wrap' }}>
                        {metadataValue(value)}
                      </Text>
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        ) : (
          <Text size="sm" c="dimmed">
            None
          </Text>
        )}
      </Part>
      <Part label={`Tools (${snapshot.tools.length})`}>
        <NameList names={snapshot.tools.map((tool) => `${toolName(tool.tool_uuid)}${tool.account_uuid ? ' (with an account)' : ''}`)} />
      </Part>
      <Part label={`Workflows (${snapshot.workflows.length})`}>
        <NameList names={snapshot.workflows.map((workflow) => workflowName(workflow.workflow_uuid))} />
      </Part>
    </Stack>
  )
}

/** The confirmation of a restore, with its refusal (a 403, a tool or workflow no longer usable) in words. */
function RestoreDialog({
  agent,
  version,
  onClose,
  onRestored,
}: {
  agent: Agent
  version: number | null
  onClose: () => void
  onRestored: () => void
}) {
  const restore = useRestoreVersion({ onSuccess: onRestored })
  const problem = restore.error ? problemOf(restore.error) : null
  const close = () => {
    onClose()
    restore.reset()
  }
  return (
    <Modal opened={version !== null} onClose={close} title={version === null ? '' : `Restore version ${version}?`}>
      {version === null ? null : (
        <Stack>
          <Text size="sm">
            The agent’s name, description, instruction, metadata, photo, tools and workflows become those of version {version}. This is
            recorded as a new version; visibility, sharing and files stay as they are. Unsaved changes in the form are discarded.
          </Text>
          <ChangeProblem problem={problem} action="restore" />
          <Group justify="end">
            <Button variant="default" onClick={close}>
              Cancel
            </Button>
            <Button
              loading={restore.isPending}
              onClick={() => {
                // A restore to what the agent already holds makes no version (docs/api/versions.md).
                const before = agent.version
                restore.mutate(
                  { agent_uuid: agent.uuid, version },
                  {
                    onSuccess: (answer) =>
                      notifications.show({
                        color: 'green',
                        message:
                          answer.data.version === before
                            ? `The agent already holds version ${version}: nothing changed`
                            : `Version ${version} restored as version ${answer.data.version}`,
                      }),
                  },
                )
              }}
            >
              Restore version {version}
            </Button>
          </Group>
        </Stack>
      )}
    </Modal>
  )
}

/** The names of a snapshot's tools or workflows, one a line, or "None". */
function NameList({ names }: { names: string[] }) {
  if (names.length === 0) {
    return (
      <Text size="sm" c="dimmed">
        None
      </Text>
    )
  }
  return (
    <Stack gap={2}>
      {names.map((name, index) => (
        <Text key={index} size="sm" style={{ overflowWrap: 'anywhere' }}>
          {name}
        </Text>
      ))}
    </Stack>
  )
}
