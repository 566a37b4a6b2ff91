/**
 * One dataset (`datasets.retrieve`) with its items, oldest first, 20 a page
 * (`datasets.items.list`): input and expected output. A small form adds one item
 * (`datasets.items.create`); JSON Lines files (one item a line) are uploaded at once
 * (`POST /api/v1/media`) and their items added by key (`datasets.items.create` with `file.keys`),
 * a bad line's message (`file.keys.<i>`, "Line 3: …") shown under the drop area and nothing
 * added; a notification says how many items were added. An item is edited in a dialog
 * (`datasets.items.update`) or deleted after a confirmation (`datasets.items.delete`). "Edit"
 * renames the dataset or changes its description and visibility (`datasets.update`); "Delete"
 * soft-deletes it after a confirmation (`datasets.delete`). A 400's issues are shown at their fields.
 */
import { Anchor, Badge, Button, Group, Modal, Paper, Select, Stack, Table, Text, Textarea, TextInput, Title } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useState, type FormEvent } from 'react'
import { Link, useNavigate, useParams } from 'react-router'
import { problemOf } from '../../lib/api.ts'
import { uploadProblemOf } from '../../lib/upload.ts'
import { FileDrop } from '../../ui/FileDrop.tsx'
import { fieldError } from '../../ui/forms.ts'
import { FormProblem } from '../../ui/FormProblem.tsx'
import { ScreenTitle } from '../../ui/ListControls.tsx'
import { DataTable, ListStates } from '../../ui/ListTable.tsx'
import { ErrorNotice, Loading } from '../../ui/states.tsx'
import {
  useAddItems,
  useDataset,
  useDatasetItems,
  useDeleteDataset,
  useDeleteItem,
  useUpdateDataset,
  useUpdateItem,
  useUploadItemFiles,
  type Dataset,
  type DatasetItem,
} from './api.ts'
import { Confirm } from './Confirm.tsx'
import { VISIBILITIES } from './DatasetsScreen.tsx'

export default function DatasetScreen() {
  const { datasetUuid = '' } = useParams()
  const dataset = useDataset(datasetUuid)
  if (dataset.isPending) return <Loading label="Loading the dataset" />
  if (dataset.error) return <ErrorNotice error={dataset.error} onRetry={() => void dataset.refetch()} />
  return <DatasetView dataset={dataset.data.data} />
}

