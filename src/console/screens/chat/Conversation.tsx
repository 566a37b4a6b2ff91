/**
 * One conversation with an agent: the thread's stored messages (`messages.list`, newest 50 first,
 * earlier ones on demand), the answer being written (./runStream.ts), and the composer.
 *
 * Sending starts a run in the background and follows it: in a thread `runs.thread`, without one
 * `runs.agent`, which makes the thread (then the screen moves to it, and names it after the
 * message with `threads.update`, which costs no model call). Stop is `runs.cancel`. When the run
 * ends the messages are read again and the stored answer replaces the streamed one; a failed or
 * stopped run keeps its streamed part on screen with the reason, since it stored no answer.
 *
 * Opening a thread (a reload, another tab) while its last run is still going picks that run up:
 * the newest message that a run wrote names it (`run_uuid`; a run stores the user's message when
 * it starts), `runs.retrieve` says whether it is still running, and the events are followed from
 * the first.
 */
import { Alert, Button, Center, Loader, Stack, Text } from '@mantine/core'
import { useCallback, useEffect, useMemo, useRef, useState } from 'react'
import { useLocation, useNavigate } from 'react-router'
import { problemOf } from '../../lib/api.ts'
import { fieldError } from '../../ui/forms.ts'
import { Empty, ErrorNotice, describeStatus } from '../../ui/states.tsx'
import { useCancelRun, useMessages, useRefreshConversation, useRun, useSendInThread, useStartThread } from './api.ts'
import { AnswerItems, Bubble, MessageText, Sources, UsageLine, userText } from './AnswerParts.tsx'
import { Composer } from './Composer.tsx'
import { useRunFollower, type RunStatus, type RunView } from './runStream.ts'
import { toTurns, type Message, type Turn } from './turns.ts'

/** What a screen that started a run hands to the thread it moves to (router state). */
export interface FollowState {
  runUuid: string
  threadUuid: string
}

/** Keeps the page scrolled to its end while it grows, unless the reader scrolled up. */
function useStickToEnd(dependency: unknown) {
  const stuck = useRef(true)
  useEffect(() => {
    const onScroll = () => {
      stuck.current = window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 120
    }
    window.addEventListener('scroll', onScroll, { passive: true })
    return () => window.removeEventListener('scroll', onScroll)
  }, [])
  useEffect(() => {
    if (stuck.current) window.scrollTo({ top: document.documentElement.scrollHeight })
  }, [dependency])
}

function StoredTurn({ turn, agentName }: { turn: Turn; agentName: string }) {
  if (turn.kind === 'user') {
    return (
      <Bubble author="You" mine label="Your message">
        <MessageText text={turn.text} />
      </Bubble>
    )
  }
  if (turn.kind === 'system') {
    return (
      <Text size="sm" c="dimmed" style={userText}>
        System: {turn.text}
      </Text>
    )
  }
  return (
    <Bubble author={agentName} mine={false} label={`Answer of ${agentName}`}>
      <AnswerItems items={turn.items} />
      <Sources sources={turn.sources} />
      <UsageLine usage={turn.usage} model={turn.model} />
    </Bubble>
  )
}

function StreamedAnswer({ view, agentName }: { view: RunView; agentName: string }) {
  const writing = view.connection !== 'ended'
  const reconnecting = writing && view.connection === 'connecting' && view.events > 0
  return (
    <Bubble author={agentName} mine={false} label={`Answer of ${agentName}${writing ? ' (being written)' : ''}`} busy={writing}>
      {view.warnings.map((warning, index) => (
        <Alert key={index} color="yellow" title="Warning" p="xs">
          <Text size="sm" style={userText}>
            {warning.message}
          </Text>
        </Alert>
      ))}
      <AnswerItems items={view.items} pending={writing} />
      {writing && !reconnecting && view.items.length === 0 ? (
        <Center>
          <Loader size="xs" mr="xs" />
          <Text size="sm" c="dimmed" role="status">
            Thinking…
          </Text>
        </Center>
      ) : null}
      {reconnecting ? (
        <Text size="sm" c="dimmed" role="status">
          <Loader size="xs" mr="xs" />
          Connection lost: resuming the answer…
        </Text>
      ) : null}
      <Sources sources={view.sources} />
      <UsageLine usage={view.usage} />
      {view.status === 'failed' ? (
        <Alert color="red" title="The answer failed" role="alert">
          <Text size="sm" style={userText}>
            {view.error?.message ?? 'The run failed.'} {view.error?.code ? `(${view.error.code})` : ''} Nothing of it was stored; send the message again to retry.
          </Text>
        </Alert>
      ) : null}
      {view.status === 'canceled' ? (
        <Alert color="gray" title="Stopped" role="status">
          The answer was stopped; what was written so far was not stored.
        </Alert>
      ) : null}
      {view.lost ? (
        <Alert color="red" title={describeStatus(view.lost).title} role="alert">
          <Text size="sm" style={userText}>
            The answer could not be followed: {describeStatus(view.lost).detail}
          </Text>
        </Alert>
      ) : null}
    </Bubble>
  )
}

/** The newest run that wrote a message of the thread (its user message is stored when it starts). */
function newestRun(messages: Message[] | undefined): string | null {
  if (!messages) return null
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i].run_uuid) return messages[i].run_uuid
  return null
}

