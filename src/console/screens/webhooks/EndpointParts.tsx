/**
 * Pieces of an endpoint shown on both webhooks screens: its event types as badges, its state
 * (active, or disabled with the reason the service gave), and how a failed action is told (a
 * notification with the failure in words).
 */
import { Badge, Group, Stack, Text } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { describeProblem } from '../../ui/states.tsx'
import { describeEventTypes, type Endpoint, type EventChoice } from './webhook-model.ts'

/** How many event types are shown before "+n more" (whose title lists them all). */
const SHOWN_TYPES = 3

export function EventTypeBadges({ types }: { types: readonly EventChoice[] }) {
  const names = describeEventTypes(types)
  const rest = names.slice(SHOWN_TYPES)
  return (
    <Group gap={4}>
      {names.slice(0, SHOWN_TYPES).map((name) => (
        <Badge key={name} variant="light" color={name === 'All events' ? 'blue' : 'gray'} tt="none" maw="100%">
          {name}
        </Badge>
      ))}
      {rest.length ? (
        <Badge variant="outline" color="gray" tt="none" title={names.join(', ')}>
          +{rest.length} more
        </Badge>
      ) : null}
    </Group>
  )
}

export function EndpointState({ endpoint }: { endpoint: Endpoint }) {
  return (
    <Stack gap={2} align="flex-start">
      <Badge variant="light" color={endpoint.is_active ? 'green' : 'gray'}>
        {endpoint.is_active ? 'active' : 'disabled'}
      </Badge>
      {!endpoint.is_active ? (
        <Text
          size="xs"
          c={endpoint.disabled_reason ? 'red' : 'dimmed'}
          lineClamp={3}
          title={endpoint.disabled_reason ?? undefined}
          style={{ overflowWrap: 'anywhere' }}
        >
          {endpoint.disabled_reason ?? 'Disabled by hand: no events are sent until it is enabled.'}
        </Text>
      ) : null}
    </Stack>
  )
}

/** A mutation's `onError` that tells of the failure of `action` in a notification. */
export function actionFailed(action: string) {
  return (error: unknown) => {
    const { title, detail } = describeProblem(error)
    notifications.show({ color: 'red', title: `${action} failed: ${title}`, message: detail })
  }
}
