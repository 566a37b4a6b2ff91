/**
 * Approvals (docs/api/runs.md, "Approvals"): the tool calls that wait for a person
 * (`approvals.list`, `GET /api/v1/approvals`): the caller's runs', and every run's of the
 * workspace for an owner or admin. Pending ones by default, or all of them, newest first; each
 * with its tool, agent, arguments, expiry and status (who decided, when, why). A pending one is
 * approved, with its arguments as they are or edited, or denied, in ./DecisionModal.tsx.
 *
 * An approval decided here stays in the list with its new status until the filter or the page
 * changes, so a decision shows where it was made even in the pending view; so does one that
 * someone else decided first (a 409), read again.
 */
import { Badge, Button, Code, Group, SegmentedControl, Stack, Table, Text } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useState } from 'react'
import { useSession } from '../../lib/session.tsx'
import { ScreenTitle, useFilter } from '../../ui/ListControls.tsx'
import { DataTable, ListStates } from '../../ui/ListTable.tsx'
import { useAgentChoices } from '../agents/api.ts'
import { useApprovals, useFetchApproval, type Approval } from './api.ts'
import { DecisionModal, type Decision } from './DecisionModal.tsx'

type StatusFilter = 'pending' | 'all'

const dateTimeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })
const relativeFormat = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' })

const STATUS_COLORS: Record<Approval['status'], string> = {
  pending: 'yellow',
  approved: 'green',
  denied: 'red',
  expired: 'gray',
  canceled: 'gray',
}

/** `at` from now in words, to the largest whole unit ("in 23 hours", "5 minutes ago"). */
function fromNow(at: string): string {
  const seconds = Math.round((new Date(at).getTime() - Date.now()) / 1000)
  const units: [Intl.RelativeTimeFormatUnit, number][] = [
    ['day', 86_400],
    ['hour', 3_600],
    ['minute', 60],
  ]
  for (const [unit, size] of units) if (Math.abs(seconds) >= size) return relativeFormat.format(Math.trunc(seconds / size), unit)
  return relativeFormat.format(seconds, 'second')
}

/** The page's rows and the approvals decided from it, newest first (the list's order). */
function mergeKept(rows: Approval[] | undefined, kept: Approval[]): Approval[] | undefined {
  if (!rows) return undefined
  const fresh = new Set(rows.map((row) => row.uuid))
  return [...rows, ...kept.filter((approval) => !fresh.has(approval.uuid))].sort((a, b) => b.created_at.localeCompare(a.created_at))
}

export default function ApprovalsScreen() {
  // A workspace switch starts the screen afresh: the approvals decided here belong to the old one.
  const { workspace } = useSession()
  return <Approvals key={workspace} />
}

function Approvals() {
  const [page, setPageOnly] = useState(1)
  const [kept, setKept] = useState<Approval[]>([])
  const setPage = (next: number) => {
    setPageOnly(next)
    setKept([])
  }
  const [status, setStatus] = useFilter<StatusFilter>('pending', setPage)
  const [decision, setDecision] = useState<Decision | null>(null)
  const fetchApproval = useFetchApproval()
  const approvals = useApprovals({ page, per_page: 20, ...(status === 'pending' ? { status } : {}) })
  const keep = (approval: Approval) => setKept((list) => [...list.filter((a) => a.uuid !== approval.uuid), approval])
  const decided = (approval: Approval) => {
    keep(approval)
    notifications.show({ color: approval.status === 'approved' ? 'green' : 'red', message: `${approval.tool_name}: ${approval.status}` })
  }
  const conflict = (approvalUuid: string) => {
    fetchApproval(approvalUuid).then(
      (answer) => keep(answer.data),
      () => {},
    )
  }
  return (
    <>
      <ScreenTitle title="Approvals" />
      <Text c="dimmed" size="sm" mb="md">
        Tool calls that need a person wait here; the run goes on once its calls are decided. A call nobody decides expires and counts as
        denied.
      </Text>
      <Group mb="md">
        <SegmentedControl
          aria-label="Status"
          value={status}
          onChange={(value) => setStatus(value === 'all' ? 'all' : 'pending')}
          data={[
            { value: 'pending', label: 'Pending' },
            { value: 'all', label: 'All' },
          ]}
        />
      </Group>
      <DecisionModal decision={decision} onClose={() => setDecision(null)} onDecided={decided} onConflict={conflict} />
      <ListStates
        query={approvals}
        rows={mergeKept(approvals.data?.data, kept)}
        loading="Loading approvals"
        empty={
          status === 'pending'
            ? { title: 'Nothing waits for you', detail: 'Calls of tools that require approval show here while their runs wait.' }
            : { title: 'No approvals yet', detail: 'They come from tools and linked workflows that require approval.' }
        }
        paging={{ page, onChange: setPage }}
      >
        {(rows) => <ApprovalTable approvals={rows} onDecide={setDecision} />}
      </ListStates>
    </>
  )
}