function DatasetView({ dataset }: { dataset: Dataset }) {
  const navigate = useNavigate()
  const [page, setPage] = useState(1)
  const [editing, setEditing] = useState(false)
  const [deleting, setDeleting] = useState(false)
  const [editItem, setEditItem] = useState<DatasetItem | null>(null)
  const [deleteItem, setDeleteItem] = useState<DatasetItem | null>(null)
  const items = useDatasetItems(dataset.uuid, page)
  const remove = useDeleteDataset({
    onSuccess: () => {
      notifications.show({ message: `Dataset ${dataset.name} deleted` })
      void navigate('/datasets')
    },
  })
  const removeItem = useDeleteItem({ onSuccess: () => setDeleteItem(null) })
  return (
    <>
      <Anchor component={Link} to="/datasets" size="sm">
        ← Datasets
      </Anchor>
      <ScreenTitle title={dataset.name}>
        <Button variant="default" onClick={() => setEditing(true)}>
          Edit
        </Button>
        <Button color="red" variant="light" onClick={() => setDeleting(true)}>
          Delete
        </Button>
      </ScreenTitle>
      <Group gap="xs" mb="md">
        <Badge variant="light">{dataset.visibility}</Badge>
        <Text size="sm">
          {dataset.items_count} item{dataset.items_count === 1 ? '' : 's'}
        </Text>
        {dataset.description ? (
          <Text size="sm" c="dimmed" style={{ overflowWrap: 'anywhere' }}>
            {dataset.description}
          </Text>
        ) : null}
      </Group>
      <EditDatasetModal dataset={dataset} opened={editing} onClose={() => setEditing(false)} />
      <Confirm
        opened={deleting}
        title="Delete this dataset?"
        action="Delete dataset"
        pending={remove.isPending}
        error={remove.error}
        onConfirm={() => remove.mutate({ dataset_uuid: dataset.uuid })}
        onClose={() => setDeleting(false)}
      >
        {dataset.name} and its items leave every list. Evaluations already made keep their copy of the items.
      </Confirm>
      <Confirm
        opened={deleteItem !== null}
        title="Delete this item?"
        action="Delete item"
        pending={removeItem.isPending}
        error={removeItem.error}
        onConfirm={() => deleteItem && removeItem.mutate({ item_uuid: deleteItem.uuid })}
        onClose={() => {
          removeItem.reset()
          setDeleteItem(null)
        }}
      >
        The item is deleted for good.
      </Confirm>
      <EditItemModal item={editItem} onClose={() => setEditItem(null)} />
      <AddItemForm datasetUuid={dataset.uuid} />
      <UploadItems datasetUuid={dataset.uuid} />
      <Title order={3} size="h4" mt="lg" mb="xs">
        Items
      </Title>
      <ListStates
        query={items}
        rows={items.data?.data}
        loading="Loading the items"
        empty={{ title: 'No items yet', detail: 'Add the cases above: an input and the output expected of it.' }}
        paging={{ page, onChange: setPage }}
      >
        {(rows) => (
          <DataTable columns={['Input', 'Expected output', { hidden: 'Actions' }]} minWidth={560} label="Items">
            {rows.map((item, index) => (
              <Table.Tr key={item.uuid}>
                <Table.Td style={{ maxWidth: 320 }}>
                  <Text size="sm" lineClamp={3} style={{ overflowWrap: 'anywhere' }}>
                    {item.input}
                  </Text>
                </Table.Td>
                <Table.Td style={{ maxWidth: 320 }}>
                  <Text size="sm" lineClamp={3} c={item.expected_output ? undefined : 'dimmed'} style={{ overflowWrap: 'anywhere' }}>
                    {item.expected_output ?? 'none'}
                  </Text>
                </Table.Td>
                <Table.Td>
                  <Group gap={4} wrap="nowrap">
                    <Button
                      size="xs"
                      variant="light"
                      aria-label={`Edit item ${(page - 1) * 20 + index + 1}`}
                      onClick={() => setEditItem(item)}
                    >
                      Edit
                    </Button>
                    <Button
                      size="xs"
                      color="red"
                      variant="light"
                      aria-label={`Delete item ${(page - 1) * 20 + index + 1}`}
                      onClick={() => setDeleteItem(item)}
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
    </>
  )
}

function AddItemForm({ datasetUuid }: { datasetUuid: string }) {
  const [input, setInput] = useState('')
  const [expected, setExpected] = useState('')
  const add = useAddItems({
    onSuccess: () => {
      setInput('')
      setExpected('')
    },
  })
  const problem = add.error ? problemOf(add.error) : null
  const submit = (event: FormEvent) => {
    event.preventDefault()
    add.mutate({ dataset_uuid: datasetUuid, items: [{ input, expected_output: expected.trim() ? expected : null }] })
  }
  return (
    <Paper withBorder p="sm">
      <form onSubmit={submit} noValidate aria-label="Add an item">
        <Stack gap="xs">
          <FormProblem problem={problem} fields={['items.0.input', 'items.0.expected_output']} />
          <Textarea
            label="Input"
            required
            autosize
            minRows={2}
            value={input}
            onChange={(e) => setInput(e.currentTarget.value)}
            error={fieldError(problem, 'items.0.input')}
          />
          <Textarea
            label="Expected output"
            description="Optional: what exact_match and contains compare with"
            autosize
            minRows={1}
            value={expected}
            onChange={(e) => setExpected(e.currentTarget.value)}
            error={fieldError(problem, 'items.0.expected_output')}
          />
          <Group justify="flex-end">
            <Button type="submit" loading={add.isPending}>
              Add item
            </Button>
          </Group>
        </Stack>
      </form>
    </Paper>
  )
}

/** Most files one request adds items from (docs/api/evaluations.md, "Adding items"). */
const FILES_MAX = 10

/** JSON Lines, and the `.json` and `.txt` uploads read the same way, for the file picker. */
const ITEM_FILES: Record<string, string[]> = {
  'application/jsonl': ['.jsonl'],
  'application/json': ['.json'],
  'text/plain': ['.txt'],
}

/** Items from JSON Lines files: uploaded, then added by their keys in one request. */
function UploadItems({ datasetUuid }: { datasetUuid: string }) {
  const [names, setNames] = useState<string[]>([])
  const [note, setNote] = useState<string | null>(null)
  const upload = useUploadItemFiles()
  const add = useAddItems({
    onSuccess: (answer) => {
      const count = answer.data.length
      notifications.show({ color: 'green', message: `${count} item${count === 1 ? '' : 's'} added` })
    },
  })
  const problem = add.error ? problemOf(add.error) : null
  // A file's problem (`file.keys.<i>`: a bad line, with its number) under the name it was picked by.
  const fields = problem?.fields ?? {}
  const keyIndex = Object.keys(fields)
    .map((field) => /^file\.keys\.(\d+)/.exec(field))
    .find(Boolean)
  const lineError = keyIndex ? `“${names[Number(keyIndex[1])] ?? 'The file'}”: ${fields[keyIndex[0]]}` : fieldError(problem, 'file')
  const onFiles = (picked: File[]) => {
    add.reset()
    const files = picked.slice(0, FILES_MAX)
    setNote(picked.length > FILES_MAX ? `At most ${FILES_MAX} files at once: only the first ${FILES_MAX} were taken.` : null)
    setNames(files.map((file) => file.name))
    upload.mutate(files, {
      onSuccess: (uploads) => add.mutate({ dataset_uuid: datasetUuid, file: { keys: uploads.map(({ upload: stored }) => stored.key) } }),
    })
  }
  return (
    <Paper withBorder p="sm" mt="sm" component="section" aria-label="Upload items">
      <Stack gap="xs">
        <FormProblem problem={problem} fields={['file']} />
        <FileDrop
          label="Items from a JSONL file"
          hint='One item a line: {"input": "…", "expected_output": "…", "metadata": {…}}; up to 1,000 items.'
          accept={ITEM_FILES}
          multiple
          loading={upload.isPending || add.isPending}
          error={upload.error ? uploadProblemOf(upload.error).message : (lineError ?? note)}
          onFiles={onFiles}
        />
      </Stack>
    </Paper>
  )
}

function EditItemModal({ item, onClose }: { item: DatasetItem | null; onClose: () => void }) {
  return (
    <Modal opened={item !== null} onClose={onClose} title="Edit the item" size="lg">
      {item ? <EditItemForm key={item.uuid} item={item} onClose={onClose} /> : null}
    </Modal>
  )
}

function EditItemForm({ item, onClose }: { item: DatasetItem; onClose: () => void }) {
  const [input, setInput] = useState(item.input)
  const [expected, setExpected] = useState(item.expected_output ?? '')
  const update = useUpdateItem({ onSuccess: onClose })
  const problem = update.error ? problemOf(update.error) : null
  const submit = (event: FormEvent) => {
    event.preventDefault()
    update.mutate({ item_uuid: item.uuid, input, expected_output: expected.trim() ? expected : null })
  }
  return (
    <form onSubmit={submit} noValidate>
      <Stack>
        <FormProblem problem={problem} fields={['input', 'expected_output']} />
        <Textarea
          label="Input"
          required
          autosize
          minRows={2}
          value={input}
          onChange={(e) => setInput(e.currentTarget.value)}
          error={fieldError(problem, 'input')}
        />
        <Textarea
          label="Expected output"
          autosize
          minRows={1}
          value={expected}
          onChange={(e) => setExpected(e.currentTarget.value)}
          error={fieldError(problem, 'expected_output')}
        />
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button type="submit" loading={update.isPending}>
            Save item
          </Button>
        </Group>
      </Stack>
    </form>
  )
}

function EditDatasetModal({ dataset, opened, onClose }: { dataset: Dataset; opened: boolean; onClose: () => void }) {
  return (
    <Modal opened={opened} onClose={onClose} title="Edit the dataset">
      {opened ? <EditDatasetForm dataset={dataset} onClose={onClose} /> : null}
    </Modal>
  )
}

function EditDatasetForm({ dataset, onClose }: { dataset: Dataset; onClose: () => void }) {
  const [form, setForm] = useState({ name: dataset.name, description: dataset.description, visibility: dataset.visibility as string })
  const update = useUpdateDataset({ onSuccess: onClose })
  const problem = update.error ? problemOf(update.error) : null
  const submit = (event: FormEvent) => {
    event.preventDefault()
    update.mutate({
      dataset_uuid: dataset.uuid,
      name: form.name,
      description: form.description,
      visibility: form.visibility as 'private' | 'workspace' | 'public',
    })
  }
  return (
    <form onSubmit={submit} noValidate>
      <Stack>
        <FormProblem problem={problem} fields={['name', 'description', 'visibility']} />
        <TextInput
          label="Name"
          required
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
          <Button type="submit" loading={update.isPending}>
            Save changes
          </Button>
        </Group>
      </Stack>
    </form>
  )
}
