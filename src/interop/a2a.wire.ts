/**
 * The A2A (Agent2Agent protocol 0.3) shapes of this service's agents and runs (docs/api/a2a.md):
 * an agent's card, a run as a task (task id = run uuid, context id = thread uuid), the run's
 * statuses as task states, its stored messages as the task's history, its output as the task's one
 * artifact, and a run's events as the status and artifact updates of a stream. Pure mapping: no
 * database, no clock.
 */
import type { AgentCard, Artifact, Message, Part, Task, TaskArtifactUpdateEvent, TaskState, TaskStatusUpdateEvent } from '@a2a-js/sdk'
import type { TApproval, TRunResult } from '../runs/index.ts'

/** The protocol version the cards announce. */
export const A2A_PROTOCOL_VERSION = '0.3.0'

/** The id of a task's one artifact: the agent's answer. */
export const OUTPUT_ARTIFACT_ID = 'output'

/** A run's status as the task state it is (docs/api/a2a.md, "Tasks are runs"). */
export const TASK_STATE: Record<TRunResult['data']['run']['status'], TaskState> = {
  queued: 'submitted',
  running: 'working',
  awaiting_approval: 'input-required',
  succeeded: 'completed',
  failed: 'failed',
  canceled: 'canceled',
}

/** Task states after which nothing more happens to the task. */
export const FINAL_STATES: ReadonlySet<TaskState> = new Set(['completed', 'failed', 'canceled', 'rejected'])

/** What a card says of an agent. */
export interface CardAgent {
  uuid: string
  name: string
  description: string
  version: number
}

/**
 * An agent's card: its JSON-RPC endpoint at `<baseUrl>/api/v1/a2a/<uuid>`, streaming, text in and
 * out, one skill (talking to the agent), and the bearer token as its only security scheme.
 */
export function toAgentCard(agent: CardAgent, baseUrl: string): AgentCard {
  const description = agent.description || `The agent ${agent.name}`
  return {
    protocolVersion: A2A_PROTOCOL_VERSION,
    name: agent.name,
    description,
    url: `${baseUrl}/api/v1/a2a/${agent.uuid}`,
    preferredTransport: 'JSONRPC',
    version: String(agent.version),
    documentationUrl: `${baseUrl}/docs`,
    capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: false },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: 'chat',
        name: agent.name,
        description: `${description} Send a text message; continue a conversation with the contextId of an earlier task.`,
        tags: ['chat'],
        inputModes: ['text/plain'],
        outputModes: ['text/plain'],
      },
    ],
    securitySchemes: {
      bearer: {
        type: 'http',
        scheme: 'bearer',
        description: 'A bearer token of this service: an access token or a sign-in token (docs/api/authentication.md).',
      },
    },
    security: [{ bearer: [] }],
  }
}

/** A text part. */
const textPart = (text: string): Part => ({ kind: 'text', text })

/** The agent's message a waiting task's status carries: which tool calls wait, and how to decide them. */
export function approvalsMessage(runUuid: string, contextId: string, approvals: TApproval[]): Message {
  const names = approvals.map((approval) => approval.tool_name).join(', ')
  return {
    kind: 'message',
    messageId: `${runUuid}-approvals-${approvals.length}`,
    role: 'agent',
    taskId: runUuid,
    contextId,
    parts: [
      textPart(
        `Waiting for approval of: ${names}. Send a message with this taskId and a data part {"approve": true} or {"approve": false}.`,
      ),
      {
        kind: 'data',
        data: {
          approvals: approvals.map((approval) => ({
            uuid: approval.uuid,
            tool_name: approval.tool_name,
            tool_kind: approval.tool_kind,
            arguments: approval.arguments,
            expires_at: approval.expires_at,
          })),
        },
      },
    ],
  }
}

/** The agent's message of a failed or canceled run: its error. */
function errorMessage(runUuid: string, contextId: string, error: { code: string; message: string }): Message {
  return {
    kind: 'message',
    messageId: `${runUuid}-error`,
    role: 'agent',
    taskId: runUuid,
    contextId,
    parts: [textPart(error.message), { kind: 'data', data: { code: error.code } }],
  }
}

/** The task's artifact holding `text`. */
export const outputArtifact = (text: string): Artifact => ({ artifactId: OUTPUT_ARTIFACT_ID, name: 'output', parts: [textPart(text)] })

/**
 * A run (with its messages and pending approvals) as a task. `historyLength` keeps the last that
 * many history messages (0: none; omitted: all). Only user and assistant messages with text are
 * history: tool steps are the agent's own.
 */
export function toTask(result: TRunResult, historyLength?: number): Task {
  const { run, messages, approvals } = result.data
  const contextId = run.thread_uuid ?? ''
  const state = TASK_STATE[run.status]
  const status: Task['status'] = { state, timestamp: run.updated_at }
  if (state === 'input-required') status.message = approvalsMessage(run.uuid, contextId, approvals)
  if ((state === 'failed' || state === 'canceled') && run.error) status.message = errorMessage(run.uuid, contextId, run.error)
  const history: Message[] = messages
    .filter((message) => (message.role === 'user' || message.role === 'assistant') && message.content !== '')
    .map((message) => ({
      kind: 'message',
      messageId: message.uuid,
      role: message.role === 'user' ? 'user' : 'agent',
      taskId: run.uuid,
      contextId,
      parts: [textPart(message.content)],
    }))
  const task: Task = {
    kind: 'task',
    id: run.uuid,
    contextId,
    status,
    history: historyLength === undefined ? history : historyLength === 0 ? [] : history.slice(-historyLength),
    metadata: { agent_uuid: run.agent_uuid, agent_version: run.agent_version, run_status: run.status, usage: run.usage },
  }
  if (run.output) task.artifacts = [outputArtifact(run.output)]
  return task
}

/** A status update of a stream. */
export function statusUpdate(
  task: { id: string; contextId: string },
  state: TaskState,
  timestamp: string,
  message?: Message,
): TaskStatusUpdateEvent {
  return {
    kind: 'status-update',
    taskId: task.id,
    contextId: task.contextId,
    status: message ? { state, timestamp, message } : { state, timestamp },
    final: FINAL_STATES.has(state) || state === 'input-required',
  }
}

/** A chunk of the output artifact: `append` after the first, `lastChunk` at the end. */
export function artifactChunk(
  task: { id: string; contextId: string },
  text: string,
  append: boolean,
  lastChunk: boolean,
): TaskArtifactUpdateEvent {
  return { kind: 'artifact-update', taskId: task.id, contextId: task.contextId, artifact: outputArtifact(text), append, lastChunk }
}

/** A failed or canceled run's final status, from the data of its final event (`{error: {code, message}}`). */
export function endedStatus(
  task: { id: string; contextId: string },
  state: 'failed' | 'canceled',
  timestamp: string,
  error: { code: string; message: string },
): TaskStatusUpdateEvent {
  return statusUpdate(task, state, timestamp, errorMessage(task.id, task.contextId, error))
}
