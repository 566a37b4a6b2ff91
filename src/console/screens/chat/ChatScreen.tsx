/**
 * Chat (docs/console.md, "Streaming and resuming"): `/chat` picks an agent (./AgentPicker.tsx);
 * `/chat/<agent>` lists the caller's threads with it (./ThreadNav.tsx) and starts a new one;
 * `/chat/<agent>/<thread>` shows the thread's messages and the answer streaming in
 * (./Conversation.tsx, ./runStream.ts).
 *
 * Procedures: `agents.list`, `agents.retrieve`, `threads.list`, `threads.retrieve`,
 * `threads.update` (naming a new thread), `messages.list`, `runs.agent`, `runs.thread`,
 * `runs.retrieve`, `runs.cancel`, `approvals.approve`, `approvals.deny`, and the `runs.events`
 * subscription over Server-Sent Events.
 */
import { Box, Button, Flex, Group, Stack, Text, Title } from '@mantine/core'
import { useState } from 'react'
import { Link, Navigate, useParams } from 'react-router'
import { ScreenTitle } from '../../ui/ListControls.tsx'
import { ErrorNotice, Loading } from '../../ui/states.tsx'
import { useAgent } from '../agents/api.ts'
import { AgentPicker } from './AgentPicker.tsx'
import { useThread, useThreads } from './api.ts'
import { Conversation } from './Conversation.tsx'
import { ThreadList, ThreadSelect, threadTitle } from './ThreadNav.tsx'

export default function ChatScreen() {
  const { agentUuid, threadUuid } = useParams()
  if (!agentUuid) return <AgentPicker />
  return <AgentChat key={agentUuid} agentUuid={agentUuid} threadUuid={threadUuid ?? null} />
}

function AgentChat({ agentUuid, threadUuid }: { agentUuid: string; threadUuid: string | null }) {
  const agent = useAgent(agentUuid)
  const thread = useThread(threadUuid)
  const threads = useThreads(agentUuid)
  // Pinned for the agent, not the thread: a first message moves the screen to its new thread.
  const [version, setVersion] = useState<number | null>(null)

  if (agent.isPending) return <Loading label="Loading the agent" />
  if (agent.error) {
    return (
      <>
        <ScreenTitle title="Chat" />
        <ErrorNotice error={agent.error} onRetry={() => void agent.refetch()} />
        <Button component={Link} to="/chat" variant="light">
          Choose another agent
        </Button>
      </>
    )
  }
  const { name, metadata, version: current } = agent.data.data
  // A thread of another agent opened under this one: show it under its own.
  const owner = thread.data?.data.agent.uuid
  if (threadUuid && owner && owner !== agentUuid) return <Navigate to={`/chat/${owner}/${threadUuid}`} replace />
  const model = `Model: ${metadata?.large_language_model ?? 'the default model'}`
  const subtitle = thread.data ? `${model} · ${threadTitle(thread.data.data)}` : threadUuid ? model : `${model} · new thread`

  return (
    <>
      <Group justify="space-between" mb="xs" wrap="wrap" gap="sm">
        {/* A very long name is cut after two lines, whole in its tooltip. */}
        <Title order={2} lineClamp={2} title={name} style={{ overflowWrap: 'anywhere', minWidth: 0, flex: '1 1 240px' }}>
          {name}
        </Title>
        <Group gap="xs">
          <Button component={Link} to={`/chat/${agentUuid}`} variant={threadUuid ? 'filled' : 'light'}>
            New thread
          </Button>
          <Button component={Link} to="/chat" variant="subtle">
            Other agent
          </Button>
        </Group>
      </Group>
      <Text size="sm" c="dimmed" mb="sm" lineClamp={2} title={subtitle} style={{ overflowWrap: 'anywhere' }}>
        {subtitle}
      </Text>
      <Flex gap="lg" align="flex-start" direction={{ base: 'column', md: 'row' }}>
        <Box visibleFrom="md" w={260} style={{ flexShrink: 0, position: 'sticky', top: 72 }}>
          <ThreadList agentUuid={agentUuid} threadUuid={threadUuid} threads={threads} />
        </Box>
        <Stack gap="sm" style={{ flex: 1, minWidth: 0, width: '100%' }}>
          <Group hiddenFrom="md" gap="xs" align="flex-end" wrap="wrap">
            <ThreadSelect agentUuid={agentUuid} threadUuid={threadUuid} threads={threads} />
          </Group>
          {thread.error ? (
            <ErrorNotice error={thread.error} onRetry={() => void thread.refetch()} />
          ) : (
            <Conversation
              key={threadUuid ?? 'new'}
              agentUuid={agentUuid}
              agentName={name}
              threadUuid={threadUuid}
              currentVersion={current}
              version={version}
              onVersion={setVersion}
            />
          )}
        </Stack>
      </Flex>
    </>
  )
}
