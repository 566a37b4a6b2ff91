/**
 * Two evaluations of one dataset compared (`evaluations.compare`,
 * `/evaluations/compare?base=&candidate=`): each scorer both used with the base's and the
 * candidate's mean score and the difference, and the items that passed in one and not in the
 * other (input, scorer, base → candidate).
 */
import { Anchor, Group, Stack, Table, Text } from '@mantine/core'
import { Link, useSearchParams } from 'react-router'
import { ScreenTitle } from '../../ui/ListControls.tsx'
import { DataTable } from '../../ui/ListTable.tsx'
import { Empty, ErrorNotice, Loading } from '../../ui/states.tsx'
import { scorerLabel, useComparison, type Comparison } from './api.ts'
import { decimal } from './EvaluationScreen.tsx'
import { passWord, StatusBadge } from './parts.tsx'

export default function CompareScreen() {
  const [params] = useSearchParams()
  const base = params.get('base') ?? ''
  const candidate = params.get('candidate') ?? ''
  const comparison = useComparison(base, candidate)
  return (
    <>
      <Anchor component={Link} to={base ? `/evaluations/${base}` : '/evaluations'} size="sm">
        ← The base evaluation
      </Anchor>
      <ScreenTitle title="Comparison" />
      {comparison.isPending ? <Loading label="Comparing" /> : null}
      {comparison.error ? <ErrorNotice error={comparison.error} onRetry={() => void comparison.refetch()} /> : null}
      {comparison.data ? <ComparisonView comparison={comparison.data.data} /> : null}
    </>
  )
}

const signed = (value: number | null) => (value == null ? '—' : `${value > 0 ? '+' : ''}${value.toFixed(4)}`)

function ComparisonView({ comparison }: { comparison: Comparison }) {
  const { base, candidate } = comparison
  return (
    <Stack>
      <Stack gap={4}>
        {[
          ['Base', base],
          ['Candidate', candidate],
        ].map(([role, evaluation]) =>
          typeof evaluation === 'string' ? null : (
            <Group key={role as string} gap="xs" wrap="wrap">
              <Text size="sm" fw={600}>
                {role as string}:
              </Text>
              <Anchor component={Link} to={`/evaluations/${evaluation.uuid}`} size="sm" style={{ overflowWrap: 'anywhere' }}>
                {evaluation.name}
              </Anchor>
              <Text size="sm" c="dimmed">
                {evaluation.agent.name}@v{evaluation.agent_version}
              </Text>
              <StatusBadge status={evaluation.status} />
            </Group>
          ),
        )}
      </Stack>
      {comparison.scorers.length === 0 ? (
        <Empty title="No scorer in common">The two evaluations used no scorer with the same type and settings.</Empty>
      ) : (
        <DataTable columns={['Scorer', 'Base mean', 'Candidate mean', 'Difference']} minWidth={480} label="Scorers compared">
          {comparison.scorers.map((entry, index) => (
            <Table.Tr key={index}>
              <Table.Td style={{ maxWidth: 260, overflowWrap: 'anywhere' }}>{scorerLabel(entry.scorer)}</Table.Td>
              <Table.Td>{decimal(entry.base_mean)}</Table.Td>
              <Table.Td>{decimal(entry.candidate_mean)}</Table.Td>
              <Table.Td>
                <Text
                  component="span"
                  size="sm"
                  c={entry.difference == null || entry.difference === 0 ? undefined : entry.difference > 0 ? 'green' : 'red'}
                >
                  {signed(entry.difference)}
                </Text>
              </Table.Td>
            </Table.Tr>
          ))}
        </DataTable>
      )}
      <Text fw={600}>Changed items</Text>
      {comparison.changed_items.length === 0 ? (
        <Empty title="No item changed">Every item passed or failed each scorer in both.</Empty>
      ) : (
        <DataTable columns={['Input', 'Scorer', 'Base → candidate']} minWidth={480} label="Changed items">
          {comparison.changed_items.map((change, index) => (
            <Table.Tr key={index}>
              <Table.Td style={{ maxWidth: 320 }}>
                <Text size="sm" lineClamp={3} style={{ overflowWrap: 'anywhere' }}>
                  {change.item.input}
                </Text>
              </Table.Td>
              <Table.Td style={{ maxWidth: 220, overflowWrap: 'anywhere' }}>{scorerLabel(change.scorer)}</Table.Td>
              <Table.Td>
                {passWord(change.base_passed)} → {passWord(change.candidate_passed)}
              </Table.Td>
            </Table.Tr>
          ))}
        </DataTable>
      )}
    </Stack>
  )
}
