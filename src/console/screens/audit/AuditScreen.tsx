/**
 * The audit log (docs/api/audit.md): the workspace's audit events, newest first, 25 a page, in
 * the pages the service answers (`auditEvents.list`, `GET /api/v1/audit-events`), filtered by
 * action (or a prefix, `agent.*`), resource type, resource, acting member and days; an event
 * opened (./AuditEventPanel.tsx, `auditEvents.retrieve`) shows who acted, with which token, from
 * which address and client, its request id, and what each field changed from and to. "Export"
 * downloads every event matching the same filters as NDJSON (`GET /api/v1/audit-events/export`,
 * see ./api.ts).
 *
 * Only owners and admins read the log: anyone else reads the service's 403 in words in place of
 * the list. A filter the service refuses (a resource that is not a uuid, `date_from` after
 * `date_to`) is shown at its field. Filters may be given in the address (`?resource_uuid=`), so
 * another screen can link to a resource's history.
 */
import '@mantine/dates/styles.css'
import { Alert, Badge, Button, Select, SimpleGrid, Table, Text, TextInput } from '@mantine/core'
import { DateInput } from '@mantine/dates'
import { useDebouncedValue } from '@mantine/hooks'
import { notifications } from '@mantine/notifications'
import { useState } from 'react'
import { Link, useSearchParams } from 'react-router'
import { problemOf } from '../../lib/api.ts'
import { useSession } from '../../lib/session.tsx'
import { useWorkspaceMembers } from '../../lib/session-api.ts'
import { fieldError, otherIssues } from '../../ui/forms.ts'
import { ScreenTitle } from '../../ui/ListControls.tsx'
import { DataTable, ListStates } from '../../ui/ListTable.tsx'
import { describeStatus, ErrorNotice } from '../../ui/states.tsx'
import { saveBlob } from '../../lib/download.ts'
import { ExportError, useAuditEvents, useExportAuditEvents, type AuditEvent, type AuditFilters } from './api.ts'
import { AuditEventModal } from './AuditEventPanel.tsx'
import { actorWords, resourceWords } from './audit-model.ts'

const PER_PAGE = 25

/** The resource types events are recorded under (docs/api/audit.md, "Actions"). */
const RESOURCE_TYPES = [
  'access_token',
  'account',
  'agent',
  'approval',
  'budget',
  'command_room_task',
  'knowledge_document',
  'media',
  'member',
  'memory',
  'message',
  'model',
  'prompt',
  'provider',
  'thread',
  'tool',
  'user',
  'webhook_endpoint',
  'workflow',
  'workflow_execution',
  'workspace',
]

/** The fields the filters show issues at; the rest of a 400 goes in one alert. */
const FILTER_FIELDS = ['action', 'resource_type', 'resource_uuid', 'actor_user_id', 'date_from', 'date_to']

const dateTimeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' })

/** The filters as the address gives them, as typed (the service checks them). */
function filtersOf(params: URLSearchParams): AuditFilters {
  const actor = Number(params.get('actor_user_id'))
  return {
    action: params.get('action') || undefined,
    resource_type: params.get('resource_type') || undefined,
    resource_uuid: params.get('resource_uuid') || undefined,
    actor_user_id: Number.isInteger(actor) && actor > 0 ? actor : undefined,
    date_from: params.get('date_from') || undefined,
    date_to: params.get('date_to') || undefined,
  }
}

/** Today's date, UTC, for the export's file name. */
const todayUtc = () => new Date().toISOString().slice(0, 10)

