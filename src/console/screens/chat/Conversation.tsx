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
 * the thread's `active_run` names it (else the newest message that a run wrote: `run_uuid`; a run
 * stores the user's message when it starts), `runs.retrieve` says whether it is still going, and
 * the events are followed from the first.
 *
 * A busy thread (docs/api/runs.md, "Busy threads") says what it is busy with above the composer.
 * A message is sent with `if_busy: reject`: one sent to a thread that became busy meanwhile (a run
 * started elsewhere) is refused with a 409, said in words, and the screen follows the run that
 * holds the thread; nothing waits unseen in a queue. A run waiting for a person shows its tool
 * calls with Approve and Deny (`approvals.approve`, `approvals.deny`, through the approvals
 * screen's dialog), and the answer goes on in the same stream once they are decided.
 * The version picker pins the run to a version of the agent (`version`).
 */
import { Alert, Badge, Button, Center, Code, Group, Loader, Paper, Stack, Text } from '@mantine/core'
import { useCallback, useEffect, useMemo, useRef, useState } from 'react'
import { useLocation, useNavigate } from 'react-router'
import { problemOf } from '../../lib/api.ts'
import { fieldError } from '../../ui/forms.ts'
import { Empty, ErrorNotice, describeStatus } from '../../ui/states.tsx'
import { DecisionModal, type Decision } from '../approvals/DecisionModal.tsx'
import { useCancelRun, useMessages, useRefreshConversation, useRun, useSendInThread, useStartThread, useThread } from './api.ts'
import { AnswerItems, Bubble, MessageText, Sources, UsageLine, userText } from './AnswerParts.tsx'
import { Composer } from './Composer.tsx'
import { useRunFollower, type PendingApproval, type RunStatus, type RunView } from './runStream.ts'
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

/** What a busy thread is busy with, in words, by its run's status. */
const BUSY_WORDS: Record<string, string> = {
  queued: 'An earlier message is queued and will be answered first.',
  running: 'An answer is being written.',
  awaiting_approval: 'The answer waits for a tool call to be approved or denied.',
}

/** The tool calls a run waits on, each with Approve and Deny; a decided one says so until the run goes on. */
function ApprovalRequests({
  approvals,
  decided,
  onDecide,
}: {
  approvals: PendingApproval[]
  decided: Record<string, string>
  onDecide: (decision: Decision) => void
}) {
  if (approvals.length === 0) return null
  return (
    <Stack gap="xs">
      {approvals.map((approval) => {
        const status = decided[approval.uuid] ?? approval.status
        return (
          <Paper key={approval.uuid} withBorder p="xs" radius="sm" aria-label={`Approval of ${approval.tool_name}`} component="section">
            <Group justify="space-between" gap="xs" wrap="wrap">
              <Text size="sm" fw={600} style={{ overflowWrap: 'anywhere' }}>
                {status === 'pending' ? 'Waiting for your approval' : 'Decided'}: {approval.tool_name}
              </Text>
              <Badge size="sm" variant="light" color={status === 'pending' ? 'yellow' : status === 'approved' ? 'teal' : 'gray'}>
                {status}
              </Badge>
            </Group>
            <Code block style={userText} mt={4}>
              {JSON.stringify(approval.arguments, null, 2)}
            </Code>
            {status === 'pending' ? (
              <Group gap="xs" mt="xs">
                <Button size="xs" onClick={() => onDecide({ approval, kind: 'approve' })}>
                  Approve…
                </Button>
                <Button size="xs" variant="light" color="red" onClick={() => onDecide({ approval, kind: 'deny' })}>
                  Deny…
                </Button>
              </Group>
            ) : (
              <Text size="xs" c="dimmed" mt={4} role="status">
                The answer goes on once every call is decided.
              </Text>
            )}
          </Paper>
        )
      })}
    </Stack>
  )
}

function StreamedAnswer({
  view,
  agentName,
  decided,
  onDecide,
}: {
  view: RunView
  agentName: string
  decided: Record<string, string>
  onDecide: (decision: Decision) => void
}) {
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
      <ApprovalRequests approvals={view.approvals} decided={decided} onDecide={onDecide} />
      {writing && !reconnecting && view.items.length === 0 && view.approvals.length === 0 ? (
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
            {view.error?.message ?? 'The run failed.'} {view.error?.code ? `(${view.error.code})` : ''} Nothing of it was stored; send the
            message again to retry.
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

interface ConversationProps {
  agentUuid: string
  agentName: string
  threadUuid: string | null
  /** The agent's current version, the newest the version picker offers. */
  currentVersion: number
  /** The version runs are pinned to (null: the latest), kept by the agent's screen across its threads. */
  version: number | null
  onVersion: (version: number | null) => void
}

export function Conversation({ agentUuid, agentName, threadUuid, currentVersion, version, onVersion }: ConversationProps) {
  const navigate = useNavigate()
  const location = useLocation()
  const handed = location.state as FollowState | null
  const [followed, setFollowed] = useState<string | null>(handed?.threadUuid === threadUuid && threadUuid ? handed.runUuid : null)
  /** The run whose end has been seen and whose stored messages have been read again since. */
  const [settled, setSettled] = useState<{ runUuid: string; status: RunStatus } | null>(null)
  const messages = useMessages(threadUuid)
  const thread = useThread(threadUuid)
  const activeRun = thread.data?.data.active_run ?? null
  const [decision, setDecision] = useState<Decision | null>(null)
  /** Approvals decided on this screen, by uuid: their new status, until the run goes on. */
  const [decided, setDecided] = useState<Record<string, string>>({})

  // The hand-over is read once: kept in the history entry, it would name an old run after a reload.
  useEffect(() => {
    if (handed) void navigate(location.pathname, { replace: true, state: null })
  }, [handed, navigate, location.pathname])

  // A run still going that this page did not start (a reload, another tab): follow it.
  const newest = activeRun?.uuid ?? newestRun(messages.data)
  const candidate = newest !== followed && (followed === null || settled?.runUuid === followed) ? newest : null
  const candidateRun = useRun(candidate)
  const candidateStatus = candidateRun.data?.data.run.status
  useEffect(() => {
    if (candidate && (candidateStatus === 'running' || candidateStatus === 'queued' || candidateStatus === 'awaiting_approval')) {
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
  const sendInThread = useSendInThread(agentUuid, {
    onSuccess: (answer) => started(answer.data.run.uuid),
    // Busy with a run started elsewhere: read the thread again, whose active run the screen then follows.
    onError: (error) => {
      if (problemOf(error).status === 409) void refresh()
    },
  })
  const startThread = useStartThread({
    onSuccess: async (answer) => {
      const { uuid: runUuid, thread_uuid: newThread } = answer.data.run
      if (!newThread) return
      const state: FollowState = { runUuid, threadUuid: newThread }
      await navigate(`/chat/${agentUuid}/${newThread}`, { state })
    },
  })
  const send = threadUuid ? sendInThread : startThread
  const pinned = version === null ? {} : { version }
  const sendText = (text: string) =>
    threadUuid
      ? sendInThread.mutateAsync({ thread_uuid: threadUuid, content: text, background: true, if_busy: 'reject', ...pinned })
      : startThread.mutateAsync({ agent_uuid: agentUuid, input: text, background: true, ...pinned })
  const problem = send.error ? problemOf(send.error) : null
  const fieldProblem = fieldError(problem, threadUuid ? 'content' : 'input')
  const versionProblem = fieldError(problem, 'version')
  const busyProblem = problem?.status === 409 && threadUuid !== null
  const busyWith = running ? view.status : (activeRun?.status ?? null)
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
        <Button
          variant="subtle"
          size="xs"
          onClick={() => void messages.fetchNextPage()}
          loading={messages.isFetchingNextPage}
          style={{ alignSelf: 'center' }}
        >
          Earlier messages
        </Button>
      ) : null}
      {threadUuid === null ? <Empty title="A new thread">Your first message starts it.</Empty> : null}
      {messages.data && messages.data.length === 0 && !streaming ? <Empty title="No messages yet">Write the first one below.</Empty> : null}
      <Stack gap="sm" role="log" aria-label="Messages" style={{ minWidth: 0 }}>
        {turns.map((turn) => (
          <StoredTurn key={turn.key} turn={turn} agentName={agentName} />
        ))}
        {streaming ? <StreamedAnswer view={view} agentName={agentName} decided={decided} onDecide={setDecision} /> : null}
      </Stack>
      {busyProblem ? (
        <Alert color="yellow" title="The thread is busy" role="alert">
          <Text size="sm" style={userText}>
            {problem.message}. Your message was not sent: wait for the answer to end (or stop it), then send it again.
          </Text>
        </Alert>
      ) : problem && !fieldProblem && !versionProblem ? (
        <ErrorNotice error={send.error} />
      ) : null}
      {busyWith && BUSY_WORDS[busyWith] ? (
        <Text size="sm" c="dimmed" role="status" aria-label="Thread status">
          Busy: {BUSY_WORDS[busyWith]}
        </Text>
      ) : null}
      {stopProblem ? <ErrorNotice error={stopProblem} /> : null}
      <div
        style={{
          position: 'sticky',
          bottom: 0,
          background: 'var(--mantine-color-body)',
          paddingBlock: 'var(--mantine-spacing-xs)',
          zIndex: 1,
        }}
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
          currentVersion={currentVersion}
          version={version}
          onVersion={onVersion}
          versionError={versionProblem}
        />
      </div>
      <DecisionModal
        decision={decision}
        onClose={() => setDecision(null)}
        onDecided={(approval) => setDecided((all) => ({ ...all, [approval.uuid]: approval.status }))}
        onConflict={(approvalUuid) => setDecided((all) => ({ ...all, [approvalUuid]: 'decided elsewhere' }))}
      />
    </Stack>
  )
}
