/**
 * Workflows: the list with search and an active filter; each row leads to its editor and its
 * executions, turns the workflow on or off, runs it by hand (./RunDialog.tsx) and deletes it after
 * a confirmation. "New workflow" asks a name and a description and opens the editor.
 * Procedures: `workflows.list` (`GET /api/v1/workflows`), `workflows.create` (`POST`),
 * `workflows.update` with `is_active` (`PUT /api/v1/workflows/{workflow_uuid}`),
 * `workflows.run` (`POST .../run`), `workflows.delete` (`DELETE .../{workflow_uuid}`).
 *
 * The list has no `is_active` filter in the API: the active filter reads pages of 100 and
 * keeps the matching rows of the page.
 */
import { Badge, Button, Group, Modal, SegmentedControl, Stack, Switch, Table, Text, TextInput, Textarea } from '@mantine/core'
import { useDebouncedValue } from '@mantine/hooks'
import { notifications } from '@mantine/notifications'
import { useState, type FormEvent } from 'react'
import { Link, useNavigate } from 'react-router'
import { problemOf, type RouterOutputs } from '../../lib/api.ts'
import { fieldError, otherIssues } from '../../ui/forms.ts'
import { ScreenTitle, SearchField, useFilter } from '../../ui/ListControls.tsx'
import { DataTable, ListStates, NameCell } from '../../ui/ListTable.tsx'
import { describeProblem, ErrorNotice } from '../../ui/states.tsx'
import { useCreateWorkflow, useDeleteWorkflow, useUpdateWorkflow, useWorkflows } from './api.ts'
import { formatTime } from './ExecutionView.tsx'
import { RunDialog } from './RunDialog.tsx'

type WorkflowRow = RouterOutputs['workflows']['list']['data'][number]
type ActiveFilter = 'all' | 'active' | 'inactive'

/** Tells what went wrong with an action taken from a row. */
function notifyFailure(error: unknown) {
  const { title, detail } = describeProblem(error)
  notifications.show({ color: 'red', title, message: detail })
}

export default function WorkflowsScreen() {
  const [page, setPage] = useState(1)
  const [search, setSearch] = useFilter('', setPage)
  const [debounced] = useDebouncedValue(search.trim(), 250)
  const [active, setActive] = useFilter<ActiveFilter>('all', setPage)
  const [creating, setCreating] = useState(false)
  const [running, setRunning] = useState<WorkflowRow | null>(null)
  const [deleting, setDeleting] = useState<WorkflowRow | null>(null)
  const input = { page, per_page: active === 'all' ? 20 : 100, sort: '-updated_at' as const, ...(debounced ? { search: debounced } : {}) }
  const workflows = useWorkflows(input)
  const activation = useUpdateWorkflow({ onError: notifyFailure })
  const rows = workflows.data?.data.filter((row) => active === 'all' || row.is_active === (active === 'active'))
  const filtered = Boolean(debounced) || active !== 'all'
  return (
    <>
      <ScreenTitle title="Workflows">
        <Button onClick={() => setCreating(true)}>New workflow</Button>
      </ScreenTitle>
      <Group mb="md" gap="sm" wrap="wrap" align="end">
        <SearchField value={search} onChange={setSearch} />
        <SegmentedControl
          aria-label="Active"
          value={active}
          onChange={(value) => setActive(value as ActiveFilter)}
          data={[
            { value: 'all', label: 'All' },
            { value: 'active', label: 'Active' },
            { value: 'inactive', label: 'Inactive' },
          ]}
        />
      </Group>
      <ListStates
        query={workflows}
        rows={rows}
        loading="Loading workflows"
        empty={
          filtered
            ? { title: 'No workflow matches', detail: 'Change the search or the filter.' }
            : { title: 'No workflows yet', detail: 'Create one, then add a trigger and the steps it starts.' }
        }
        paging={{ page, onChange: setPage }}
      >
        {(rows) => (
          <DataTable columns={['Name', 'Active', 'Nodes', 'Updated', { hidden: 'Actions' }]} minWidth={640} highlightOnHover>
            {rows.map((workflow) => (
              <Table.Tr key={workflow.uuid}>
                <NameCell to={`/workflows/${workflow.uuid}`} name={workflow.name} description={workflow.description} maxWidth={320} />
                <Table.Td>
                  <Switch
                    aria-label={`Active: ${workflow.name}`}
                    checked={workflow.is_active}
                    disabled={activation.isPending && activation.variables?.workflow_uuid === workflow.uuid}
                    onChange={(event) => activation.mutate({ workflow_uuid: workflow.uuid, is_active: event.currentTarget.checked })}
                  />
                </Table.Td>
                <Table.Td>
                  <Badge variant="light" color="gray">
                    {workflow.nodes.length}
                  </Badge>
                </Table.Td>
                <Table.Td>
                  <Text size="sm">{formatTime(workflow.updated_at)}</Text>
                </Table.Td>
                <Table.Td>
                  <Group gap={4} wrap="nowrap">
                    <Button size="xs" variant="light" onClick={() => setRunning(workflow)} aria-label={`Run ${workflow.name}`}>
                      Run
                    </Button>
                    <Button
                      size="xs"
                      variant="subtle"
                      component={Link}
                      to={`/workflows/${workflow.uuid}/executions`}
                      aria-label={`Executions of ${workflow.name}`}
                    >
                      Executions
                    </Button>
                    <Button
                      size="xs"
                      variant="subtle"
                      color="red"
                      onClick={() => setDeleting(workflow)}
                      aria-label={`Delete ${workflow.name}`}
                    >
                      Delete
                    </Button>
                  </Group>
                </Table.Td>
              </Table.Tr>
            ))}
          </DataTable>
        )}
      </ListStates>
      <CreateDialog opened={creating} onClose={() => setCreating(false)} />
      {running ? <RunDialog workflow={running} opened onClose={() => setRunning(null)} /> : null}
      {deleting ? <DeleteDialog workflow={deleting} onClose={() => setDeleting(null)} /> : null}
    </>
  )
}

