/**
 * Following a run's answer as it is written (docs/api/runs.md, "Event log" and "Following a run"):
 * the `runs.events` subscription over Server-Sent Events, its events folded into what the chat
 * shows (text, tool calls, sources, usage, the run's error).
 *
 * tRPC's SSE link resumes by itself after a dropped connection while the browser's EventSource
 * keeps reconnecting; but a draining service answers the reconnect 503 (docs/operations.md,
 * "Shutdown"), which closes the EventSource for good and fails the subscription. So the follower
 * subscribes again itself, with the last event id it saw, until the run's final event arrives:
 * the answer goes on across a restart. Events are deduplicated by their sequence number, so a
 * replayed one is never appended twice. After a few failed tries it also reads the run
 * (`runs.retrieve`): a run that ended while nobody could follow it still ends here.
 *
 * A run that stops for a person (docs/api/runs.md, "Approvals") logs `run.approval_requested` per
 * call that waits and keeps its stream open; the view lists those approvals until `run.resumed`
 * (every one decided), and the answer goes on in the same stream.
 */
import { useEffect, useReducer, useRef } from 'react'
import { api, problemOf, type Problem, type RouterOutputs } from '../../lib/api.ts'

type Run = RouterOutputs['runs']['retrieve']['data']['run']
/** A tool call waiting for a person, as its `run.approval_requested` event carries it. */
export type PendingApproval = RouterOutputs['approvals']['list']['data'][number]
export type Usage = Run['usage']
export type RunStatus = Run['status']

/** One piece of the answer, in the order it was written. */
export type AnswerItem =
  | { kind: 'text'; text: string }
  | { kind: 'tool'; id: string; name: string; input: unknown; result?: { output: unknown; isError: boolean } }

/** A knowledge chunk the answer was given (`knowledge.retrieved`). */
export interface Source {
  chunkUuid: string
  documentName: string
  score: number
}

export interface RunView {
  status: RunStatus
  items: AnswerItem[]
  sources: Source[]
  warnings: { code: string; message: string }[]
  /** The calls the run waits on a person for (`awaiting_approval`); emptied when it resumes. */
  approvals: PendingApproval[]
  usage: Usage | null
  error: { code: string; message: string } | null
  /** `connecting` before the first event and while resuming after a dropped connection. */
  connection: 'connecting' | 'open' | 'ended'
  /** Following failed for good (the run is gone, or not the caller's). */
  lost: Problem | null
  /** Events received so far. */
  events: number
}

export const FINAL_EVENTS = new Set(['run.succeeded', 'run.failed', 'run.canceled'])
const ENDED: ReadonlySet<RunStatus> = new Set(['succeeded', 'failed', 'canceled'])

const initialView: RunView = {
  status: 'running',
  items: [],
  sources: [],
  warnings: [],
  approvals: [],
  usage: null,
  error: null,
  connection: 'connecting',
  lost: null,
  events: 0,
}

type Action =
  | { type: 'reset' }
  | { type: 'event'; event: { type: string; data: unknown } }
  | { type: 'connection'; value: RunView['connection'] }
  | { type: 'ended'; run: Run }
  | { type: 'lost'; problem: Problem }

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)
const str = (value: unknown): string => (typeof value === 'string' ? value : '')

function errorOf(value: unknown): { code: string; message: string } | null {
  if (!isRecord(value)) return null
  return { code: str(value.code) || 'error', message: str(value.message) || 'The run failed' }
}

function usageOf(value: unknown): Usage | null {
  if (!isRecord(value)) return null
  const n = (key: string) => (typeof value[key] === 'number' ? (value[key] as number) : 0)
  return { prompt_tokens: n('prompt_tokens'), completion_tokens: n('completion_tokens'), total_tokens: n('total_tokens'), cost: n('cost') }
}

