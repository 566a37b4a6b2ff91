/**
 * Usage and budgets (docs/api/usage-and-budgets.md): the workspace's model usage over a range of
 * days (`usage.summary`, `GET /api/v1/usage`): its totals, tokens per day, week or month stacked
 * by agent, user, model or access token, cost per period, and a table of the same breakdown;
 * filtered by agent, user and model. Under it the budgets with their spend against their limits
 * (./BudgetsSection.tsx, `budgets.*`).
 *
 * Owners and admins see everyone's usage; a member sees their own (the service decides). Three
 * groupings are read (period, period and breakdown, breakdown alone), batched in one request.
 * The charts' styles are imported here, so they load with this screen only.
 */
import '@mantine/charts/styles.css'
import '@mantine/dates/styles.css'
import { BarChart } from '@mantine/charts'
import { Alert, Box, Paper, SegmentedControl, Select, SimpleGrid, Stack, Table, Text, TextInput, Title } from '@mantine/core'
import { DateInput } from '@mantine/dates'
import { useDebouncedValue } from '@mantine/hooks'
import { useState } from 'react'
import { problemOf } from '../../lib/api.ts'
import { useSession } from '../../lib/session.tsx'
import { useWorkspaceMembers } from '../../lib/session-api.ts'
import { fieldError, otherIssues } from '../../ui/forms.ts'
import { ScreenTitle } from '../../ui/ListControls.tsx'
import { Empty, ErrorNotice, Loading } from '../../ui/states.tsx'
import { useAgentChoices } from '../agents/api.ts'
import { useUsage, type UsageAnswer } from './api.ts'
import { BudgetsSection } from './BudgetsSection.tsx'
import {
  BREAKDOWNS,
  breakdownLabel,
  defaultChoices,
  formatCost,
  formatCount,
  periodsBetween,
  PERIODS,
  stackedSeries,
  usageInput,
  type Breakdown,
  type Period,
  type UsageChoices,
} from './usage-model.ts'

/** The fields the controls show issues at; the rest of a 400 goes in one alert. */
const CONTROL_FIELDS = ['group_by', 'date_from', 'date_to', 'agent_uuid', 'user_id', 'model']

