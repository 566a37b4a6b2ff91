/**
 * One evaluation (`evaluations.retrieve`): its status, progress, the per-scorer summary (mean
 * score and pass rate), usage and latency percentiles, read again every 2 s while it is queued or
 * running; "Cancel" after a confirmation (`evaluations.cancel`); "Compare with…" picks another
 * evaluation of the same dataset and opens the comparison (./CompareScreen.tsx); the results,
 * 20 a page in dataset order (`evaluations.results`): input, output, status and each scorer's
 * pass or fail, with its reason in a tooltip (and for screen readers in the cell).
 */
import {
  Anchor,
  Badge,
  Button,
  Group,
  Modal,
  Paper,
  Progress,
  Select,
  SimpleGrid,
  Stack,
  Table,
  Text,
  Tooltip,
  VisuallyHidden,
} from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useState } from 'react'
import { Link, useNavigate, useParams } from 'react-router'
import { ScreenTitle } from '../../ui/ListControls.tsx'
import { DataTable, ListStates } from '../../ui/ListTable.tsx'
import { ErrorNotice, Loading } from '../../ui/states.tsx'
import {
  scorerLabel,
  unfinished,
  useCancelEvaluation,
  useEvaluation,
  useEvaluations,
  useResults,
  type Evaluation,
  type EvaluationResult,
} from './api.ts'
import { Confirm } from './Confirm.tsx'
import { passWord, StatusBadge } from './parts.tsx'

export default function EvaluationScreen() {
  const { evaluationUuid = '' } = useParams()
  const evaluation = useEvaluation(evaluationUuid)
  if (evaluation.isPending) return <Loading label="Loading the evaluation" />
  if (evaluation.error) return <ErrorNotice error={evaluation.error} onRetry={() => void evaluation.refetch()} />
  return <EvaluationView evaluation={evaluation.data.data} />
}

/** A 0..1 share as a percentage, or a dash. */
export const percent = (value: number | null | undefined) => (value == null ? '—' : `${(value * 100).toFixed(1)}%`)
export const decimal = (value: number | null | undefined) => (value == null ? '—' : value.toFixed(4))

function EvaluationView({ evaluation }: { evaluation: Evaluation }) {
  const [page, setPage] = useState(1)
  const [canceling, setCanceling] = useState(false)
  const [comparing, setComparing] = useState(false)
  const live = unfinished(evaluation)
  const results = useResults(evaluation, page)
  const cancel = useCancelEvaluation({
    onSuccess: () => {
      notifications.show({ message: `Evaluation ${evaluation.name} canceled` })
      setCanceling(false)
    },
  })
  const { total, done, failed } = evaluation.progress
  return (
    <>
      <Anchor component={Link} to="/evaluations" size="sm">
        ← Evaluations
      </Anchor>
      <ScreenTitle title={evaluation.name}>
        <Button variant="default" onClick={() => setComparing(true)}>
          Compare with…
        </Button>
        {live ? (
          <Button color="red" variant="light" onClick={() => setCanceling(true)}>
            Cancel evaluation
          </Button>
        ) : null}
      </ScreenTitle>
      <Confirm
        opened={canceling}
        title="Cancel this evaluation?"
        action="Cancel it"
        pending={cancel.isPending}
        error={cancel.error}
        onConfirm={() => cancel.mutate({ evaluation_uuid: evaluation.uuid })}
        onClose={() => {
          cancel.reset()
          setCanceling(false)
        }}
      >
        Items not started are canceled and the runs under way are stopped. Items already scored keep their results.
      </Confirm>
      <CompareModal evaluation={evaluation} opened={comparing} onClose={() => setComparing(false)} />
      <SimpleGrid cols={{ base: 1, sm: 2 }} mb="md">
        <Paper withBorder p="sm">
          <Stack gap={6}>
            <Group gap="xs">
              <Text size="sm">Status</Text>
              <StatusBadge status={evaluation.status} />
            </Group>
            <Text size="sm">
              Agent:{' '}
              <Anchor component={Link} to={`/agents/${evaluation.agent.uuid}`} size="sm">
                {evaluation.agent.name}
              </Anchor>{' '}
              at version {evaluation.agent_version}
            </Text>
            <Text size="sm">
              Dataset:{' '}
              <Anchor component={Link} to={`/datasets/${evaluation.dataset.uuid}`} size="sm">
                {evaluation.dataset.name}
              </Anchor>
            </Text>
            <Text size="sm" aria-label="Progress">
              {done} of {total} items done{failed ? `, ${failed} failed` : ''}
            </Text>
            <Progress value={total ? (done / total) * 100 : 0} aria-label="Items done" />
            {evaluation.error ? (
              <Text size="sm" c="red">
                {evaluation.error}
              </Text>
            ) : null}
          </Stack>
        </Paper>
        <Paper withBorder p="sm">
          <Stack gap={6}>
            <Text size="sm">
              Usage: {evaluation.usage.total_tokens} tokens, ${evaluation.usage.cost.toFixed(6)}
            </Text>
            <Text size="sm">
              Latency: p50 {evaluation.latency_ms.p50 ?? '—'} ms, p95 {evaluation.latency_ms.p95 ?? '—'} ms
            </Text>
            <Text size="sm">Concurrency: {evaluation.concurrency}</Text>
            <Text size="sm">Created {new Date(evaluation.created_at).toLocaleString()}</Text>
          </Stack>
        </Paper>
      </SimpleGrid>
      <DataTable columns={['Scorer', 'Mean score', 'Pass rate']} minWidth={320} label="Summary">
        {evaluation.summary.map((entry, index) => (
          <Table.Tr key={index}>
            <Table.Td style={{ maxWidth: 320, overflowWrap: 'anywhere' }}>{scorerLabel(entry.scorer)}</Table.Td>
            <Table.Td>{decimal(entry.mean_score)}</Table.Td>
            <Table.Td>{percent(entry.pass_rate)}</Table.Td>
          </Table.Tr>
        ))}
      </DataTable>
      <Text fw={600} mt="lg" mb="xs">
        Results
      </Text>
      <ListStates
        query={results}
        rows={results.data?.data}
        loading="Loading the results"
        empty={{ title: 'No results' }}
        paging={{ page, onChange: setPage }}
      >
        {(rows) => (
          <DataTable columns={['Input', 'Output', 'Status', ...evaluation.scorers.map(scorerLabel)]} minWidth={720} label="Results">
            {rows.map((result) => (
              <ResultRow key={result.item.uuid} result={result} scorers={evaluation.scorers.length} />
            ))}
          </DataTable>
        )}
      </ListStates>
    </>
  )
}

