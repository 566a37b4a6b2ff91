/**
 * One webhook endpoint's deliveries (`webhooks.retrieve`, `webhooks.deliveries`,
 * `GET /api/v1/webhook-endpoints/{endpoint_uuid}/deliveries`), newest first: status, event type,
 * when, how many attempts and how the last one ended; filtered by status and event type. One
 * delivery (`?delivery=<uuid>`, ./DeliveryPanel.tsx) shows its attempts and payload and can be
 * redelivered. "Send a ping" sends a `webhook_endpoint.ping` event and opens its delivery. The
 * list and the delivery are read again every 1.5 s while pending.
 */
import { Anchor, Button, Group, Paper, Select, Stack, Table, Text } from '@mantine/core'
import { useState } from 'react'
import { Link, useParams, useSearchParams } from 'react-router'
import { problemOf } from '../../lib/api.ts'
import { ScreenTitle, useFilter } from '../../ui/ListControls.tsx'
import { DataTable, ListStates } from '../../ui/ListTable.tsx'
import { ErrorNotice, Loading } from '../../ui/states.tsx'
import { useDeliveries, useEndpoint, usePing } from './api.ts'
import { DeliveryPanel, DeliveryStatusBadge } from './DeliveryPanel.tsx'
import { actionFailed, EndpointState, EventTypeBadges } from './EndpointParts.tsx'
import {
  answeredOk,
  DELIVERY_STATUSES,
  describeAttempt,
  EVENT_TYPES,
  formatTime,
  lastAttempt,
  type Delivery,
  type DeliveryStatus,
  type Endpoint,
  type EventType,
} from './webhook-model.ts'

export default function DeliveriesScreen() {
  const { endpointUuid = '' } = useParams()
  const [params, setParams] = useSearchParams()
  const selected = params.get('delivery')
  const open = (uuid: string | null) => setParams(uuid ? { delivery: uuid } : {}, { replace: true })
  const endpoint = useEndpoint(endpointUuid)
  const ping = usePing({ onSuccess: (answer) => open(answer.data.uuid), onError: actionFailed('The ping') })
  const refused = endpoint.error ? [403, 404].includes(problemOf(endpoint.error).status) : false
  return (
    <>
      <Anchor component={Link} to="/webhooks" size="sm">
        ← All endpoints
      </Anchor>
      <ScreenTitle title="Deliveries">
        {endpoint.data ? (
          <Button loading={ping.isPending} onClick={() => ping.mutate({ endpoint_uuid: endpointUuid })}>
            Send a ping
          </Button>
        ) : null}
      </ScreenTitle>
      {endpoint.isPending ? <Loading label="Loading the endpoint" /> : null}
      {endpoint.error ? <ErrorNotice error={endpoint.error} onRetry={refused ? undefined : () => void endpoint.refetch()} /> : null}
      {endpoint.data ? <EndpointSummary endpoint={endpoint.data.data} /> : null}
      {refused ? null : <DeliveryList endpointUuid={endpointUuid} selected={selected} onOpen={open} />}
      {selected && !refused ? <DeliveryPanel key={selected} uuid={selected} onClose={() => open(null)} /> : null}
    </>
  )
}

function EndpointSummary({ endpoint }: { endpoint: Endpoint }) {
  return (
    <Paper withBorder p="sm" mb="md">
      <Group justify="space-between" align="flex-start" gap="sm">
        <Stack gap={4} style={{ minWidth: 0, flex: '1 1 260px' }}>
          <Text ff="monospace" size="sm" fw={600} style={{ overflowWrap: 'anywhere' }}>
            {endpoint.url}
          </Text>
          {endpoint.description ? (
            <Text size="sm" c="dimmed" style={{ overflowWrap: 'anywhere' }}>
              {endpoint.description}
            </Text>
          ) : null}
          <EventTypeBadges types={endpoint.event_types} />
        </Stack>
        <EndpointState endpoint={endpoint} />
      </Group>
    </Paper>
  )
}

