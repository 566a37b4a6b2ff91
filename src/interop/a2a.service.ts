/**
 * A2A (Agent2Agent protocol 0.3, docs/api/a2a.md): every agent the caller may run answers as an
 * A2A agent. This module is the A2A request handler of one request to one agent (the SDK's
 * `A2ARequestHandler`, which its `JsonRpcTransportHandler` calls for each JSON-RPC method) over
 * the runs capability: `message/send` and `message/stream` start a run of the agent (a known
 * `contextId` continues that thread, queued behind a run in progress), `tasks/get` reads it,
 * `tasks/cancel` cancels it, `tasks/resubscribe` follows it again. Nothing is kept besides the run:
 * any API process answers any request.
 *
 * Errors are the SDK's `A2AError`s, which the transport answers as JSON-RPC errors: -32602 naming
 * the field in `data.field`, -32001 for a task the caller has not (another tenant's included),
 * -32002 for a task that has ended, -32005 for a part that is not text, -32000 with `data.status`
 * for what the REST API refuses with that status (a read-only token: 403; a spent budget: 429),
 * -32603 for anything else, with the request id and never the cause's own message.
 */
import { A2AError, type A2ARequestHandler } from '@a2a-js/sdk/server'
import type {
  AgentCard,
  DataPart,
  DeleteTaskPushNotificationConfigParams,
  GetTaskPushNotificationConfigParams,
  ListTaskPushNotificationConfigParams,
  Message,
  MessageSendParams,
  Task,
  TaskArtifactUpdateEvent,
  TaskIdParams,
  TaskPushNotificationConfig,
  TaskQueryParams,
  TaskStatusUpdateEvent,
} from '@a2a-js/sdk'
import { uuidv7 } from 'uuidv7'
import { z } from 'zod'
import { requireResourceWith } from '../access/resource-access.ts'
import { isRecord } from '../access/wire.ts'
import {
  AppError,
  ConflictError,
  NotFoundError,
  UpstreamError,
  UpstreamTimeoutError,
  ValidationError,
  databaseUnavailable,
} from '../platform/errors.ts'
import type { ResourceCtx } from '../context.ts'
import { approvals, RUN_INPUT_MAX, runs, type TRunResult } from '../runs/index.ts'
import { requireThread } from '../threads/index.ts'
import { artifactChunk, endedStatus, statusUpdate, TASK_STATE, toAgentCard, toTask, approvalsMessage, type CardAgent } from './a2a.wire.ts'

/** An event of a task's stream. */
export type A2AStreamEvent = Task | TaskStatusUpdateEvent | TaskArtifactUpdateEvent

/** -32000: what the REST API refuses with `data.status` (docs/api/a2a.md, "Errors"). */
export const REFUSED = -32000

/**
 * The agent `agentUuid` if the caller may run it (see it in the request's workspace, shared with
 * them included), with what its card says.
 * @throws NotFoundError for any other uuid, another tenant's agent included.
 */
export async function requireA2aAgent(ctx: ResourceCtx, agentUuid: string): Promise<CardAgent> {
  if (!z.uuid().safeParse(agentUuid).success) throw new NotFoundError('Agent')
  const access = await requireResourceWith<{ name: string; description: string | null; version: number }>(
    ctx,
    'agents',
    'Agent',
    agentUuid.toLowerCase(),
    'read',
    'r.name, r.description, r.version',
  )
  return { uuid: access.uuid, name: access.row.name, description: access.row.description ?? '', version: Number(access.row.version) }
}

/** The card of an agent of {@link requireA2aAgent}; `baseUrl` is the service's public URL (APP_URL). */
export function agentCard(agent: CardAgent, baseUrl: string): AgentCard {
  return toAgentCard(agent, baseUrl)
}

/** What a message asks: a turn to run, or decisions on the approvals its task waits for. */
type Ask = { kind: 'turn'; input: string } | { kind: 'decide'; approve: boolean; approvalUuid?: string; reason?: string }

