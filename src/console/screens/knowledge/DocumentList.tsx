/**
 * An agent's knowledge documents (`knowledge.list`, `GET /api/v1/agents/{agent_uuid}/knowledge`)
 * with their status, filtered by status and name. While any shown document is `queued` or
 * `processing` the list is read again every 2 s, so a training is seen through to `ready` or
 * `failed` (with the reason the service gives). A failed document can be retried
 * (`knowledge.retry`); any can be deleted with its chunks after a confirmation (`knowledge.delete`).
 */
import { Anchor, Badge, Button, Group, Loader, Modal, Select, Stack, Table, Text, TextInput, Title } from '@mantine/core'
import { useDebouncedValue } from '@mantine/hooks'
import { notifications } from '@mantine/notifications'
import { useState } from 'react'
import { problemOf } from '../../lib/api.ts'
import { useFilter } from '../../ui/ListControls.tsx'
import { DataTable, ListStates } from '../../ui/ListTable.tsx'
import { ErrorNotice } from '../../ui/states.tsx'
import { unfinished, useDeleteDocument, useDocuments, useRetryDocument, type Document, type DocumentsInput } from './api.ts'

type Status = Document['status']

const STATUS_COLORS: Record<Status, string> = { queued: 'gray', processing: 'blue', ready: 'green', failed: 'red' }
const SOURCE_LABELS: Record<Document['source_type'], string> = { text: 'Text', url: 'Web page', file: 'File' }
const dateTimeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })

export function DocumentList({ agentUuid }: { agentUuid: string }) {
  const [page, setPage] = useState(1)
  const [status, setStatus] = useFilter<Status | null>(null, setPage)
  const [search, setSearch] = useFilter('', setPage)
  const [debounced] = useDebouncedValue(search.trim(), 250)
  const [deleting, setDeleting] = useState<Document | null>(null)
  const input: DocumentsInput = {
    agent_uuid: agentUuid,
    page,
    per_page: 20,
    sort: '-created_at',
    ...(status ? { status } : {}),
    ...(debounced ? { search: debounced } : {}),
  }
  const documents = useDocuments(input)
  const filtered = status !== null || debounced !== ''
  const working = documents.data?.data.some(unfinished) ?? false
  return (
    <Stack component="section" aria-labelledby="documents-title" gap="sm">
      <Group justify="space-between" wrap="wrap" gap="xs">
        <Title order={3} size="h4" id="documents-title">
          Documents
        </Title>
        {working ? (
          <Group gap={6} role="status">
            <Loader size="xs" />
            <Text size="sm" c="dimmed">
              Training under way; refreshing
            </Text>
          </Group>
        ) : null}
      </Group>
      <Group gap="sm" wrap="wrap" align="end">
        <TextInput
          label="Search documents"
          placeholder="Name"
          value={search}
          onChange={(event) => setSearch(event.currentTarget.value)}
          style={{ flex: '1 1 200px' }}
        />
        <Select
          label="Status"
          placeholder="Any status"
          data={[
            { value: 'queued', label: 'Queued' },
            { value: 'processing', label: 'Processing' },
            { value: 'ready', label: 'Ready' },
            { value: 'failed', label: 'Failed' },
          ]}
          value={status}
          onChange={(value) => setStatus(value as Status | null)}
          clearable
          w={180}
          comboboxProps={{ withinPortal: true }}
        />
      </Group>
      <DeleteModal document={deleting} onClose={() => setDeleting(null)} />
      <ListStates
        query={documents}
        rows={documents.data?.data}
        loading="Loading documents"
        empty={
          filtered
            ? { title: 'No document matches', detail: 'Change the search or the status.' }
            : { title: 'Not trained yet', detail: 'Train it with a text, a web page or a file above.' }
        }
        paging={{ page, onChange: setPage }}
      >
        {(rows) => <DocumentTable documents={rows} onDelete={setDeleting} />}
      </ListStates>
    </Stack>
  )
}

