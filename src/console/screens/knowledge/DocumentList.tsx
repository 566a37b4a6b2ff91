/**
 * An agent's knowledge documents (`knowledge.list`, `GET /api/v1/agents/{agent_uuid}/knowledge`)
 * with their status, filtered by status and name. While any shown document is `queued` or
 * `processing` the list is read again every 2 s, so a training is seen through to `ready` or
 * `failed` (with the reason the service gives). A failed document can be retried
 * (`knowledge.retry`); any can be deleted with its chunks after a confirmation (`knowledge.delete`).
 * A ready document's chunks open in a dialog (`knowledge.chunks`). A URL document shows how often
 * it is synced with its page (changed in place, `knowledge.update`), when it last was, when it
 * next is, and why its last sync failed; "Sync" syncs it now (`knowledge.sync`), after which the
 * list is read again every 2 s for 30 s to show the outcome (docs/api/knowledge.md).
 */
import { Anchor, Badge, Button, Group, Loader, Modal, Pagination, Select, Stack, Table, Text, TextInput, Title } from '@mantine/core'
import { useDebouncedValue } from '@mantine/hooks'
import { notifications } from '@mantine/notifications'
import { useState } from 'react'
import { problemOf } from '../../lib/api.ts'
import { useFilter } from '../../ui/ListControls.tsx'
import { DataTable, ListStates } from '../../ui/ListTable.tsx'
import { ErrorNotice } from '../../ui/states.tsx'
import {
  REFRESH_OPTIONS,
  unfinished,
  useChunks,
  useDeleteDocument,
  useDocuments,
  useRetryDocument,
  useSyncDocument,
  useUpdateDocument,
  type Document,
  type DocumentsInput,
  type Refresh,
} from './api.ts'

type Status = Document['status']

const STATUS_COLORS: Record<Status, string> = { queued: 'gray', processing: 'blue', ready: 'green', failed: 'red' }
const SOURCE_LABELS: Record<Document['source_type'], string> = { text: 'Text', url: 'Web page', file: 'File' }
const dateTimeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })
/** How long the list is watched after a sync was asked for. */
const SYNC_WATCH_MS = 30_000

export function DocumentList({ agentUuid }: { agentUuid: string }) {
  const [page, setPage] = useState(1)
  const [status, setStatus] = useFilter<Status | null>(null, setPage)
  const [search, setSearch] = useFilter('', setPage)
  const [debounced] = useDebouncedValue(search.trim(), 250)
  const [deleting, setDeleting] = useState<Document | null>(null)
  const [reading, setReading] = useState<Document | null>(null)
  const [watchUntil, setWatchUntil] = useState(0)
  const input: DocumentsInput = {
    agent_uuid: agentUuid,
    page,
    per_page: 20,
    sort: '-created_at',
    ...(status ? { status } : {}),
    ...(debounced ? { search: debounced } : {}),
  }
  const documents = useDocuments(input, watchUntil)
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
      <ChunksModal document={reading} onClose={() => setReading(null)} />
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
        {(rows) => (
          <DocumentTable
            documents={rows}
            onDelete={setDeleting}
            onRead={setReading}
            onSynced={() => setWatchUntil(Date.now() + SYNC_WATCH_MS)}
          />
        )}
      </ListStates>
    </Stack>
  )
}