const Decision = z.strictObject({ approve: z.boolean(), approval_uuid: z.uuid().optional(), reason: z.string().max(2_000).optional() })

const invalid = (field: string, message: string) => A2AError.invalidParams(message, { field })

/**
 * The message of `message/send` and `message/stream` checked: a user message with a `messageId`
 * and text parts (a turn), or, for a task that waits, one data part `{approve, approval_uuid?,
 * reason?}` (a decision).
 * @throws A2AError -32602 naming the field; -32005 for a file part.
 */
function askOf(params: MessageSendParams): { message: Message; ask: Ask; blocking: boolean; historyLength?: number } {
  const message: unknown = params.message
  if (!isRecord(message)) throw invalid('message', 'message is required: {kind: "message", role: "user", messageId, parts}')
  if (message.role !== 'user') throw invalid('message.role', 'message.role must be "user"')
  if (typeof message.messageId !== 'string' || message.messageId === '')
    throw invalid('message.messageId', 'message.messageId must be a non-empty string')
  if (!Array.isArray(message.parts) || message.parts.length === 0)
    throw invalid('message.parts', 'message.parts must hold at least one part')
  for (const key of ['contextId', 'taskId'] as const) {
    if (message[key] !== undefined && !(typeof message[key] === 'string' && z.uuid().safeParse(message[key]).success)) {
      throw invalid(`message.${key}`, `message.${key} must be the uuid of one of your ${key === 'taskId' ? 'tasks' : 'contexts'}`)
    }
  }
  const config: unknown = params.configuration
  if (config !== undefined && !isRecord(config)) throw invalid('configuration', 'configuration must be an object')
  const blocking = config?.blocking
  if (blocking !== undefined && typeof blocking !== 'boolean')
    throw invalid('configuration.blocking', 'configuration.blocking must be a boolean')
  const historyLength = config?.historyLength
  if (historyLength !== undefined && !(Number.isInteger(historyLength) && (historyLength as number) >= 0)) {
    throw invalid('configuration.historyLength', 'configuration.historyLength must be a whole number, 0 or more')
  }
  const texts: string[] = []
  const data: DataPart[] = []
  for (const [index, part] of (message.parts as unknown[]).entries()) {
    const at = `message.parts[${index}]`
    if (!isRecord(part)) throw invalid(at, `${at} must be a part object`)
    if (part.kind === 'text') {
      if (typeof part.text !== 'string') throw invalid(`${at}.text`, `${at}.text must be a string`)
      texts.push(part.text)
    } else if (part.kind === 'data') {
      if (!isRecord(part.data)) throw invalid(`${at}.data`, `${at}.data must be an object`)
      data.push(part as unknown as DataPart)
    } else if (part.kind === 'file') {
      throw new A2AError(-32005, `${at}: this agent takes text parts only (file parts are not supported)`, { field: `${at}.kind` })
    } else throw invalid(`${at}.kind`, `${at}.kind must be "text" or "data"`)
  }
  const options = {
    message: message as unknown as Message,
    blocking: blocking !== false,
    historyLength: historyLength as number | undefined,
  }
  if (message.taskId !== undefined) {
    const parsed = data.length === 1 && texts.length === 0 ? Decision.safeParse(data[0].data) : null
    if (!parsed?.success) {
      throw invalid(
        'message.parts',
        'A message to a task that waits for input holds one data part {"approve": true|false, "approval_uuid"?, "reason"?}',
      )
    }
    const { approve, approval_uuid: approvalUuid, reason } = parsed.data
    return { ...options, ask: { kind: 'decide', approve, approvalUuid, reason } }
  }
  if (data.length > 0) throw invalid('message.parts', 'A data part answers a task that waits for input: send it with that taskId')
  const input = texts.join('\n')
  if (input.trim() === '') throw invalid('message.parts', 'The message has no text')
  if (input.length > RUN_INPUT_MAX) throw invalid('message.parts', `The message's text is longer than ${RUN_INPUT_MAX} characters`)
  return { ...options, ask: { kind: 'turn', input } }
}

