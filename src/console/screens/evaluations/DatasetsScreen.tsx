/**
 * Datasets (`datasets.list`, `GET /api/v1/datasets`): the cases evaluations run on, each with its
 * number of items, visibility and last change; "New dataset" (`datasets.create`) asks a name, a
 * description and a visibility, and leads to the new dataset's screen (./DatasetScreen.tsx).
 */
import { Badge, Button, Group, Modal, Select, Stack, Table, Text, Textarea, TextInput } from '@mantine/core'
import { useDisclosure } from '@mantine/hooks'
import { useState, type FormEvent } from 'react'
import { useNavigate } from 'react-router'
import { problemOf } from '../../lib/api.ts'
import { fieldError } from '../../ui/forms.ts'
import { FormProblem } from '../../ui/FormProblem.tsx'
import { ScreenTitle } from '../../ui/ListControls.tsx'
import { DataTable, ListStates, NameCell } from '../../ui/ListTable.tsx'
import { useCreateDataset, useDatasets } from './api.ts'

export const VISIBILITIES = [
  { value: 'private', label: 'Private' },
  { value: 'workspace', label: 'Workspace' },
  { value: 'public', label: 'Public' },
]

export default function DatasetsScreen() {
  const [page, setPage] = useState(1)
  const [creating, { open, close }] = useDisclosure(false)
  const datasets = useDatasets({ page, per_page: 20, sort: '-updated_at' })
  return (
    <>
      <ScreenTitle title="Datasets">
        <Button onClick={open}>New dataset</Button>
      </ScreenTitle>
      <Text c="dimmed" size="sm" mb="md">
        Cases with their expected outputs, which evaluations run an agent on.
      </Text>
      <CreateDatasetModal opened={creating} onClose={close} />
      <ListStates
        query={datasets}
        rows={datasets.data?.data}
        loading="Loading datasets"
        empty={{ title: 'No datasets yet', detail: 'Create one and add the cases an agent should answer.' }}
        paging={{ page, onChange: setPage }}
      >
        {(rows) => (
          <DataTable columns={['Name', 'Items', 'Visibility', 'Updated']} minWidth={560} label="Datasets">
            {rows.map((dataset) => (
              <Table.Tr key={dataset.uuid}>
                <NameCell to={`/datasets/${dataset.uuid}`} name={dataset.name} description={dataset.description} maxWidth={280} />
                <Table.Td>{dataset.items_count}</Table.Td>
                <Table.Td>
                  <Badge variant="light">{dataset.visibility}</Badge>
                </Table.Td>
                <Table.Td>
                  <Text size="sm">{new Date(dataset.updated_at).toLocaleString()}</Text>
                </Table.Td>
              </Table.Tr>
            ))}
          </DataTable>
        )}
      </ListStates>
    </>
  )
}

const EMPTY = { name: '', description: '', visibility: 'private' }

function CreateDatasetModal({ opened, onClose }: { opened: boolean; onClose: () => void }) {
  const navigate = useNavigate()
  const [form, setForm] = useState(EMPTY)
  const create = useCreateDataset({ onSuccess: (answer) => void navigate(`/datasets/${answer.data.uuid}`) })
  const problem = create.error ? problemOf(create.error) : null
  const submit = (event: FormEvent) => {
    event.preventDefault()
    create.mutate({ name: form.name, description: form.description, visibility: form.visibility as 'private' | 'workspace' | 'public' })
  }
  const reset = () => {
    create.reset()
    setForm(EMPTY)
  }
  return (
    <Modal opened={opened} onClose={onClose} onExitTransitionEnd={reset} title="New dataset">
      <form onSubmit={submit} noValidate>
        <Stack>
          <FormProblem problem={problem} fields={['name', 'description', 'visibility']} />
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
          <Select
            label="Visibility"
            data={VISIBILITIES}
            value={form.visibility}
            allowDeselect={false}
            onChange={(value) => value && setForm({ ...form, visibility: value })}
            error={fieldError(problem, 'visibility')}
            comboboxProps={{ withinPortal: true }}
          />
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" loading={create.isPending}>
              Create dataset
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  )
}
