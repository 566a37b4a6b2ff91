/**
 * One webhook delivery (`webhooks.delivery`, `GET /api/v1/webhook-deliveries/{delivery_uuid}`):
 * its status, event, `webhook-id` (the event's id, the same on every attempt), the next attempt
 * when one is due, each attempt (when, the answer's status code or the error, how long, the
 * start of the answer's body) and the payload sent. "Redeliver" (`webhooks.redeliver`,
 * `POST .../redeliver`) attempts it again now; the service refuses it (409, said in words) while
 * an attempt is under way or while the endpoint is disabled (a ping excepted).
 */
import { Badge, Button, CloseButton, Code, Group, Paper, Stack, Table, Text, Title } from '@mantine/core'
import { useEffect, useRef } from 'react'
import { ErrorNotice, Loading } from '../../ui/states.tsx'
import { useDelivery, useRedeliver } from './api.ts'
import { answeredOk, describeAttempt, formatTime, STATUS_COLORS, type Delivery, type DeliveryStatus } from './webhook-model.ts'

export function DeliveryStatusBadge({ status }: { status: DeliveryStatus }) {
  return (
    <Badge color={STATUS_COLORS[status]} variant="light">
      {status}
    </Badge>
  )
}

export function DeliveryPanel({ uuid, onClose }: { uuid: string; onClose: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null)
  const delivery = useDelivery(uuid)
  const redeliver = useRedeliver()
  const loaded = Boolean(delivery.data)
  useEffect(() => {
    if (loaded) heading.current?.focus()
  }, [loaded])
  const data = delivery.data?.data
  return (
    <Paper withBorder p="md" mt="lg" component="section" aria-labelledby="delivery-title">
      <Group justify="space-between" wrap="nowrap" mb="sm">
        <Title order={3} id="delivery-title" ref={heading} tabIndex={-1} style={{ overflowWrap: 'anywhere', minWidth: 0 }}>
          Delivery {data ? `of ${data.event_type}` : ''}
        </Title>
        <CloseButton onClick={onClose} aria-label="Close the delivery" />
      </Group>
      {delivery.isPending ? <Loading label="Loading the delivery" /> : null}
      {delivery.error ? <ErrorNotice error={delivery.error} onRetry={() => void delivery.refetch()} /> : null}
      {redeliver.error ? <ErrorNotice error={redeliver.error} /> : null}
      {data ? (
        <Stack gap="sm">
          <Group gap="sm" wrap="wrap">
            <DeliveryStatusBadge status={data.status} />
            <Button size="xs" variant="light" loading={redeliver.isPending} onClick={() => redeliver.mutate({ delivery_uuid: uuid })}>
              Redeliver
            </Button>
          </Group>
          <Facts delivery={data} />
          <Title order={4} size="h5">
            Attempts ({data.attempts.length})
          </Title>
          <Attempts delivery={data} />
          <Text size="xs" fw={600} c="dimmed">
            Payload
          </Text>
          <Code block aria-label="Payload" style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere', maxHeight: 240, overflow: 'auto' }}>
            {JSON.stringify(data.payload, null, 2)}
          </Code>
        </Stack>
      ) : null}
    </Paper>
  )
}

function Facts({ delivery }: { delivery: Delivery }) {
  return (
    <Stack gap={2}>
      <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
        <Text span c="dimmed" size="sm">
          webhook-id:{' '}
        </Text>
        <Text span ff="monospace" size="sm">
          {delivery.event_id}
        </Text>
      </Text>
      <Text size="sm">
        <Text span c="dimmed" size="sm">
          Created:{' '}
        </Text>
        {formatTime(delivery.created_at)}
      </Text>
      {delivery.next_attempt_at ? (
        <Text size="sm">
          <Text span c="dimmed" size="sm">
            Next attempt:{' '}
          </Text>
          {formatTime(delivery.next_attempt_at)}
        </Text>
      ) : null}
    </Stack>
  )
}

function Attempts({ delivery }: { delivery: Delivery }) {
  if (delivery.attempts.length === 0) {
    return (
      <Text size="sm" c="dimmed">
        Not attempted yet.
      </Text>
    )
  }
  return (
    <Table.ScrollContainer minWidth={560}>
      <Table striped aria-label="Attempts">
        <Table.Thead>
          <Table.Tr>
            <Table.Th scope="col">#</Table.Th>
            <Table.Th scope="col">At</Table.Th>
            <Table.Th scope="col">Result</Table.Th>
            <Table.Th scope="col">Duration</Table.Th>
            <Table.Th scope="col">Answer</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {delivery.attempts.map((attempt, index) => (
            <Table.Tr key={`${attempt.attempted_at}-${index}`}>
              <Table.Td>{index + 1}</Table.Td>
              <Table.Td>
                <Text size="sm">{formatTime(attempt.attempted_at)}</Text>
              </Table.Td>
              <Table.Td style={{ maxWidth: 220 }}>
                <Text size="sm" c={answeredOk(attempt) ? 'green' : 'red'} style={{ overflowWrap: 'anywhere' }}>
                  {describeAttempt(attempt)}
                </Text>
              </Table.Td>
              <Table.Td>{attempt.duration_ms} ms</Table.Td>
              <Table.Td style={{ maxWidth: 240 }}>
                {attempt.response_body ? (
                  <Text size="xs" ff="monospace" lineClamp={3} title={attempt.response_body} style={{ overflowWrap: 'anywhere' }}>
                    {attempt.response_body}
                  </Text>
                ) : (
                  <Text size="sm" c="dimmed">
                    –
                  </Text>
                )}
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  )
}