/** Folds one stored event into the view; unknown types are left out (the log may grow new ones). */
function applyEvent(view: RunView, type: string, data: unknown): RunView {
  const d = isRecord(data) ? data : {}
  switch (type) {
    case 'text.delta': {
      const text = str(d.text)
      if (!text) return view
      const last = view.items.at(-1)
      const items =
        last?.kind === 'text'
          ? [...view.items.slice(0, -1), { kind: 'text' as const, text: last.text + text }]
          : [...view.items, { kind: 'text' as const, text }]
      return { ...view, items }
    }
    case 'tool.call':
      return { ...view, items: [...view.items, { kind: 'tool', id: str(d.tool_call_id), name: str(d.tool_name), input: d.input ?? null }] }
    case 'tool.result': {
      const id = str(d.tool_call_id)
      const result = { output: d.output ?? null, isError: d.is_error === true }
      const at = view.items.findIndex((item) => item.kind === 'tool' && item.id === id && !item.result)
      if (at < 0) return { ...view, items: [...view.items, { kind: 'tool', id, name: str(d.tool_name), input: null, result }] }
      return { ...view, items: view.items.map((item, index) => (index === at && item.kind === 'tool' ? { ...item, result } : item)) }
    }
    case 'knowledge.retrieved': {
      const chunks = Array.isArray(d.chunks) ? d.chunks.filter(isRecord) : []
      const sources = chunks.map((c) => ({
        chunkUuid: str(c.chunk_uuid),
        documentName: str(c.document_name),
        score: typeof c.score === 'number' ? c.score : 0,
      }))
      return { ...view, sources: [...view.sources, ...sources] }
    }
    case 'run.warning': {
      const warning = errorOf(d)
      return warning ? { ...view, warnings: [...view.warnings, warning] } : view
    }
    case 'error':
      return { ...view, error: errorOf(d) }
    case 'run.approval_requested': {
      if (!isRecord(d.approval) || typeof d.approval.uuid !== 'string') return view
      const approval = d.approval as unknown as PendingApproval
      return { ...view, status: 'awaiting_approval', approvals: [...view.approvals.filter((a) => a.uuid !== approval.uuid), approval] }
    }
    case 'run.resumed':
      return { ...view, status: 'running', approvals: [] }
    case 'run.succeeded':
      return { ...view, status: 'succeeded', approvals: [], usage: usageOf(d.usage), connection: 'ended' }
    case 'run.failed':
      return { ...view, status: 'failed', approvals: [], error: errorOf(d.error) ?? view.error, connection: 'ended' }
    case 'run.canceled':
      return { ...view, status: 'canceled', approvals: [], connection: 'ended' }
    default:
      return view
  }
}

function reduce(view: RunView, action: Action): RunView {
  switch (action.type) {
    case 'reset':
      return initialView
    case 'event':
      return {
        ...applyEvent(view, action.event.type, action.event.data),
        events: view.events + 1,
        ...(FINAL_EVENTS.has(action.event.type) ? {} : { connection: 'open' as const }),
      }
    case 'connection':
      return view.connection === 'ended' ? view : { ...view, connection: action.value }
    case 'ended':
      return { ...view, status: action.run.status, error: action.run.error ?? view.error, usage: action.run.usage, connection: 'ended' }
    case 'lost':
      return { ...view, lost: action.problem, connection: 'ended' }
  }
}

/** A status that will not answer differently on a second try (the run is not there, or not ours). */
const isFinalProblem = (problem: Problem) =>
  problem.status >= 400 && problem.status < 500 && problem.status !== 408 && problem.status !== 429

/** Milliseconds before the n-th new subscription: quick at first, then every 4 s. */
const backoff = (attempt: number) => Math.min(4_000, 250 * 2 ** attempt)
/** Failed tries after which the run itself is read, in case it ended unseen. */
const CHECK_AFTER = 3

interface FollowHandlers {
  dispatch: (action: Action) => void
  /** Called once, with the run's final status, when its final event arrives or it is found ended. */
  onEnded: (status: RunStatus) => void
}