function DeliveryList({
  endpointUuid,
  selected,
  onOpen,
}: {
  endpointUuid: string
  selected: string | null
  onOpen: (uuid: string) => void
}) {
  const [page, setPage] = useState(1)
  const [status, setStatus] = useFilter<DeliveryStatus | null>(null, setPage)
  const [eventType, setEventType] = useFilter<EventType | null>(null, setPage)
  const deliveries = useDeliveries({
    endpoint_uuid: endpointUuid,
    page,
    per_page: 20,
    ...(status ? { status } : {}),
    ...(eventType ? { event_type: eventType } : {}),
  })
  const filtered = Boolean(status || eventType)
  return (
    <>
      <Group mb="md" align="end" wrap="wrap">
        <Select
          label="Status"
          placeholder="Any status"
          clearable
          data={DELIVERY_STATUSES}
          value={status}
          onChange={(value) => setStatus(DELIVERY_STATUSES.find((s) => s === value) ?? null)}
          w={180}
          comboboxProps={{ withinPortal: true }}
        />
        <Select
          label="Event type"
          placeholder="Any event type"
          clearable
          searchable
          data={EVENT_TYPES}
          value={eventType}
          onChange={(value) => setEventType(EVENT_TYPES.find((type) => type === value) ?? null)}
          w={280}
          maw="100%"
          comboboxProps={{ withinPortal: true }}
        />
      </Group>
      <ListStates
        query={deliveries}
        rows={deliveries.data?.data}
        loading="Loading deliveries"
        empty={
          filtered
            ? { title: 'No delivery matches', detail: 'Choose another status or event type.' }
            : { title: 'No deliveries yet', detail: 'Events of the types this endpoint takes show here, as does a ping.' }
        }
        paging={{ page, onChange: setPage }}
      >
        {(rows) => (
          <DataTable
            columns={['Status', 'Event type', 'Created', 'Attempts', 'Last result', { hidden: 'Details' }]}
            minWidth={760}
            label="Deliveries"
            highlightOnHover
          >
            {rows.map((delivery) => (
              <DeliveryRow key={delivery.uuid} delivery={delivery} selected={delivery.uuid === selected} onOpen={onOpen} />
            ))}
          </DataTable>
        )}
      </ListStates>
    </>
  )
}

function DeliveryRow({ delivery, selected, onOpen }: { delivery: Delivery; selected: boolean; onOpen: (uuid: string) => void }) {
  const last = lastAttempt(delivery)
  return (
    <Table.Tr bg={selected ? 'var(--mantine-color-blue-light)' : undefined}>
      <Table.Td>
        <DeliveryStatusBadge status={delivery.status} />
      </Table.Td>
      <Table.Td style={{ maxWidth: 240 }}>
        <Text size="sm" ff="monospace" truncate="end" title={delivery.event_type}>
          {delivery.event_type}
        </Text>
      </Table.Td>
      <Table.Td>
        <Text size="sm">{formatTime(delivery.created_at)}</Text>
      </Table.Td>
      <Table.Td>{delivery.attempts.length}</Table.Td>
      <Table.Td style={{ maxWidth: 240 }}>
        {last ? (
          <Text
            size="sm"
            c={answeredOk(last) ? undefined : 'red'}
            lineClamp={2}
            title={describeAttempt(last)}
            style={{ overflowWrap: 'anywhere' }}
          >
            {describeAttempt(last)}
          </Text>
        ) : (
          <Text size="sm" c="dimmed">
            {delivery.next_attempt_at ? `Due ${formatTime(delivery.next_attempt_at)}` : '–'}
          </Text>
        )}
      </Table.Td>
      <Table.Td>
        <Button
          size="xs"
          variant="light"
          onClick={() => onOpen(delivery.uuid)}
          aria-label={`Details of the ${delivery.event_type} delivery of ${formatTime(delivery.created_at)}`}
          aria-pressed={selected}
        >
          Details
        </Button>
      </Table.Td>
    </Table.Tr>
  )
}
