/**
 * The workspace's budgets on the usage screen (`budgets.list`, `GET /api/v1/budgets`), 20 a page:
 * what each covers, its period, its spend against each limit (read live by the service), whether
 * it blocks or only alerts, and whether it is reached. Owners and admins create one, change one
 * (./BudgetModal.tsx) or delete one after a confirmation (`budgets.delete`).
 *
 * Everyone may read budgets. Whether the caller manages them is read from their role among the
 * workspace's members; when that is unknown the buttons are offered, and a refusal (403) is said
 * in words.
 */
import { Alert, Badge, Button, Group, Modal, Paper, Progress, Stack, Table, Text, Title } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useState } from 'react'
import { problemOf } from '../../lib/api.ts'
import { useSession } from '../../lib/session.tsx'
import { useWorkspaceMembers } from '../../lib/session-api.ts'
import { DataTable, ListStates } from '../../ui/ListTable.tsx'
import { describeStatus } from '../../ui/states.tsx'
import { useAgentChoices } from '../agents/api.ts'
import { useTokens } from '../tokens/api.ts'
import { useBudgets, useDeleteBudget, type Budget } from './api.ts'
import { BudgetModal, type TargetChoices } from './BudgetModal.tsx'
import { formatCost, formatCount } from './usage-model.ts'

const PER_PAGE = 20
const PERIOD_WORDS: Record<Budget['period'], string> = { day: 'Each day', week: 'Each week', month: 'Each month', total: 'In total' }
const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeZone: 'UTC' })

export function BudgetsSection() {
  const session = useSession()
  const [page, setPage] = useState(1)
  const [editing, setEditing] = useState<{ budget: Budget | null } | null>(null)
  const [deleting, setDeleting] = useState<Budget | null>(null)
  const budgets = useBudgets({ page, per_page: PER_PAGE })
  const members = useWorkspaceMembers(session.workspace, true)
  const agents = useAgentChoices()
  const tokens = useTokens({ per_page: 100 })
  const myRole = members.data?.data.find((member) => member.user.id === session.me.id)?.role
  const manages = myRole === undefined || myRole === 'owner' || myRole === 'admin'
  const choices: TargetChoices = {
    agents: (agents.data?.data ?? []).map((agent) => ({ value: agent.uuid, label: agent.name })),
    users: (members.data?.data ?? []).map((member) => ({
      value: String(member.user.id),
      label: `${member.user.name} <${member.user.email}>`,
    })),
    tokens: (tokens.data?.data ?? []).map((token) => ({ value: token.uuid, label: token.name })),
  }
  const targetName = (budget: Budget): string => {
    if (budget.scope === 'workspace') return 'The whole workspace'
    if (budget.scope === 'agent') return `Agent ${choices.agents.find((a) => a.value === budget.agent_uuid)?.label ?? budget.agent_uuid}`
    if (budget.scope === 'user')
      return `Member ${members.data?.data.find((m) => m.user.id === budget.user_id)?.user.name ?? `#${budget.user_id}`}`
    return `Token ${choices.tokens.find((t) => t.value === budget.access_token_uuid)?.label ?? budget.access_token_uuid}`
  }
  return (
    <Paper withBorder p="md" mt="xl" component="section" aria-labelledby="budgets-title">
      <Group justify="space-between" mb="xs" wrap="wrap">
        <Title order={3} size="h4" id="budgets-title">
          Budgets
        </Title>
        {manages ? <Button onClick={() => setEditing({ budget: null })}>New budget</Button> : null}
      </Group>
      <Text size="sm" c="dimmed" mb="sm">
        A budget limits what is spent in a period: a blocking one refuses model calls once a limit is reached, any budget raises alerts at
        its thresholds.{manages ? '' : ' Only owners and admins change budgets.'}
      </Text>
      <ListStates
        query={budgets}
        rows={budgets.data?.data}
        loading="Loading the budgets"
        empty={{ title: 'No budgets', detail: manages ? 'Add one to limit what this workspace spends on models.' : undefined }}
        paging={{ page, onChange: setPage }}
      >
        {(rows) => (
          <DataTable
            columns={['Budget', 'Covers', 'Period', 'Spent', 'When reached', ...(manages ? [{ hidden: 'Actions' }] : [])]}
            minWidth={900}
            label="Budgets"
          >
            {rows.map((budget) => (
              <BudgetRow
                key={budget.uuid}
                budget={budget}
                covers={targetName(budget)}
                manages={manages}
                onEdit={() => setEditing({ budget })}
                onDelete={() => setDeleting(budget)}
              />
            ))}
          </DataTable>
        )}
      </ListStates>
      <BudgetModal opened={editing !== null} budget={editing?.budget ?? null} choices={choices} onClose={() => setEditing(null)} />
      <DeleteBudgetModal budget={deleting} onClose={() => setDeleting(null)} />
    </Paper>
  )
}