export default function UsageScreen() {
  const session = useSession()
  const [choices, setChoices] = useState<UsageChoices>(() => defaultChoices())
  const change = (next: Partial<UsageChoices>) => setChoices((current) => ({ ...current, ...next }))
  const [debouncedModel] = useDebouncedValue(choices.model, 300)
  const asked = { ...choices, model: debouncedModel }
  const byPeriod = useUsage(usageInput(asked, [choices.period]))
  const stacked = useUsage(usageInput(asked, [choices.period, choices.breakdown]))
  const byBreakdown = useUsage(usageInput(asked, [choices.breakdown]))
  const agents = useAgentChoices()
  const members = useWorkspaceMembers(session.workspace, true)
  const failed = byPeriod.error ?? stacked.error ?? byBreakdown.error
  const problem = failed ? problemOf(failed) : null
  const unclaimed = otherIssues(problem, CONTROL_FIELDS)
  const breakdown = BREAKDOWNS.find((b) => b.value === choices.breakdown)!
  const periodWord = choices.period === 'day' ? 'day' : choices.period === 'week' ? 'week' : 'month'
  const periods = periodsBetween(choices.dateFrom, choices.dateTo, choices.period)
  const busy = byPeriod.isPlaceholderData || stacked.isPlaceholderData || byBreakdown.isPlaceholderData

  return (
    <>
      <ScreenTitle title="Usage" />
      <Text c="dimmed" size="sm" mb="md">
        Tokens and US dollars spent on models in this workspace: runs of agents and prompts, generation, memory and embeddings. Days are
        UTC.
      </Text>
      <Stack gap="sm" mb="md" role="group" aria-label="Usage choices">
        <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="sm">
          <div>
            <Text size="sm" fw={500} mb={4} id="usage-period">
              Per
            </Text>
            <SegmentedControl
              aria-labelledby="usage-period"
              data={PERIODS}
              value={choices.period}
              onChange={(value) => change({ period: value as Period })}
              fullWidth
            />
          </div>
          <div>
            <Text size="sm" fw={500} mb={4} id="usage-breakdown">
              Broken down by
            </Text>
            <SegmentedControl
              aria-labelledby="usage-breakdown"
              data={BREAKDOWNS.map(({ value, label }) => ({ value, label }))}
              value={choices.breakdown}
              onChange={(value) => change({ breakdown: value as Breakdown })}
              fullWidth
            />
          </div>
        </SimpleGrid>
        <SimpleGrid cols={{ base: 1, xs: 2, md: 5 }} spacing="sm">
          <DateInput
            label="From"
            description="First day, UTC"
            clearButtonProps={{ 'aria-label': 'Clear the first day' }}
            placeholder="YYYY-MM-DD"
            valueFormat="YYYY-MM-DD"
            clearable
            value={choices.dateFrom}
            onChange={(value) => change({ dateFrom: value })}
            error={fieldError(problem, 'date_from')}
            popoverProps={{ withinPortal: true }}
          />
          <DateInput
            label="To"
            description="Last day, UTC"
            clearButtonProps={{ 'aria-label': 'Clear the last day' }}
            placeholder="YYYY-MM-DD"
            valueFormat="YYYY-MM-DD"
            clearable
            value={choices.dateTo}
            onChange={(value) => change({ dateTo: value })}
            error={fieldError(problem, 'date_to')}
            popoverProps={{ withinPortal: true }}
          />
          <Select
            label="Agent"
            description="Only this agent's usage"
            placeholder="Every agent"
            data={(agents.data?.data ?? []).map((agent) => ({ value: agent.uuid, label: agent.name }))}
            value={choices.agentUuid}
            onChange={(value) => change({ agentUuid: value })}
            clearable
            searchable
            error={fieldError(problem, 'agent_uuid')}
            comboboxProps={{ withinPortal: true }}
          />
          <Select
            label="User"
            description="Only this member's usage"
            placeholder="Everyone"
            data={(members.data?.data ?? []).map((member) => ({ value: String(member.user.id), label: member.user.name }))}
            value={choices.userId}
            onChange={(value) => change({ userId: value })}
            clearable
            searchable
            error={fieldError(problem, 'user_id')}
            comboboxProps={{ withinPortal: true }}
          />
          <TextInput
            label="Model"
            description="Its slug: gpt-4o-mini"
            placeholder="Every model"
            value={choices.model}
            onChange={(event) => change({ model: event.currentTarget.value })}
            error={fieldError(problem, 'model')}
          />
        </SimpleGrid>
      </Stack>

      {problem && problem.status === 400 ? (
        unclaimed.length ? (
          <Alert color="red" title="The service refused these choices" role="alert" my="sm">
            {unclaimed.join('; ')}
          </Alert>
        ) : null
      ) : failed ? (
        <ErrorNotice
          error={failed}
          onRetry={() => {
            void byPeriod.refetch()
            void stacked.refetch()
            void byBreakdown.refetch()
          }}
        />
      ) : null}
      {byPeriod.isPending ? <Loading label="Adding up the usage" /> : null}
      {byPeriod.data && stacked.data && byBreakdown.data && !failed ? (
        <section aria-label="Usage" style={{ opacity: busy ? 0.6 : 1 }} aria-busy={busy}>
          <Totals answer={byPeriod.data} />
          {byPeriod.data.data.length === 0 ? (
            <Empty title="No usage">Nothing was spent on models in this range with these filters.</Empty>
          ) : (
            <>
              <StackedChart
                title={`Tokens per ${periodWord}, by ${breakdown.noun}`}
                {...stackedSeries(stacked.data.data, choices.breakdown, 'total_tokens', periods)}
                format={formatCount}
              />
              <StackedChart
                title={`Cost per ${periodWord} (USD), by ${breakdown.noun}`}
                {...stackedSeries(stacked.data.data, choices.breakdown, 'cost', periods)}
                format={formatCost}
              />
              <BreakdownTable answer={byBreakdown.data} breakdown={choices.breakdown} label={`Usage by ${breakdown.noun}`} />
            </>
          )}
        </section>
      ) : null}

      <BudgetsSection />
    </>
  )
}

