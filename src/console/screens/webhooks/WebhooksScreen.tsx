/**
 * Webhooks: the workspace's endpoints (`webhooks.list`, `GET /api/v1/webhook-endpoints`), each
 * with its URL, event types and state (active, or disabled and why: by hand, or by the service
 * after a `410 Gone` or a long run of failures). "New endpoint" (./CreateEndpointModal.tsx) and
 * "Rotate secret" (./EndpointModals.tsx) show the signing secret once; "Ping" sends a
 * `webhook_endpoint.ping` event and opens its delivery; "Disable" and "Enable" change `is_active`
 * (enabling clears the reason); "Delete" asks first. Each endpoint's deliveries are on their own
 * screen (./DeliveriesScreen.tsx).
 *
 * Only owners and admins manage webhooks: anyone else gets the service's 403, said in words in
 * place of the list.
 */
import { Button, Group, Stack, Table, Text } from '@mantine/core'
import { useDisclosure } from '@mantine/hooks'
import { useState } from 'react'
import { Link, useNavigate } from 'react-router'
import { problemOf } from '../../lib/api.ts'
import { ScreenTitle } from '../../ui/ListControls.tsx'
import { DataTable, ListStates } from '../../ui/ListTable.tsx'
import { ErrorNotice } from '../../ui/states.tsx'
import { useEndpoints, usePing, useUpdateEndpoint } from './api.ts'
import { CreateEndpointModal } from './CreateEndpointModal.tsx'
import { DeleteEndpointModal, RotateSecretModal } from './EndpointModals.tsx'
import { actionFailed, EndpointState, EventTypeBadges } from './EndpointParts.tsx'
import type { Endpoint } from './webhook-model.ts'

export default function WebhooksScreen() {
  const [page, setPage] = useState(1)
  const [creating, { open, close }] = useDisclosure(false)
  const [rotating, setRotating] = useState<Endpoint | null>(null)
  const [deleting, setDeleting] = useState<Endpoint | null>(null)
  const endpoints = useEndpoints({ page, per_page: 20 })
  const forbidden = endpoints.error ? problemOf(endpoints.error).status === 403 : false
  return (
    <>
      <ScreenTitle title="Webhooks">{forbidden ? null : <Button onClick={open}>New endpoint</Button>}</ScreenTitle>
      <Text c="dimmed" size="sm" mb="md">
        The service sends this workspace's events to these URLs as signed POST requests (Standard Webhooks), and tries again when a delivery
        fails.
      </Text>
      <CreateEndpointModal opened={creating} onClose={close} />
      <RotateSecretModal endpoint={rotating} onClose={() => setRotating(null)} />
      <DeleteEndpointModal endpoint={deleting} onClose={() => setDeleting(null)} />
      {forbidden ? (
        <ErrorNotice error={endpoints.error} />
      ) : (
        <ListStates
          query={endpoints}
          rows={endpoints.data?.data}
          loading="Loading endpoints"
          empty={{ title: 'No webhook endpoints', detail: 'Add one to have the events of this workspace sent to a URL of yours.' }}
          paging={{ page, onChange: setPage }}
        >
          {(rows) => (
            <DataTable columns={['Endpoint', 'Event types', 'State', { hidden: 'Actions' }]} minWidth={900} label="Webhook endpoints">
              {rows.map((endpoint) => (
                <EndpointRow key={endpoint.uuid} endpoint={endpoint} onRotate={setRotating} onDelete={setDeleting} />
              ))}
            </DataTable>
          )}
        </ListStates>
      )}
    </>
  )
}

function EndpointRow({
  endpoint,
  onRotate,
  onDelete,
}: {
  endpoint: Endpoint
  onRotate: (endpoint: Endpoint) => void
  onDelete: (endpoint: Endpoint) => void
}) {
  const navigate = useNavigate()
  const deliveries = `/webhooks/${endpoint.uuid}`
  const ping = usePing({
    onSuccess: (answer) => void navigate(`${deliveries}?delivery=${answer.data.uuid}`),
    onError: actionFailed('The ping'),
  })
  const update = useUpdateEndpoint({ onError: actionFailed('Changing the endpoint') })
  return (
    <Table.Tr>
      <Table.Td style={{ maxWidth: 320 }}>
        <Text
          component={Link}
          to={deliveries}
          fw={600}
          ff="monospace"
          size="sm"
          lineClamp={2}
          title={endpoint.url}
          style={{ overflowWrap: 'anywhere' }}
        >
          {endpoint.url}
        </Text>
        {endpoint.description ? (
          <Text size="sm" c="dimmed" lineClamp={2} title={endpoint.description} style={{ overflowWrap: 'anywhere' }}>
            {endpoint.description}
          </Text>
        ) : null}
      </Table.Td>
      <Table.Td style={{ maxWidth: 260 }}>
        <EventTypeBadges types={endpoint.event_types} />
      </Table.Td>
      <Table.Td style={{ maxWidth: 220 }}>
        <EndpointState endpoint={endpoint} />
      </Table.Td>
      <Table.Td>
        <Stack gap={4} align="flex-start">
          <Group gap={4} wrap="nowrap">
            <Button size="xs" variant="light" component={Link} to={deliveries} aria-label={`Deliveries of ${endpoint.url}`}>
              Deliveries
            </Button>
            <Button
              size="xs"
              variant="light"
              loading={ping.isPending}
              aria-label={`Ping ${endpoint.url}`}
              onClick={() => ping.mutate({ endpoint_uuid: endpoint.uuid })}
            >
              Ping
            </Button>
            <Button size="xs" variant="light" aria-label={`Rotate the secret of ${endpoint.url}`} onClick={() => onRotate(endpoint)}>
              Rotate secret
            </Button>
          </Group>
          <Group gap={4} wrap="nowrap">
            <Button
              size="xs"
              variant="default"
              loading={update.isPending}
              aria-label={`${endpoint.is_active ? 'Disable' : 'Enable'} ${endpoint.url}`}
              onClick={() => update.mutate({ endpoint_uuid: endpoint.uuid, is_active: !endpoint.is_active })}
            >
              {endpoint.is_active ? 'Disable' : 'Enable'}
            </Button>
            <Button size="xs" color="red" variant="light" aria-label={`Delete ${endpoint.url}`} onClick={() => onDelete(endpoint)}>
              Delete
            </Button>
          </Group>
        </Stack>
      </Table.Td>
    </Table.Tr>
  )
}