function ApprovalTable({ approvals, onDecide }: { approvals: Approval[]; onDecide: (decision: Decision) => void }) {
  const agents = useAgentChoices()
  const agentName = (uuid: string | null) =>
    uuid ? (agents.data?.data.find((agent) => agent.uuid === uuid)?.name ?? uuid) : 'Deleted agent'
  return (
    <DataTable columns={['Tool', 'Agent', 'Arguments', 'Expires', 'Status', { hidden: 'Actions' }]} minWidth={960} label="Approvals">
      {approvals.map((approval) => (
        <Table.Tr key={approval.uuid}>
          <Table.Td style={{ maxWidth: 200 }}>
            <Text fw={600} truncate="end" title={approval.tool_name}>
              {approval.tool_name}
            </Text>
            <Text size="xs" c="dimmed">
              {approval.tool_kind === 'workflow' ? 'workflow' : `${approval.tool_kind} tool`}, asked {fromNow(approval.created_at)}
            </Text>
          </Table.Td>
          <Table.Td style={{ maxWidth: 200 }}>
            <Text size="sm" truncate="end" title={agentName(approval.agent_uuid)}>
              {agentName(approval.agent_uuid)}
            </Text>
          </Table.Td>
          <Table.Td style={{ maxWidth: 320 }}>
            <Code block style={{ maxHeight: 160, overflow: 'auto', whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>
              {JSON.stringify(approval.arguments, null, 2)}
            </Code>
          </Table.Td>
          <Table.Td miw={140}>
            <Text
              size="sm"
              title={dateTimeFormat.format(new Date(approval.expires_at))}
              c={approval.status === 'pending' ? undefined : 'dimmed'}
            >
              {approval.status === 'pending' ? fromNow(approval.expires_at) : dateTimeFormat.format(new Date(approval.expires_at))}
            </Text>
          </Table.Td>
          <Table.Td style={{ maxWidth: 240 }}>
            <ApprovalStatus approval={approval} />
          </Table.Td>
          <Table.Td>
            {approval.status === 'pending' ? (
              <Group gap={4} wrap="nowrap">
                {DECISIONS.map(({ kind, label, color }) => (
                  <Button key={kind} size="xs" color={color} variant="light" aria-label={`${label} ${approval.tool_name}`} onClick={() => onDecide({ approval, kind })}>
                    {label}
                  </Button>
                ))}
              </Group>
            ) : null}
          </Table.Td>
        </Table.Tr>
      ))}
    </DataTable>
  )
}

/** The two decisions a pending call offers, as buttons. */
const DECISIONS = [
  { kind: 'approve', label: 'Approve', color: 'green' },
  { kind: 'deny', label: 'Deny', color: 'red' },
] as const

/** The status, and for a decided call who decided it, when, and why. */
function ApprovalStatus({ approval }: { approval: Approval }) {
  return (
    <Stack gap={2} align="flex-start">
      <Badge variant="light" color={STATUS_COLORS[approval.status]}>
        {approval.status}
      </Badge>
      {approval.decided_at ? (
        <Text size="xs" c="dimmed">
          {approval.decided_by ? `by ${approval.decided_by.name}, ` : ''}
          {dateTimeFormat.format(new Date(approval.decided_at))}
        </Text>
      ) : null}
      {approval.reason ? (
        <Text size="xs" lineClamp={3} title={approval.reason} style={{ overflowWrap: 'anywhere' }}>
          “{approval.reason}”
        </Text>
      ) : null}
    </Stack>
  )
}
