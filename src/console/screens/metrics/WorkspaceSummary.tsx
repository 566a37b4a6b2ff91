/**
 * The current workspace at a glance: the live counts of `metrics.workspace`
 * (`GET /api/v1/workspaces/{workspace_uuid}/metrics`, not cached) as stat cards, one term and
 * its figure each.
 */
import { Paper, SimpleGrid, Text, Title } from '@mantine/core'
import type { RouterOutputs } from '../../lib/api.ts'
import { useSession } from '../../lib/session.tsx'
import { ErrorNotice, Loading } from '../../ui/states.tsx'
import { useWorkspaceSummary } from './api.ts'
import { formatValue } from './metrics-model.ts'

type Summary = RouterOutputs['metrics']['workspace']['data']

const CARDS: [keyof Summary, string][] = [
  ['agents', 'Agents'],
  ['prompts', 'Prompts'],
  ['workflows', 'Workflows'],
  ['tools', 'Tools'],
  ['accounts', 'Accounts'],
  ['threads', 'Threads'],
  ['messages', 'Messages'],
  ['workflow_executions', 'Workflow executions'],
  ['members', 'Members'],
  ['runs', 'Runs'],
  ['tokens', 'Tokens used'],
]

export function WorkspaceSummary() {
  const { workspace, workspaces } = useSession()
  const summary = useWorkspaceSummary(workspace)
  const name = workspaces.find((w) => w.uuid === workspace)?.name ?? 'This workspace'
  return (
    <section aria-labelledby="workspace-summary-title">
      <Title order={3} size="h4" mb="xs" id="workspace-summary-title" style={{ overflowWrap: 'anywhere' }}>
        Workspace summary: {name}
      </Title>
      {summary.isPending ? <Loading label="Loading the workspace summary" /> : null}
      {summary.error ? <ErrorNotice error={summary.error} onRetry={() => void summary.refetch()} /> : null}
      {summary.data ? (
        <SimpleGrid component="dl" cols={{ base: 2, xs: 3, md: 4, lg: 6 }} spacing="sm" m={0} mb="lg">
          {CARDS.map(([key, label]) => (
            <Paper key={key} withBorder p="sm" radius="md">
              <Text component="dt" size="xs" c="dimmed" tt="uppercase" fw={600}>
                {label}
              </Text>
              <Text component="dd" fz="xl" fw={700} m={0}>
                {formatValue(summary.data.data[key])}
              </Text>
            </Paper>
          ))}
        </SimpleGrid>
      ) : null}
    </section>
  )
}
