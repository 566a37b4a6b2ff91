/**
 * One audit event opened (`auditEvents.retrieve`, `GET /api/v1/audit-events/{audit_event_uuid}`):
 * when, the action, who acted and with which token, the resource, the request id (which leads to
 * the log lines of its request), the client's address and user agent, and `changes` as a table of
 * each field's value before and after. Secrets arrive from the service already redacted.
 */
import { Code, Modal, Stack, Table, Text } from '@mantine/core'
import type { ReactNode } from 'react'
import { ErrorNotice, Loading } from '../../ui/states.tsx'
import { useAuditEvent, type AuditEvent } from './api.ts'
import { actorWords, resourceWords } from './audit-model.ts'

const dateTimeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'long', timeStyle: 'medium' })

/** A value of `changes` as text: strings as they are, "none" for null, anything else as JSON. */
function valueText(value: unknown): string {
  if (value === null || value === undefined) return ''
  if (typeof value === 'string') return value
  return JSON.stringify(value, null, 2)
}

export function AuditEventModal({ eventUuid, onClose }: { eventUuid: string | null; onClose: () => void }) {
  return (
    <Modal opened={eventUuid !== null} onClose={onClose} title="Audit event" size="xl">
      {eventUuid === null ? null : <EventBody eventUuid={eventUuid} />}
    </Modal>
  )
}

function EventBody({ eventUuid }: { eventUuid: string }) {
  const event = useAuditEvent(eventUuid)
  if (event.isPending) return <Loading label="Loading the event" />
  if (event.error) return <ErrorNotice error={event.error} onRetry={() => void event.refetch()} />
  const data = event.data.data
  const token = data.actor.token_kind
    ? `${data.actor.token_kind === 'basic' ? 'sign-in' : 'application'} token ${data.actor.token_uuid ?? ''}`
    : 'none'
  return (
    <Stack gap="sm">
      <Table aria-label="Event" withRowBorders={false} verticalSpacing={4}>
        <Table.Tbody>
          <Row label="Action">
            <Code>{data.action}</Code>
          </Row>
          <Row label="When">
            <time dateTime={data.occurred_at}>{dateTimeFormat.format(new Date(data.occurred_at))}</time>
          </Row>
          <Row label="Actor">
            {actorWords(data.actor)}
            {data.actor.user ? ` (user #${data.actor.user.id})` : ''} · {data.actor.type}
          </Row>
          <Row label="Token">{token}</Row>
          <Row label="Resource">{resourceWords(data.resource)}</Row>
          <Row label="Request id">{data.request_id ? <Code>{data.request_id}</Code> : 'none'}</Row>
          <Row label="Address">{data.ip ?? 'unknown'}</Row>
          <Row label="User agent">{data.user_agent ?? 'unknown'}</Row>
        </Table.Tbody>
      </Table>
      <Changes changes={data.changes} />
    </Stack>
  )
}

function Row({ label, children }: { label: string; children: ReactNode }) {
  return (
    <Table.Tr>
      <Table.Th scope="row" style={{ width: 130, verticalAlign: 'top' }}>
        {label}
      </Table.Th>
      <Table.Td style={{ overflowWrap: 'anywhere' }}>{children}</Table.Td>
    </Table.Tr>
  )
}

/** Each changed field with its value before and after; "none" where there was or is none. */
function Changes({ changes }: { changes: AuditEvent['changes'] }) {
  const entries = Object.entries(changes ?? {})
  if (entries.length === 0) {
    return (
      <Text size="sm" c="dimmed">
        No field changed (a delete, or an update that changed nothing).
      </Text>
    )
  }
  return (
    <Table.ScrollContainer minWidth={520}>
      <Table striped withTableBorder aria-label="Changes">
        <Table.Thead>
          <Table.Tr>
            <Table.Th scope="col">Field</Table.Th>
            <Table.Th scope="col">From</Table.Th>
            <Table.Th scope="col">To</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {entries.map(([field, change]) => (
            <Table.Tr key={field}>
              <Table.Th scope="row" style={{ verticalAlign: 'top' }}>
                <Code>{field}</Code>
              </Table.Th>
              <ChangeCell value={change.from} />
              <ChangeCell value={change.to} />
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  )
}

function ChangeCell({ value }: { value: unknown }) {
  const text = valueText(value)
  return (
    <Table.Td style={{ verticalAlign: 'top', maxWidth: 320 }}>
      {text ? (
        <Text
          size="sm"
          ff={typeof value === 'string' ? undefined : 'monospace'}
          style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere', maxHeight: 240, overflowY: 'auto' }}
        >
          {text}
        </Text>
      ) : (
        <Text size="sm" c="dimmed">
          none
        </Text>
      )}
    </Table.Td>
  )
}