/** A started (or resumed) run, and the event of its log after which what this request caused follows. */
interface Started {
  result: TRunResult
  afterSeq: number
}

/** The options of a handler: `signal` aborts when the client goes away or the host drains (streams end). */
export interface A2AHandlerOptions {
  baseUrl: string
  signal?: AbortSignal
}

/**
 * The A2A request handler of one request to one agent, over the caller's context (module
 * comment). Push notifications are not supported (the card says so). A stream whose method fails
 * ends instead of throwing, and leaves its error in {@link streamError}: the transport would write
 * a thrown one to the console, while the route answers it as the stream's last event.
 */
export class A2AAgentHandler implements A2ARequestHandler {
  /** The error that ended the last stream, as the stream's final JSON-RPC error. */
  streamError: A2AError | null = null

  constructor(
    private readonly ctx: ResourceCtx,
    private readonly agent: CardAgent,
    private readonly options: A2AHandlerOptions,
  ) {}

  getAgentCard(): Promise<AgentCard> {
    return Promise.resolve(agentCard(this.agent, this.options.baseUrl))
  }

  getAuthenticatedExtendedAgentCard(): Promise<AgentCard> {
    return Promise.reject(A2AError.authenticatedExtendedCardNotConfigured())
  }

  /** `message/send`: blocking (the default), the task once its run has ended or waits for input; else at once. */
  async sendMessage(params: MessageSendParams): Promise<Message | Task> {
    return this.guard(async () => {
      const asked = askOf(params)
      const started = await this.start(asked.message, asked.ask, !asked.blocking)
      return toTask(started.result, asked.historyLength)
    })
  }

  /** `message/stream`: the task, then its status and artifact updates until it ends or waits for input. */
  async *sendMessageStream(params: MessageSendParams): AsyncGenerator<A2AStreamEvent, void, undefined> {
    let started: Started
    let historyLength: number | undefined
    try {
      const asked = askOf(params)
      historyLength = asked.historyLength
      started = await this.guard(() => this.start(asked.message, asked.ask, true))
    } catch (error) {
      this.streamError = this.a2aError(error)
      return
    }
    yield* this.stream(toTask(started.result, historyLength), started.afterSeq)
  }

  /** `tasks/get`. */
  async getTask(params: TaskQueryParams): Promise<Task> {
    return this.guard(async () => {
      const historyLength = params.historyLength
      if (historyLength !== undefined && !(Number.isInteger(historyLength) && historyLength >= 0)) {
        throw invalid('historyLength', 'historyLength must be a whole number, 0 or more')
      }
      return toTask(await this.requireTask(params.id), historyLength)
    })
  }

  /** `tasks/cancel`: -32002 for a task that has ended. */
  async cancelTask(params: TaskIdParams): Promise<Task> {
    return this.guard(async () => {
      this.requireWrite()
      await this.requireTask(params.id)
      try {
        return toTask(await runs.cancel(this.ctx, params.id))
      } catch (error) {
        if (error instanceof ConflictError) throw A2AError.taskNotCancelable(params.id)
        throw error
      }
    })
  }

  /** `tasks/resubscribe`: the task as it is; then, unless it has ended or waits for input, its updates. */
  async *resubscribe(params: TaskIdParams): AsyncGenerator<A2AStreamEvent, void, undefined> {
    let result: TRunResult
    try {
      result = await this.guard(() => this.requireTask(params.id))
    } catch (error) {
      this.streamError = this.a2aError(error)
      return
    }
    yield* this.stream(toTask(result), result.data.run.events_count)
  }

  setTaskPushNotificationConfig(_params: TaskPushNotificationConfig): Promise<TaskPushNotificationConfig> {
    return Promise.reject(A2AError.pushNotificationNotSupported())
  }