/** Name and description; the new workflow opens in the editor. */
function CreateDialog({ opened, onClose }: { opened: boolean; onClose: () => void }) {
  const navigate = useNavigate()
  const [form, setForm] = useState({ name: '', description: '' })
  const create = useCreateWorkflow({ onSuccess: (answer) => void navigate(`/workflows/${answer.data.uuid}`) })
  const problem = create.error ? problemOf(create.error) : null
  const others = otherIssues(problem, ['name', 'description'])
  const submit = (event: FormEvent) => {
    event.preventDefault()
    // Enter pressed again while the first create is under way (or navigating away after it) creates nothing more.
    if (create.isPending || create.isSuccess) return
    create.mutate({ name: form.name, description: form.description })
  }
  return (
    <Modal opened={opened} onClose={onClose} title="New workflow">
      <form onSubmit={submit} noValidate>
        <Stack>
          <TextInput
            label="Name"
            required
            data-autofocus
            value={form.name}
            onChange={(e) => setForm({ ...form, name: e.currentTarget.value })}
            error={fieldError(problem, 'name')}
          />
          <Textarea
            label="Description"
            autosize
            minRows={2}
            value={form.description}
            onChange={(e) => setForm({ ...form, description: e.currentTarget.value })}
            error={fieldError(problem, 'description')}
          />
          {problem && (problem.status !== 400 || others.length) ? <ErrorNotice error={create.error} /> : null}
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" loading={create.isPending} disabled={create.isSuccess}>
              Create
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  )
}

function DeleteDialog({ workflow, onClose }: { workflow: WorkflowRow; onClose: () => void }) {
  const remove = useDeleteWorkflow({
    onSuccess: () => {
      notifications.show({ message: `Deleted ${workflow.name}` })
      onClose()
    },
  })
  return (
    <Modal opened onClose={onClose} title="Delete workflow?">
      <Stack>
        <Text style={{ overflowWrap: 'anywhere' }}>
          Delete <b>{workflow.name}</b>? Its webhook and schedule stop, and it leaves the list.
        </Text>
        {remove.error ? <ErrorNotice error={remove.error} /> : null}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button color="red" loading={remove.isPending} onClick={() => remove.mutate({ workflow_uuid: workflow.uuid })}>
            Delete
          </Button>
        </Group>
      </Stack>
    </Modal>
  )
}