export default function AuditScreen() {
  const session = useSession()
  const [params] = useSearchParams()
  const [initial] = useState(() => filtersOf(params))
  const [paging, setPaging] = useState({ key: '', page: 1 })
  const [opened, setOpened] = useState<string | null>(null)
  const [action, setAction] = useState(initial.action ?? '')
  const [resource, setResource] = useState(initial.resource_uuid ?? '')
  const [others, setOthers] = useState<Pick<AuditFilters, 'resource_type' | 'actor_user_id' | 'date_from' | 'date_to'>>(initial)
  // Typed filters reach the request once typing pauses; each change goes back to page 1.
  const [debouncedAction] = useDebouncedValue(action.trim(), 300)
  const [debouncedResource] = useDebouncedValue(resource.trim(), 300)
  const filters: AuditFilters = {
    ...(debouncedAction ? { action: debouncedAction } : {}),
    ...(debouncedResource ? { resource_uuid: debouncedResource } : {}),
    ...(others.resource_type ? { resource_type: others.resource_type } : {}),
    ...(others.actor_user_id ? { actor_user_id: others.actor_user_id } : {}),
    ...(others.date_from ? { date_from: others.date_from } : {}),
    ...(others.date_to ? { date_to: others.date_to } : {}),
  }
  // A page belongs to the filters it was chosen under: other filters start again at page 1.
  const filterKey = JSON.stringify(filters)
  const page = paging.key === filterKey ? paging.page : 1
  const setPage = (next: number) => setPaging({ key: filterKey, page: next })
  const change = (next: Partial<typeof others>) => setOthers((current) => ({ ...current, ...next }))

  const events = useAuditEvents({ ...filters, page, per_page: PER_PAGE })
  const problem = events.error ? problemOf(events.error) : null
  const forbidden = problem?.status === 403
  const refused = problem?.status === 400 ? otherIssues(problem, FILTER_FIELDS) : []
  const members = useWorkspaceMembers(session.workspace, !forbidden)
  const memberOptions = (members.data?.data ?? []).map((member) => ({ value: String(member.user.id), label: member.user.name }))

  const exporting = useExportAuditEvents()
  const exportFailure = exporting.error instanceof ExportError ? exporting.error.problem : null
  const runExport = () =>
    exporting.mutate(filters, {
      onSuccess: (blob) => {
        saveBlob(`audit-events-${todayUtc()}.ndjson`, blob)
        notifications.show({ color: 'green', message: 'The audit events matching these filters were exported' })
      },
    })

  return (
    <>
      <ScreenTitle title="Audit log">
        {forbidden ? null : (
          <Button variant="light" loading={exporting.isPending} onClick={runExport}>
            Export
          </Button>
        )}
      </ScreenTitle>
      <Text c="dimmed" size="sm" mb="md">
        Every change made in this workspace through the API: who made it, from where, and what each field changed from and to. Events cannot
        be changed or deleted.
      </Text>
      {forbidden ? (
        <ErrorNotice error={events.error} />
      ) : (
        <>
          <SimpleGrid cols={{ base: 1, xs: 2, md: 3 }} spacing="sm" mb="sm" role="group" aria-label="Filters">
            <TextInput
              label="Action"
              description="An action, or a prefix: agent.*"
              placeholder="agent.update"
              value={action}
              onChange={(event) => setAction(event.currentTarget.value)}
              error={fieldError(problem, 'action')}
            />
            <Select
              label="Resource type"
              description="What was changed"
              placeholder="Any"
              data={RESOURCE_TYPES}
              value={others.resource_type ?? null}
              onChange={(value) => change({ resource_type: value ?? undefined })}
              clearable
              searchable
              error={fieldError(problem, 'resource_type')}
              comboboxProps={{ withinPortal: true }}
            />
            <TextInput
              label="Resource"
              description="Its uuid: one agent's or workflow's history"
              placeholder="0193f0c1-…"
              value={resource}
              onChange={(event) => setResource(event.currentTarget.value)}
              error={fieldError(problem, 'resource_uuid')}
            />
            <Select
              label="Actor"
              description="The member who acted"
              placeholder="Anyone"
              data={memberOptions}
              value={others.actor_user_id ? String(others.actor_user_id) : null}
              onChange={(value) => change({ actor_user_id: value ? Number(value) : undefined })}
              clearable
              searchable
              error={fieldError(problem, 'actor_user_id')}
              comboboxProps={{ withinPortal: true }}
            />
            <DateInput
              label="From"
              description="First day, UTC"
              clearButtonProps={{ 'aria-label': 'Clear the first day' }}
              placeholder="YYYY-MM-DD"
              valueFormat="YYYY-MM-DD"
              clearable
              value={others.date_from ?? null}
              onChange={(value) => change({ date_from: value ?? undefined })}
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
              value={others.date_to ?? null}
              onChange={(value) => change({ date_to: value ?? undefined })}
              error={fieldError(problem, 'date_to')}
              popoverProps={{ withinPortal: true }}
            />
          </SimpleGrid>
          {exportFailure ? (
            <Alert color="red" title={`The export failed: ${describeStatus(exportFailure).title}`} role="alert" my="sm">
              {describeStatus(exportFailure).detail}
            </Alert>
          ) : null}
          {refused.length ? (
            <Alert color="red" title="The service refused these filters" role="alert" my="sm">
              {refused.join('; ')}
            </Alert>
          ) : null}
          <ListStates
            query={problem?.status === 400 ? { ...events, error: null } : events}
            rows={problem?.status === 400 ? undefined : events.data?.data}
            loading="Loading the audit log"
            empty={{
              title: Object.keys(filters).length ? 'No event matches these filters' : 'No events yet',
              detail: Object.keys(filters).length ? 'Clear a filter to see more.' : 'Changes made in this workspace are recorded here.',
            }}
            paging={{ page, onChange: setPage }}
          >
            {(rows) => (
              <div style={{ opacity: events.isPlaceholderData ? 0.6 : 1 }} aria-busy={events.isPlaceholderData}>
                <DataTable
                  columns={['When', 'Action', 'Actor', 'Resource', 'Changed', { hidden: 'Open' }]}
                  minWidth={860}
                  label="Audit events"
                >
                  {rows.map((event) => (
                    <EventRow key={event.uuid} event={event} onOpen={() => setOpened(event.uuid)} />
                  ))}
                </DataTable>
              </div>
            )}
          </ListStates>
          {events.data && !events.error ? (
            <Text size="xs" c="dimmed" mt="xs">
              {events.data.meta.total.toLocaleString('en')} event{events.data.meta.total === 1 ? '' : 's'} match
            </Text>
          ) : null}
        </>
      )}
      <AuditEventModal eventUuid={opened} onClose={() => setOpened(null)} />
    </>
  )
}