  getTaskPushNotificationConfig(_params: TaskIdParams | GetTaskPushNotificationConfigParams): Promise<TaskPushNotificationConfig> {
    return Promise.reject(A2AError.pushNotificationNotSupported())
  }

  listTaskPushNotificationConfigs(_params: ListTaskPushNotificationConfigParams): Promise<TaskPushNotificationConfig[]> {
    return Promise.reject(A2AError.pushNotificationNotSupported())
  }

  deleteTaskPushNotificationConfig(_params: DeleteTaskPushNotificationConfigParams): Promise<void> {
    return Promise.reject(A2AError.pushNotificationNotSupported())
  }

  /**
   * Runs a turn (in the message's context when it names one) or decides the approvals of the
   * task it names; `background`: answer once stored, else once the run has ended or waits.
   */
  private async start(message: Message, ask: Ask, background: boolean): Promise<Started> {
    this.requireWrite()
    if (ask.kind === 'decide') return this.decide(message, ask, background)
    let threadUuid: string | undefined
    if (message.contextId) {
      const thread = await requireThread(this.ctx, message.contextId, true).catch((error: unknown) => {
        if (error instanceof NotFoundError) throw invalid('message.contextId', 'No context of yours has this contextId')
        throw error
      })
      threadUuid = thread.uuid
    }
    const runUuid = uuidv7()
    try {
      const result = await runs.runAgent(
        this.ctx,
        { agent_uuid: this.agent.uuid, input: ask.input, thread_uuid: threadUuid, if_busy: 'enqueue', background },
        { runUuid },
      )
      return { result, afterSeq: 0 }
    } catch (error) {
      // The run is stored and failed: a failed task, not an error of the request.
      if (error instanceof UpstreamError || error instanceof UpstreamTimeoutError)
        return { result: await runs.retrieve(this.ctx, runUuid), afterSeq: 0 }
      if (error instanceof ValidationError) {
        const field = error.issues[0]?.path.join('.')
        if (field === 'thread_uuid') throw invalid('message.contextId', "The context is another agent's conversation")
        throw A2AError.invalidParams(`The agent cannot run: ${error.issues[0]?.message ?? error.message}`, { field: field || 'message' })
      }
      throw error
    }
  }

  /** Decides the approvals the message's task waits for (all, or the one named), then follows the run on. */
  private async decide(message: Message, ask: Extract<Ask, { kind: 'decide' }>, background: boolean): Promise<Started> {
    const taskId = message.taskId as string
    const current = await this.requireTask(taskId)
    const { run } = current.data
    if (message.contextId && message.contextId !== run.thread_uuid) throw invalid('message.contextId', "The contextId is not the task's")
    if (run.status !== 'awaiting_approval') {
      throw invalid(
        'message.taskId',
        `The task does not wait for input (it is ${TASK_STATE[run.status]}): send a message without taskId to go on`,
      )
    }
    const pending = current.data.approvals.filter((approval) => ask.approvalUuid === undefined || approval.uuid === ask.approvalUuid)
    if (pending.length === 0) throw invalid('message.parts[0].data.approval_uuid', 'The task waits for no approval with this uuid')
    const seq = run.events_count
    for (const approval of pending) await approvals.decide(this.ctx, approval.uuid, ask.approve, ask.reason ? { reason: ask.reason } : {})
    if (background) return { result: await runs.retrieve(this.ctx, taskId), afterSeq: seq }
    try {
      return { result: await runs.answerAfter(this.ctx, taskId, seq), afterSeq: seq }
    } catch (error) {
      if (error instanceof UpstreamError || error instanceof UpstreamTimeoutError)
        return { result: await runs.retrieve(this.ctx, taskId), afterSeq: seq }
      throw error
    }
  }

  /** The caller's run `taskId` of this agent. @throws A2AError -32001 otherwise (another tenant's too). */
  private async requireTask(taskId: unknown): Promise<TRunResult> {
    if (typeof taskId !== 'string' || !z.uuid().safeParse(taskId).success) throw A2AError.taskNotFound(String(taskId))
    const result = await runs.retrieve(this.ctx, taskId).catch((error: unknown) => {
      if (error instanceof NotFoundError) throw A2AError.taskNotFound(taskId)
      throw error
    })
    if (result.data.run.agent_uuid !== this.agent.uuid) throw A2AError.taskNotFound(taskId)
    return result
  }