function Totals({ answer }: { answer: UsageAnswer }) {
  const totals = answer.meta.totals
  const cards = [
    { label: 'Runs', value: formatCount(totals.runs) },
    {
      label: 'Tokens',
      value: formatCount(totals.total_tokens),
      detail: `${formatCount(totals.prompt_tokens)} in, ${formatCount(totals.completion_tokens)} out`,
    },
    { label: 'Cost', value: formatCost(totals.cost), detail: answer.meta.currency },
  ]
  return (
    <SimpleGrid cols={{ base: 1, xs: 3 }} spacing="sm" mb="md">
      {cards.map((card) => (
        <Paper key={card.label} withBorder p="md" radius="md" role="group" aria-label={`Total ${card.label.toLowerCase()}`}>
          <Text size="sm" c="dimmed">
            {card.label}
          </Text>
          <Text fz={28} fw={700} lh={1.2} style={{ overflowWrap: 'anywhere' }}>
            {card.value}
          </Text>
          {card.detail ? (
            <Text size="xs" c="dimmed">
              {card.detail}
            </Text>
          ) : null}
        </Paper>
      ))}
    </SimpleGrid>
  )
}

function StackedChart({
  title,
  data,
  series,
  format,
}: {
  title: string
  data: Record<string, string | number>[]
  series: { name: string; label: string; color: string }[]
  format: (value: number) => string
}) {
  return (
    // Hidden overflow: a tooltip left where the pointer was before the window narrowed must not widen the page.
    <Paper withBorder p="md" mb="md" radius="md" style={{ overflow: 'hidden' }}>
      <Text size="sm" c="dimmed" mb="xs">
        {title}
      </Text>
      {/* The table under the charts lists the same usage: to assistive technology each chart is one labelled image. */}
      <Box role="img" aria-label={`Chart of ${title.toLowerCase()}; the table below lists the totals.`}>
        <BarChart
          h={260}
          data={data}
          dataKey="period"
          type="stacked"
          series={series}
          valueFormatter={format}
          tickLine="y"
          withLegend
          legendProps={{ verticalAlign: 'bottom' }}
        />
      </Box>
    </Paper>
  )
}

function BreakdownTable({ answer, breakdown, label }: { answer: UsageAnswer; breakdown: Breakdown; label: string }) {
  const name = BREAKDOWNS.find((b) => b.value === breakdown)!.label
  return (
    <>
      <Title order={3} size="h4" mb="xs">
        {label}
      </Title>
      <Table.ScrollContainer minWidth={640}>
        <Table striped withTableBorder aria-label={label}>
          <Table.Thead>
            <Table.Tr>
              <Table.Th scope="col">{name}</Table.Th>
              <Table.Th scope="col" ta="right">
                Runs
              </Table.Th>
              <Table.Th scope="col" ta="right">
                Prompt tokens
              </Table.Th>
              <Table.Th scope="col" ta="right">
                Completion tokens
              </Table.Th>
              <Table.Th scope="col" ta="right">
                Total tokens
              </Table.Th>
              <Table.Th scope="col" ta="right">
                Cost
              </Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {answer.data.map((row, index) => (
              <Table.Tr key={index}>
                <Table.Th scope="row" fw={400} style={{ maxWidth: 280, overflowWrap: 'anywhere' }}>
                  {breakdownLabel(row, breakdown)}
                </Table.Th>
                <Table.Td ta="right">{formatCount(row.runs)}</Table.Td>
                <Table.Td ta="right">{formatCount(row.prompt_tokens)}</Table.Td>
                <Table.Td ta="right">{formatCount(row.completion_tokens)}</Table.Td>
                <Table.Td ta="right">{formatCount(row.total_tokens)}</Table.Td>
                <Table.Td ta="right">{formatCost(row.cost)}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
          <Table.Tfoot>
            <Table.Tr>
              <Table.Th scope="row">Total</Table.Th>
              <Table.Td ta="right">{formatCount(answer.meta.totals.runs)}</Table.Td>
              <Table.Td ta="right">{formatCount(answer.meta.totals.prompt_tokens)}</Table.Td>
              <Table.Td ta="right">{formatCount(answer.meta.totals.completion_tokens)}</Table.Td>
              <Table.Td ta="right" fw={700}>
                {formatCount(answer.meta.totals.total_tokens)}
              </Table.Td>
              <Table.Td ta="right" fw={700}>
                {formatCost(answer.meta.totals.cost)}
              </Table.Td>
            </Table.Tr>
          </Table.Tfoot>
        </Table>
      </Table.ScrollContainer>
    </>
  )
}