function ResultRow({ result, scorers }: { result: EvaluationResult; scorers: number }) {
  return (
    <Table.Tr>
      <Table.Td style={{ maxWidth: 260 }}>
        <Text size="sm" lineClamp={3} style={{ overflowWrap: 'anywhere' }}>
          {result.item.input}
        </Text>
      </Table.Td>
      <Table.Td style={{ maxWidth: 300 }}>
        <Text size="sm" lineClamp={3} c={result.output ? undefined : 'dimmed'} style={{ overflowWrap: 'anywhere' }}>
          {result.output ?? result.error ?? '—'}
        </Text>
      </Table.Td>
      <Table.Td>
        <StatusBadge status={result.status} />
      </Table.Td>
      {Array.from({ length: scorers }, (_, index) => {
        const score = result.scores[index]
        return (
          <Table.Td key={index}>
            {score ? (
              <Tooltip label={score.reason} multiline w={260} withinPortal>
                <Badge color={score.passed ? 'green' : 'red'} variant="light" tabIndex={0}>
                  {passWord(score.passed)}
                  <VisuallyHidden>: {score.reason}</VisuallyHidden>
                </Badge>
              </Tooltip>
            ) : (
              <Text size="sm" c="dimmed">
                —
              </Text>
            )}
          </Table.Td>
        )
      })}
    </Table.Tr>
  )
}

/** Picks another evaluation of the same dataset and opens the comparison, this one as the base. */
function CompareModal({ evaluation, opened, onClose }: { evaluation: Evaluation; opened: boolean; onClose: () => void }) {
  const navigate = useNavigate()
  const [candidate, setCandidate] = useState<string | null>(null)
  const others = useEvaluations({ page: 1, per_page: 100, dataset_uuid: evaluation.dataset.uuid })
  const choices = (others.data?.data ?? [])
    .filter((other) => other.uuid !== evaluation.uuid)
    .map((other) => ({ value: other.uuid, label: `${other.name} (${other.agent.name}@v${other.agent_version}, ${other.status})` }))
  return (
    <Modal opened={opened} onClose={onClose} title="Compare with another evaluation">
      <Stack>
        <Text size="sm">{evaluation.name} is the base; the evaluation picked, of the same dataset, is the candidate.</Text>
        {others.error ? <ErrorNotice error={others.error} /> : null}
        <Select
          label="Candidate evaluation"
          data={choices}
          value={candidate}
          onChange={setCandidate}
          nothingFoundMessage="No other evaluation of this dataset"
          comboboxProps={{ withinPortal: true }}
        />
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button
            disabled={!candidate}
            onClick={() => candidate && void navigate(`/evaluations/compare?base=${evaluation.uuid}&candidate=${candidate}`)}
          >
            Compare
          </Button>
        </Group>
      </Stack>
    </Modal>
  )
}
