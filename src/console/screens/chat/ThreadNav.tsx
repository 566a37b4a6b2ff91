/**
 * The caller's threads with one agent (`threads.list` filtered by `agent_uuid`, latest activity
 * first, 30 at a time): a side list on wide screens, a Select on narrow ones.
 */
import { Box, Button, NavLink, Select, Stack, Text } from '@mantine/core'
import dayjs from 'dayjs'
import { Link, useNavigate } from 'react-router'
import type { RouterOutputs } from '../../lib/api.ts'
import { ErrorNotice, Loading } from '../../ui/states.tsx'
import type { useThreads } from './api.ts'

type Thread = RouterOutputs['threads']['list']['data'][number]

export const threadTitle = (thread: Pick<Thread, 'name' | 'created_at'>) => thread.name?.trim() || `Thread of ${dayjs(thread.created_at).format('D MMM YYYY, HH:mm')}`

function when(thread: Thread): string {
  const at = dayjs(thread.last_message_at ?? thread.created_at)
  return `${thread.messages_count} message${thread.messages_count === 1 ? '' : 's'} · ${at.isSame(dayjs(), 'day') ? at.format('HH:mm') : at.format('D MMM YYYY')}`
}

interface Props {
  agentUuid: string
  threadUuid: string | null
  threads: ReturnType<typeof useThreads>
}

/** Wide screens: the threads as a navigation list. */
export function ThreadList({ agentUuid, threadUuid, threads }: Props) {
  const list = threads.data?.pages.flatMap((page) => page.data) ?? []
  return (
    <Box component="nav" aria-label="Threads">
      <Text size="sm" fw={600} mb="xs">
        Threads
      </Text>
      {threads.isPending ? <Loading label="Loading threads" /> : null}
      {threads.error ? <ErrorNotice error={threads.error} onRetry={() => void threads.refetch()} /> : null}
      {threads.data && list.length === 0 ? (
        <Text size="sm" c="dimmed">
          No threads yet: your first message starts one.
        </Text>
      ) : null}
      <Stack gap={2}>
        {list.map((thread) => (
          <NavLink
            key={thread.uuid}
            component={Link}
            to={`/chat/${agentUuid}/${thread.uuid}`}
            active={thread.uuid === threadUuid}
            aria-current={thread.uuid === threadUuid ? 'page' : undefined}
            label={
              <Text size="sm" lineClamp={2} style={{ overflowWrap: 'anywhere' }} title={threadTitle(thread)}>
                {threadTitle(thread)}
              </Text>
            }
            description={when(thread)}
          />
        ))}
      </Stack>
      {threads.hasNextPage ? (
        <Button variant="subtle" size="xs" mt="xs" loading={threads.isFetchingNextPage} onClick={() => void threads.fetchNextPage()}>
          More threads
        </Button>
      ) : null}
    </Box>
  )
}

/** Narrow screens: the threads in a Select. */
export function ThreadSelect({ agentUuid, threadUuid, threads }: Props) {
  const navigate = useNavigate()
  const list = threads.data?.pages.flatMap((page) => page.data) ?? []
  if (threads.error) return <ErrorNotice error={threads.error} onRetry={() => void threads.refetch()} />
  return (
    <Select
      label="Thread"
      placeholder={threads.isPending ? 'Loading threads…' : list.length === 0 ? 'No threads yet' : 'Choose a thread'}
      data={list.map((thread) => ({ value: thread.uuid, label: threadTitle(thread) }))}
      value={threadUuid}
      onChange={(uuid) => uuid && void navigate(`/chat/${agentUuid}/${uuid}`)}
      allowDeselect={false}
      renderOption={({ option }) => (
        <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
          {option.label}
        </Text>
      )}
      comboboxProps={{ withinPortal: true }}
      style={{ flex: '1 1 180px', minWidth: 0 }}
    />
  )
}