function BudgetRow({
  budget,
  covers,
  manages,
  onEdit,
  onDelete,
}: {
  budget: Budget
  covers: string
  manages: boolean
  onEdit: () => void
  onDelete: () => void
}) {
  return (
    <Table.Tr>
      <Table.Td style={{ maxWidth: 240 }}>
        <Text fw={600} truncate="end" title={budget.name}>
          {budget.name}
        </Text>
        <Group gap={4}>
          {budget.exceeded ? (
            <Badge color="red" size="sm">
              reached
            </Badge>
          ) : null}
          {budget.is_active ? null : (
            <Badge color="gray" size="sm">
              inactive
            </Badge>
          )}
        </Group>
      </Table.Td>
      <Table.Td style={{ maxWidth: 220 }}>
        <Text size="sm" lineClamp={2} title={covers} style={{ overflowWrap: 'anywhere' }}>
          {covers}
        </Text>
      </Table.Td>
      <Table.Td>
        <Text size="sm">{PERIOD_WORDS[budget.period]}</Text>
        {budget.period_end ? (
          <Text size="xs" c="dimmed">
            until {dateFormat.format(new Date(budget.period_end))}
          </Text>
        ) : null}
      </Table.Td>
      <Table.Td style={{ minWidth: 220 }}>
        <Stack gap={6}>
          {budget.limit_cost !== null ? (
            <Spend
              label="Cost"
              spent={formatCost(budget.spent_cost)}
              limit={formatCost(budget.limit_cost)}
              ratio={budget.spent_cost / budget.limit_cost}
            />
          ) : null}
          {budget.limit_tokens !== null ? (
            <Spend
              label="Tokens"
              spent={formatCount(budget.spent_tokens)}
              limit={formatCount(budget.limit_tokens)}
              ratio={budget.spent_tokens / budget.limit_tokens}
            />
          ) : null}
        </Stack>
      </Table.Td>
      <Table.Td>
        <Text size="sm">{budget.action === 'block' ? 'Block' : 'Alert only'}</Text>
        <Text size="xs" c="dimmed">
          alerts at {budget.alert_thresholds.map((t) => `${t}%`).join(', ')}
        </Text>
      </Table.Td>
      {manages ? (
        <Table.Td>
          <Group gap={4} wrap="nowrap">
            <Button size="xs" variant="light" onClick={onEdit} aria-label={`Change the budget ${budget.name}`}>
              Change
            </Button>
            <Button size="xs" color="red" variant="light" onClick={onDelete} aria-label={`Delete the budget ${budget.name}`}>
              Delete
            </Button>
          </Group>
        </Table.Td>
      ) : null}
    </Table.Tr>
  )
}

/** One limit's spend: "$0.50 of $1.00" over a bar, red once reached. */
function Spend({ label, spent, limit, ratio }: { label: string; spent: string; limit: string; ratio: number }) {
  const percent = Math.min(100, Math.round(ratio * 100))
  return (
    <div>
      <Text size="xs">
        {label}: {spent} of {limit}
      </Text>
      <Progress
        value={percent}
        color={ratio >= 1 ? 'red' : ratio >= 0.8 ? 'orange' : 'blue'}
        size="sm"
        aria-label={`${label} spent: ${percent}% of the limit`}
      />
    </div>
  )
}

function DeleteBudgetModal({ budget, onClose }: { budget: Budget | null; onClose: () => void }) {
  const remove = useDeleteBudget({
    onSuccess: () => {
      notifications.show({ color: 'green', message: `Budget “${budget?.name ?? ''}” deleted` })
      onClose()
    },
  })
  const problem = remove.error ? problemOf(remove.error) : null
  const close = () => {
    remove.reset()
    onClose()
  }
  return (
    <Modal opened={budget !== null} onClose={close} title="Delete this budget?">
      {budget ? (
        <Stack>
          <Text size="sm">“{budget.name}” stops limiting and alerting at once. The usage it counted stays in the usage figures.</Text>
          {problem ? (
            <Alert color="red" role="alert" title={describeStatus(problem).title}>
              {describeStatus(problem).detail}
            </Alert>
          ) : null}
          <Group justify="end">
            <Button variant="default" onClick={close}>
              Cancel
            </Button>
            <Button color="red" loading={remove.isPending} onClick={() => remove.mutate({ budget_uuid: budget.uuid })}>
              Delete budget
            </Button>
          </Group>
        </Stack>
      ) : null}
    </Modal>
  )
}