export function Conversation({ agentUuid, agentName, threadUuid }: { agentUuid: string; agentName: string; threadUuid: string | null }) {
  const navigate = useNavigate()
  const location = useLocation()
  const handed = location.state as FollowState | null
  const [followed, setFollowed] = useState<string | null>(handed?.threadUuid === threadUuid && threadUuid ? handed.runUuid : null)
  /** The run whose end has been seen and whose stored messages have been read again since. */
  const [settled, setSettled] = useState<{ runUuid: string; status: RunStatus } | null>(null)
  const messages = useMessages(threadUuid)

  // The hand-over is read once: kept in the history entry, it would name an old run after a reload.
  useEffect(() => {
    if (handed) void navigate(location.pathname, { replace: true, state: null })
  }, [handed, navigate, location.pathname])

  // A run still going that this page did not start (a reload, another tab): follow it.
  const newest = newestRun(messages.data)
  const candidate = newest !== followed && (followed === null || settled?.runUuid === followed) ? newest : null
  const candidateRun = useRun(candidate)
  const candidateStatus = candidateRun.data?.data.run.status
  useEffect(() => {
    if (candidate && (candidateStatus === 'running' || candidateStatus === 'queued')) {
      setSettled(null)
      setFollowed(candidate)
    }
  }, [candidate, candidateStatus])

  const refresh = useRefreshConversation(agentUuid, threadUuid)
  const onEnded = useCallback(
    (status: RunStatus) => {
      const runUuid = followed
      if (!runUuid) return
      void refresh().finally(() => setSettled({ runUuid, status }))
    },
    [followed, refresh],
  )
  const view = useRunFollower(followed, onEnded)
  const running = followed !== null && view.connection !== 'ended'
  // The stored answer replaces the streamed one once it has been read; a run that stored none keeps it.
  const replaced = followed !== null && settled?.runUuid === followed && settled.status === 'succeeded'
  const streaming = followed !== null && !replaced
  const turns = useMemo(() => toTurns(messages.data ?? [], streaming ? followed : null), [messages.data, streaming, followed])

  const stop = useCancelRun()
  const started = (runUuid: string) => {
    stop.reset()
    setSettled(null)
    setFollowed(runUuid)
  }
  const sendInThread = useSendInThread(agentUuid, { onSuccess: (answer) => started(answer.data.run.uuid) })
  const startThread = useStartThread({
    onSuccess: async (answer) => {
      const { uuid: runUuid, thread_uuid: newThread } = answer.data.run
      if (!newThread) return
      const state: FollowState = { runUuid, threadUuid: newThread }
      await navigate(`/chat/${agentUuid}/${newThread}`, { state })
    },
  })
  const send = threadUuid ? sendInThread : startThread
  const sendText = (text: string) =>
    threadUuid
      ? sendInThread.mutateAsync({ thread_uuid: threadUuid, content: text, background: true })
      : startThread.mutateAsync({ agent_uuid: agentUuid, input: text, background: true })
  const problem = send.error ? problemOf(send.error) : null
  const fieldProblem = fieldError(problem, threadUuid ? 'content' : 'input')
  const stopProblem = stop.error && problemOf(stop.error).status !== 409 ? stop.error : null

  const streamedLength = view.items.reduce((sum, item) => sum + (item.kind === 'text' ? item.text.length : 1), 0)
  useStickToEnd(`${turns.length}:${streamedLength}:${view.connection}`)

  return (
    <Stack gap="sm" style={{ minWidth: 0 }}>
      {messages.error ? <ErrorNotice error={messages.error} onRetry={() => void messages.refetch()} /> : null}
      {messages.isLoading ? (
        <Center py="md" role="status">
          <Loader size="sm" mr="sm" />
          <Text c="dimmed">Loading messages…</Text>
        </Center>
      ) : null}
      {messages.hasNextPage ? (
        <Button variant="subtle" size="xs" onClick={() => void messages.fetchNextPage()} loading={messages.isFetchingNextPage} style={{ alignSelf: 'center' }}>
          Earlier messages
        </Button>
      ) : null}
      {threadUuid === null ? <Empty title="A new thread">Your first message starts it.</Empty> : null}
      {messages.data && messages.data.length === 0 && !streaming ? <Empty title="No messages yet">Write the first one below.</Empty> : null}
      <Stack gap="sm" role="log" aria-label="Messages" style={{ minWidth: 0 }}>
        {turns.map((turn) => (
          <StoredTurn key={turn.key} turn={turn} agentName={agentName} />
        ))}
        {streaming ? <StreamedAnswer view={view} agentName={agentName} /> : null}
      </Stack>
      {problem && !fieldProblem ? <ErrorNotice error={send.error} /> : null}
      {stopProblem ? <ErrorNotice error={stopProblem} /> : null}
      <div
        style={{ position: 'sticky', bottom: 0, background: 'var(--mantine-color-body)', paddingBlock: 'var(--mantine-spacing-xs)', zIndex: 1 }}
      >
        <Composer
          onSend={async (text) => {
            try {
              await sendText(text)
              return true
            } catch {
              return false
            }
          }}
          onStop={() => followed && stop.mutate({ run_uuid: followed })}
          running={running}
          stopping={stop.isPending}
          sending={send.isPending}
          error={fieldProblem}
        />
      </div>
    </Stack>
  )
}