  /** @throws A2AError -32000 (status 403) for a read-only token. */
  private requireWrite(): void {
    if (!this.ctx.auth.token.abilities.includes('write')) throw new A2AError(REFUSED, 'This token is read-only', { status: 403 })
  }

  /**
   * The task, then, unless it is final or waits for input, the updates its run's events after
   * `afterSeq` make: `working` when it starts or resumes, each text delta as a chunk of the
   * output artifact, and its end (`completed` after the artifact's last chunk, `failed`,
   * `canceled`, or `input-required` with the approvals it waits for). Stops quietly when the
   * handler's signal aborts (the run goes on).
   */
  private async *stream(task: Task, afterSeq: number): AsyncGenerator<A2AStreamEvent, void, undefined> {
    yield task
    const state = task.status.state
    if (state === 'completed' || state === 'failed' || state === 'canceled' || state === 'input-required') return
    let chunks = 0
    try {
      const events = await runs.events(this.ctx, task.id, afterSeq, this.options.signal)
      for await (const event of events) {
        const data = isRecord(event.data) ? event.data : {}
        if (event.type === 'run.started' || event.type === 'run.resumed') yield statusUpdate(task, 'working', event.created_at)
        else if (event.type === 'text.delta' && typeof data.text === 'string' && data.text !== '') {
          yield artifactChunk(task, data.text, chunks > 0, false)
          chunks += 1
        } else if (event.type === 'run.approval_requested') {
          const { data: now } = await runs.retrieve(this.ctx, task.id)
          yield statusUpdate(task, 'input-required', event.created_at, approvalsMessage(task.id, task.contextId, now.approvals))
          return
        } else if (event.type === 'run.succeeded') {
          const output = typeof data.output === 'string' ? data.output : ''
          // The artifact's last chunk: empty after streamed ones, the whole output when none came.
          yield artifactChunk(task, chunks > 0 ? '' : output, chunks > 0, true)
          yield statusUpdate(task, 'completed', event.created_at)
          return
        } else if (event.type === 'run.failed' || event.type === 'run.canceled') {
          const error = isRecord(data.error) ? data.error : {}
          const code = typeof error.code === 'string' ? error.code : event.type === 'run.canceled' ? 'canceled' : 'failed'
          const message =
            typeof error.message === 'string' ? error.message : event.type === 'run.canceled' ? 'The run was canceled' : 'The run failed'
          yield endedStatus(task, event.type === 'run.failed' ? 'failed' : 'canceled', event.created_at, { code, message })
          return
        }
      }
    } catch (error) {
      this.streamError = this.a2aError(error)
    }
  }

  /** Runs `work`, turning what it throws into an A2AError (module comment). */
  private async guard<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work()
    } catch (error) {
      throw this.a2aError(error)
    }
  }

  /** An error as the JSON-RPC error it is answered as (module comment); unexpected ones are logged. */
  private a2aError(error: unknown): A2AError {
    if (error instanceof A2AError) return error
    const named = error instanceof AppError ? error : (databaseUnavailable(error) ?? error)
    if (named instanceof ValidationError) {
      const issue = named.issues[0]
      return A2AError.invalidParams(issue?.message ?? named.message, { field: issue?.path.join('.') ?? '' })
    }
    if (named instanceof AppError && named.status < 500) return new A2AError(REFUSED, named.message, { status: named.status })
    if (named instanceof AppError) return new A2AError(REFUSED, named.message, { status: named.status, request_id: this.ctx.requestId })
    this.ctx.log.error({ err: error }, 'A2A request failed')
    return A2AError.internalError(`Internal error (request ${this.ctx.requestId})`)
  }
}