/**
 * Subscribes to the events of a run until its final event, subscribing again after each dropped
 * or failed connection from the last event seen. Each subscription has its generation number: the
 * callbacks of one replaced (or of a stopped follower) are ignored.
 */
class RunFollower {
  private lastSeq = 0
  private done = false
  private attempt = 0
  private generation = 0
  private timer: ReturnType<typeof setTimeout> | undefined
  private subscription: { unsubscribe: () => void } | undefined

  constructor(
    private readonly runUuid: string,
    private readonly handlers: FollowHandlers,
  ) {
    this.connect()
  }

  stop(): void {
    this.done = true
    this.generation += 1
    clearTimeout(this.timer)
    this.subscription?.unsubscribe()
  }

  private connect(): void {
    if (this.done) return
    const mine = ++this.generation
    const current = () => mine === this.generation && !this.done
    this.subscription = api.runs.events.subscribe(
      { run_uuid: this.runUuid, ...(this.lastSeq > 0 ? { lastEventId: String(this.lastSeq) } : {}) },
      {
        onData: ({ id, data }) => {
          if (current()) this.onEvent(id, data)
        },
        onConnectionStateChange: (state) => {
          if (current() && state.state === 'connecting' && state.error) this.handlers.dispatch({ type: 'connection', value: 'connecting' })
        },
        onError: (error) => {
          if (current()) this.retry(error)
        },
        // The stream ended without the final event (the service closed it): go on from the last id.
        onComplete: () => {
          if (current()) this.retry(null)
        },
      },
    )
  }

  private onEvent(id: string, event: { type: string; data?: unknown }): void {
    const seq = Number(id)
    if (seq <= this.lastSeq) return
    this.lastSeq = seq
    this.attempt = 0
    this.handlers.dispatch({ type: 'event', event: { type: event.type, data: event.data } })
    if (event.type === 'run.succeeded') this.finish('succeeded')
    else if (event.type === 'run.failed') this.finish('failed')
    else if (event.type === 'run.canceled') this.finish('canceled')
  }

  private finish(status: RunStatus): void {
    if (this.done) return
    this.stop()
    this.handlers.onEnded(status)
  }

  private retry(error: unknown): void {
    if (this.done) return
    const problem = error === null ? null : problemOf(error)
    if (problem && isFinalProblem(problem)) {
      this.stop()
      this.handlers.dispatch({ type: 'lost', problem })
      return
    }
    this.generation += 1
    this.subscription?.unsubscribe()
    this.handlers.dispatch({ type: 'connection', value: 'connecting' })
    this.attempt += 1
    if (this.attempt >= CHECK_AFTER) void this.checkRun()
    clearTimeout(this.timer)
    this.timer = setTimeout(() => this.connect(), backoff(this.attempt))
  }

  /**
   * Ended while no stream could tell us: the stored run says how (the next subscription would
   * replay its final event too, but the service may not be back yet).
   */
  private async checkRun(): Promise<void> {
    try {
      const { run } = (await api.runs.retrieve.query({ run_uuid: this.runUuid })).data
      if (!this.done && ENDED.has(run.status) && this.attempt >= CHECK_AFTER) {
        this.handlers.dispatch({ type: 'ended', run })
        this.finish(run.status)
      }
    } catch {
      // Still unreachable: the next try will tell.
    }
  }
}

/**
 * The run `runUuid` as it is written; `onEnded` is called once with the run's final status when
 * its final event arrives (or it is found ended). Nothing is followed while `runUuid` is null.
 */
export function useRunFollower(runUuid: string | null, onEnded: (status: RunStatus) => void): RunView {
  const [view, dispatch] = useReducer(reduce, initialView)
  const ended = useRef(onEnded)
  useEffect(() => {
    ended.current = onEnded
  })
  useEffect(() => {
    dispatch({ type: 'reset' })
    if (!runUuid) return
    const follower = new RunFollower(runUuid, { dispatch, onEnded: (status) => ended.current(status) })
    return () => follower.stop()
  }, [runUuid])
  return view
}