function EventRow({ event, onOpen }: { event: AuditEvent; onOpen: () => void }) {
  const fields = Object.keys(event.changes ?? {})
  const agentLink = event.resource?.type === 'agent' && event.resource.uuid && !event.action.endsWith('.delete')
  return (
    <Table.Tr>
      <Table.Td style={{ whiteSpace: 'nowrap' }}>
        <Text size="sm">
          <time dateTime={event.occurred_at}>{dateTimeFormat.format(new Date(event.occurred_at))}</time>
        </Text>
      </Table.Td>
      <Table.Td>
        <Badge variant="light" tt="none">
          {event.action}
        </Badge>
      </Table.Td>
      <Table.Td style={{ maxWidth: 180 }}>
        <Text size="sm" truncate="end" title={actorWords(event.actor)}>
          {actorWords(event.actor)}
        </Text>
      </Table.Td>
      <Table.Td style={{ maxWidth: 240 }}>
        {agentLink ? (
          <Text
            component={Link}
            to={`/agents/${event.resource!.uuid}`}
            size="sm"
            truncate="end"
            display="block"
            title={resourceWords(event.resource)}
          >
            {resourceWords(event.resource)}
          </Text>
        ) : (
          <Text size="sm" truncate="end" title={resourceWords(event.resource)}>
            {resourceWords(event.resource)}
          </Text>
        )}
      </Table.Td>
      <Table.Td style={{ maxWidth: 240 }}>
        <Text
          size="sm"
          lineClamp={2}
          title={fields.join(', ')}
          c={fields.length ? undefined : 'dimmed'}
          style={{ overflowWrap: 'anywhere' }}
        >
          {fields.length ? fields.join(', ') : 'Nothing'}
        </Text>
      </Table.Td>
      <Table.Td>
        <Button
          size="xs"
          variant="light"
          onClick={onOpen}
          aria-label={`Open the ${event.action} event of ${dateTimeFormat.format(new Date(event.occurred_at))}`}
        >
          Open
        </Button>
      </Table.Td>
    </Table.Tr>
  )
}
