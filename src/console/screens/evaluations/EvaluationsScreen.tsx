/**
 * Evaluations (`evaluations.list`, `GET /api/v1/evaluations`), newest first: name, agent at its
 * version, dataset, status, progress (done of total) and when it was created; the list is read
 * again every 2 s while one shown is queued or running. "New evaluation" opens
 * ./NewEvaluationModal.tsx; each evaluation has its screen (./EvaluationScreen.tsx).
 */
import { Button, Table, Text } from '@mantine/core'
import { useDisclosure } from '@mantine/hooks'
import { useState } from 'react'
import { Link } from 'react-router'
import { ScreenTitle } from '../../ui/ListControls.tsx'
import { DataTable, ListStates, NameCell } from '../../ui/ListTable.tsx'
import { useEvaluations } from './api.ts'
import { NewEvaluationModal } from './NewEvaluationModal.tsx'
import { StatusBadge } from './parts.tsx'

export default function EvaluationsScreen() {
  const [page, setPage] = useState(1)
  const [creating, { open, close }] = useDisclosure(false)
  const evaluations = useEvaluations({ page, per_page: 20 })
  return (
    <>
      <ScreenTitle title="Evaluations">
        <Button onClick={open}>New evaluation</Button>
      </ScreenTitle>
      <Text c="dimmed" size="sm" mb="md">
        An agent at one version run on every item of a dataset, each answer graded by scorers.
      </Text>
      <NewEvaluationModal opened={creating} onClose={close} />
      <ListStates
        query={evaluations}
        rows={evaluations.data?.data}
        loading="Loading evaluations"
        empty={{ title: 'No evaluations yet', detail: 'Create a dataset, then evaluate an agent on it.' }}
        paging={{ page, onChange: setPage }}
      >
        {(rows) => (
          <DataTable columns={['Name', 'Agent', 'Dataset', 'Status', 'Progress', 'Created']} minWidth={820} label="Evaluations">
            {rows.map((evaluation) => (
              <Table.Tr key={evaluation.uuid}>
                <NameCell to={`/evaluations/${evaluation.uuid}`} name={evaluation.name} maxWidth={240} />
                <Table.Td style={{ maxWidth: 200 }}>
                  <Text size="sm" truncate="end" title={evaluation.agent.name}>
                    {evaluation.agent.name}@v{evaluation.agent_version}
                  </Text>
                </Table.Td>
                <Table.Td style={{ maxWidth: 200 }}>
                  <Text size="sm" component={Link} to={`/datasets/${evaluation.dataset.uuid}`} truncate="end" display="block">
                    {evaluation.dataset.name}
                  </Text>
                </Table.Td>
                <Table.Td>
                  <StatusBadge status={evaluation.status} />
                </Table.Td>
                <Table.Td>
                  <Text size="sm">
                    {evaluation.progress.done}/{evaluation.progress.total}
                  </Text>
                </Table.Td>
                <Table.Td>
                  <Text size="sm">{new Date(evaluation.created_at).toLocaleString()}</Text>
                </Table.Td>
              </Table.Tr>
            ))}
          </DataTable>
        )}
      </ListStates>
    </>
  )
}