function DocumentTable({ documents, onDelete }: { documents: Document[]; onDelete: (document: Document) => void }) {
  const retry = useRetryDocument({
    onError: (error) => notifications.show({ color: 'red', message: `The retry was refused: ${problemOf(error).message}` }),
  })
  return (
    <DataTable columns={['Document', 'Status', 'Chunks', 'Updated', 'Actions']} minWidth={640}>
      {documents.map((document) => (
        <Table.Tr key={document.uuid}>
          <Table.Td style={{ maxWidth: 320 }}>
            <Text fw={600} truncate="end" title={document.name}>
              {document.name}
            </Text>
            <Text size="xs" c="dimmed" style={{ overflowWrap: 'anywhere' }}>
              {SOURCE_LABELS[document.source_type]} · {document.mime_type}
              {document.url ? ` · ${document.url}` : ''}
              {document.media_key ? (
                <>
                  {' · '}
                  {/* Uploads are read without a token (their keys are random), so a plain link downloads the file. */}
                  <Anchor href={`/api/v1/media/${encodeURIComponent(document.media_key)}`} inherit aria-label={`Download ${document.name}`}>
                    download
                  </Anchor>
                </>
              ) : null}
            </Text>
          </Table.Td>
          <Table.Td style={{ maxWidth: 280 }}>
            <Badge color={STATUS_COLORS[document.status]} variant="light" aria-label={`Status of ${document.name}: ${document.status}`}>
              {document.status}
            </Badge>
            {document.error ? (
              <Text size="xs" c="red" mt={4} style={{ overflowWrap: 'anywhere' }}>
                {document.error}
              </Text>
            ) : null}
          </Table.Td>
          <Table.Td>
            <Text size="sm">{document.status === 'ready' ? `${document.chunks_count} (${document.tokens_count} tokens)` : '—'}</Text>
          </Table.Td>
          <Table.Td>
            <Text size="sm">{dateTimeFormat.format(new Date(document.updated_at))}</Text>
          </Table.Td>
          <Table.Td>
            <Group gap={4} wrap="nowrap">
              {document.status === 'failed' ? (
                <Button
                  size="xs"
                  variant="light"
                  aria-label={`Retry ${document.name}`}
                  loading={retry.isPending && retry.variables?.document_uuid === document.uuid}
                  onClick={() => retry.mutate({ document_uuid: document.uuid })}
                >
                  Retry
                </Button>
              ) : null}
              <Button size="xs" variant="light" color="red" aria-label={`Delete ${document.name}`} onClick={() => onDelete(document)}>
                Delete
              </Button>
            </Group>
          </Table.Td>
        </Table.Tr>
      ))}
    </DataTable>
  )
}

function DeleteModal({ document: target, onClose }: { document: Document | null; onClose: () => void }) {
  // Kept while the dialog closes, so its text does not empty before it is gone.
  const [document, setShown] = useState(target)
  if (target && target !== document) setShown(target)
  const remove = useDeleteDocument()
  const confirm = (deleted: Document) =>
    remove.mutate(
      { document_uuid: deleted.uuid },
      {
        onSuccess: () => {
          notifications.show({ message: `“${deleted.name}” deleted` })
          close()
        },
      },
    )
  const close = () => {
    remove.reset()
    onClose()
  }
  return (
    <Modal opened={target !== null} onClose={close} title="Delete this document?">
      <Stack>
        <Text style={{ overflowWrap: 'anywhere' }}>
          “{document?.name}” and its chunks are deleted at once; the agent's runs no longer use them.
        </Text>
        {remove.error ? <ErrorNotice error={remove.error} /> : null}
        <Group justify="flex-end">
          <Button variant="default" onClick={close}>
            Cancel
          </Button>
          <Button color="red" loading={remove.isPending} onClick={() => document && confirm(document)}>
            Delete document
          </Button>
        </Group>
      </Stack>
    </Modal>
  )
}