function DocumentTable({
  documents,
  onDelete,
  onRead,
  onSynced,
}: {
  documents: Document[]
  onDelete: (document: Document) => void
  onRead: (document: Document) => void
  onSynced: () => void
}) {
  const retry = useRetryDocument({
    onError: (error) => notifications.show({ color: 'red', message: `The retry was refused: ${problemOf(error).message}` }),
  })
  const sync = useSyncDocument({
    onSuccess: (answer) => {
      notifications.show({ message: `Syncing “${answer.data.name}” with its page` })
      onSynced()
    },
    onError: (error) => notifications.show({ color: 'red', message: `The sync was refused: ${problemOf(error).message}` }),
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
            {document.crawl ? (
              <Text size="xs" c="dimmed">
                Crawls the site under it: {document.crawl.max_pages} pages at most, {document.crawl.max_depth} links deep
              </Text>
            ) : null}
            {document.crawl_root_uuid ? (
              <Text size="xs" c="dimmed">
                Found by a crawl; synced with its root
              </Text>
            ) : null}
            {document.source_type === 'url' && !document.crawl_root_uuid ? <SyncState document={document} /> : null}
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
              {document.status === 'ready' ? (
                <Button size="xs" variant="light" aria-label={`Chunks of ${document.name}`} onClick={() => onRead(document)}>
                  Chunks
                </Button>
              ) : null}
              {document.source_type === 'url' && document.status === 'ready' ? (
                <Button
                  size="xs"
                  variant="light"
                  aria-label={`Sync ${document.name}`}
                  loading={sync.isPending && sync.variables?.document_uuid === document.uuid}
                  onClick={() => sync.mutate({ document_uuid: document.uuid })}
                >
                  Sync
                </Button>
              ) : null}
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

/** A URL document's refresh (changed in place), its last and next syncs, and why its last sync failed. */
function SyncState({ document }: { document: Document }) {
  const update = useUpdateDocument({
    onSuccess: (answer) =>
      notifications.show({
        message: `“${answer.data.name}” is synced ${answer.data.refresh === 'never' ? 'only when asked' : answer.data.refresh}`,
      }),
    onError: (error) => notifications.show({ color: 'red', message: `The refresh was refused: ${problemOf(error).message}` }),
  })
  return (
    <Stack gap={2} mt={4}>
      <Group gap="xs" wrap="wrap">
        <Select
          size="xs"
          w={110}
          aria-label={`Refresh of ${document.name}`}
          data={REFRESH_OPTIONS}
          value={update.isPending ? update.variables.refresh : document.refresh}
          allowDeselect={false}
          disabled={update.isPending}
          onChange={(value) =>
            value && value !== document.refresh && update.mutate({ document_uuid: document.uuid, refresh: value as Refresh })
          }
          comboboxProps={{ withinPortal: true }}
        />
        <Text size="xs" c="dimmed">
          {document.last_synced_at ? `Synced ${dateTimeFormat.format(new Date(document.last_synced_at))}` : 'Not synced yet'}
          {document.next_sync_at ? ` · next ${dateTimeFormat.format(new Date(document.next_sync_at))}` : ''}
        </Text>
      </Group>
      {document.sync_error ? (
        <Text size="xs" c="red" style={{ overflowWrap: 'anywhere' }} aria-label={`Sync error of ${document.name}`}>
          Last sync failed: {document.sync_error.message}
        </Text>
      ) : null}
    </Stack>
  )
}

/** A ready document's chunks, ten a page, in document order: what the agent's runs may be given. */
function ChunksModal({ document: target, onClose }: { document: Document | null; onClose: () => void }) {
  // Kept while the dialog closes, so its text does not empty before it is gone.
  const [document, setShown] = useState(target)
  const [page, setPage] = useState(1)
  if (target && target !== document) {
    setShown(target)
    setPage(1)
  }
  const chunks = useChunks(target?.uuid ?? null, page)
  return (
    <Modal opened={target !== null} onClose={onClose} title={`Chunks of “${document?.name ?? ''}”`} size="lg">
      <Stack gap="sm">
        {chunks.error ? <ErrorNotice error={chunks.error} /> : null}
        {chunks.isPending ? <Loader size="sm" aria-label="Loading chunks" /> : null}
        {chunks.data?.data.map((chunk) => (
          <Stack key={chunk.uuid} gap={2} component="article" aria-label={`Chunk ${chunk.position + 1}`}>
            <Text size="xs" c="dimmed">
              Chunk {chunk.position + 1} · {chunk.tokens_count} tokens
            </Text>
            <Text size="sm" style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>
              {chunk.text}
            </Text>
          </Stack>
        ))}
        {chunks.data && chunks.data.meta.last_page > 1 ? (
          <Pagination total={chunks.data.meta.last_page} value={page} onChange={setPage} size="sm" aria-label="Pages of chunks" />
        ) : null}
      </Stack>
    </Modal>
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
