/**
 * The OpenAI-compatible API (docs/api/openai.md): the caller's runnable agents as models, and a
 * chat completion or a response as an ordinary stored run of an agent through ./runs.service.ts
 * (the agent's instruction, tools, memory and knowledge apply as in any run).
 *
 * The conversation a request sends becomes a thread: in a new thread, every message before the
 * last user message is stored first (system and developer messages as `system` messages, after
 * which the agent's own system prompt still comes first), then the last user message is run. A
 * chat request naming a thread (`metadata.thread_uuid`) or a response continuing one
 * (`previous_response_id`) adds only what is new: for chat the last user message (the thread holds
 * the history the client sends again), for responses the input items (the Responses API sends only
 * new items). If the run is refused before it starts (4xx), what this request stored is removed.
 */
import { z } from 'zod'
import { listScopeSql } from '../access/resource-access.ts'
import { AppError, NotFoundError, UpstreamError, UpstreamTimeoutError, ValidationError, type FieldPath } from '../platform/errors.ts'
import { contentText, type TApprovalResponseItem, type TChatCompletionRequest, type TResponseInputItem, type TResponseRequest } from './openai-compat.schema.ts'
import { approvals } from '../runs/index.ts'
import { ConflictError } from '../platform/errors.ts'
import { unixSeconds, type RunRef } from './openai-compat.wire.ts'
import type { IfBusy, TRunResult } from '../runs/index.ts'
import type { ResourceCtx } from '../context.ts'
import { appendMessage } from '../threads/index.ts'
import { messages } from '../threads/index.ts'
import { runs } from '../runs/index.ts'
import { threads } from '../threads/index.ts'

/** 404 `model_not_found`: no agent the caller may run has this uuid or name. */
export class ModelNotFoundError extends AppError {
  override name = 'ModelNotFoundError'
  readonly status = 404
  constructor(readonly model: string) {
    super(`The model '${model}' does not exist or you do not have access to it.`)
  }
}

/** A 400 naming its field, with OpenAI's error `code` (`previous_response_not_found`, ...). */
export class OpenAiParamError extends ValidationError {
  override name = 'OpenAiParamError'
  constructor(
    path: FieldPath,
    message: string,
    readonly code: string,
  ) {
    super(path, message)
  }
}

/** A model of `GET models`: an agent. `name` is this API's addition. */
export interface AgentModel {
  id: string
  object: 'model'
  created: number
  owned_by: string
  name: string
}

/**
 * `GET /api/v1/openai/models`: the agents the caller may run in the request's workspace (the
 * agents list's rule without filters: the workspace's agents they see and those shared with them
 * or the workspace), by name. `owned_by` is the agent's workspace uuid.
 */
export async function listModels(ctx: ResourceCtx): Promise<{ object: 'list'; data: AgentModel[] }> {
  return { object: 'list', data: await modelRows(ctx) }
}

type ModelRow = { uuid: string; name: string; created_at: string | Date; workspace: string | null }

/** The agents of {@link listModels} as models, by name; `where` narrows them (SQL over `a`, with its parameters). */
async function modelRows(ctx: ResourceCtx, where = 'true', params: unknown[] = []): Promise<AgentModel[]> {
  const scope = listScopeSql('a', 'agents', ctx)
  const rows = await ctx.em.execute<ModelRow[]>(
    `select a.uuid, a.name, a.created_at, w.uuid as workspace from agents a left join workspaces w on w.id = a.workspace_id
     where ${scope.sql} and ${where} order by lower(a.name), a.id`,
    [...scope.params, ...params],
  )
  return rows.map((row) => ({ id: row.uuid, object: 'model', created: unixSeconds(row.created_at), owned_by: row.workspace ?? 'system', name: row.name }))
}

/**
 * `GET models/{model}` (docs/api/openai.md, "Models"): one model of {@link listModels}, named as a
 * request's `model` may name it: the agent's uuid, `<uuid>@<version>` for a version the agent has
 * (answered with that id), or its name when exactly one agent has it.
 * @throws ModelNotFoundError (OpenAI's 404 `model_not_found`) for anything else, another
 *   workspace's agent included; OpenAiParamError for a name several agents share.
 */
export async function retrieveModel(ctx: ResourceCtx, model: string): Promise<AgentModel> {
  const pinned = PINNED_MODEL.exec(model)
  if (pinned && !(isUuid(pinned[1]) && Number(pinned[2]) <= 2_147_483_647)) throw new ModelNotFoundError(model)
  const target: ModelTarget = pinned
    ? { agentUuid: pinned[1].toLowerCase(), version: Number(pinned[2]) }
    : isUuid(model)
      ? { agentUuid: model.toLowerCase() }
      : await agentUuidOf(ctx, model)
  const { agentUuid, version } = target
  const versioned = version === undefined ? '' : ' and exists (select 1 from agent_versions v where v.agent_id = a.id and v.version = ?)'
  const [found] = await modelRows(ctx, `a.uuid = ?${versioned}`, version === undefined ? [agentUuid] : [agentUuid, version])
  if (!found) throw new ModelNotFoundError(model)
  return version === undefined ? found : { ...found, id: `${found.id}@${version}` }
}

const isUuid = (value: string) => z.uuid().safeParse(value).success

/** `<agent uuid>@<version>`: a model id pinned to a version of the agent (docs/api/versions.md). */
const PINNED_MODEL = /^([0-9a-fA-F-]{36})@([1-9][0-9]{0,9})$/

/** The agent a model id names: its uuid, and the version it pins, if any. */
interface ModelTarget {
  agentUuid: string
  version?: number
}

/**
 * The agent `model` names: a uuid as given (the run checks access), `<uuid>@<version>` pinning a
 * version (the run checks it exists), or the name of exactly one agent of {@link listModels}.
 * @throws ModelNotFoundError; OpenAiParamError naming `model` when several agents have that name.
 */
async function agentUuidOf(ctx: ResourceCtx, model: string): Promise<ModelTarget> {
  const pinned = PINNED_MODEL.exec(model)
  if (pinned && isUuid(pinned[1]) && Number(pinned[2]) <= 2_147_483_647) return { agentUuid: pinned[1].toLowerCase(), version: Number(pinned[2]) }
  if (isUuid(model)) return { agentUuid: model.toLowerCase() }
  const scope = listScopeSql('a', 'agents', ctx)
  const rows = await ctx.em.execute<{ uuid: string }[]>(`select a.uuid from agents a where a.name = ? and ${scope.sql} limit 2`, [model, ...scope.params])
  if (rows.length === 0) throw new ModelNotFoundError(model)
  if (rows.length > 1) throw new OpenAiParamError(['model'], `Several agents are named '${model}': use the agent's uuid`, 'model_ambiguous')
  return { agentUuid: rows[0].uuid }
}

/** A turn of the conversation, with the role stored for it. */
export interface Turn {
  role: 'system' | 'user' | 'assistant'
  content: string
}

/**
 * The turns to store before the run and the input it runs: the last message must be a user
 * message with text. `developer` messages are `system` messages.
 * @throws OpenAiParamError naming `<field>[i]` of the last item otherwise.
 */
export function splitConversation(items: { role: string; content: string | { text: string }[] }[], field: string): { history: Turn[]; input: string } {
  const turns = items.map((item): Turn => ({ role: item.role === 'developer' ? 'system' : (item.role as Turn['role']), content: contentText(item.content) }))
  const last = turns.at(-1)
  const at = items.length - 1
  if (!last || last.role !== 'user') throw new OpenAiParamError([field, at, 'role'], 'The last message must be a user message: it is what the agent answers', 'invalid_value')
  if (last.content === '') throw new OpenAiParamError([field, at, 'content'], 'The last user message must not be empty', 'invalid_value')
  return { history: turns.slice(0, -1), input: last.content }
}

/** Where a run goes: a new thread, or an existing one (`param` names the request field that named it). */
type Target = { thread: null } | { thread: { uuid: string; id: number }; param: FieldPath }

/** What one run request stored before the run, removed again if the run is refused. */
interface Seeded {
  threadUuid: string
  newThread: boolean
  messageUuids: string[]
}

/**
 * Stores `history` in the target thread (a new thread of the agent when there is none) and
 * answers where the run goes; stores nothing for an existing thread without history, or a new one
 * without history (the run makes its thread).
 */
async function seed(ctx: ResourceCtx, agentUuid: string, target: Target, history: Turn[]): Promise<Seeded | null> {
  if (history.length === 0) return target.thread ? { threadUuid: target.thread.uuid, newThread: false, messageUuids: [] } : null
  let thread = target.thread
  if (!thread) {
    const created = await threads.create(ctx, { agent_uuid: agentUuid }).catch((error: unknown) => {
      if (error instanceof ValidationError) throw new ModelNotFoundError(agentUuid)
      throw error
    })
    thread = { uuid: created.data.uuid, id: (await threads.requireThread(ctx, created.data.uuid, true)).id }
  }
  const messageUuids: string[] = []
  for (const turn of history) {
    const stored = await appendMessage(ctx.em, {
      threadId: thread.id,
      workspaceId: ctx.workspace.workspace.id,
      userId: ctx.auth.user.id,
      runId: null,
      role: turn.role,
      content: turn.content,
      parts: [{ type: 'text', text: turn.content }],
    })
    messageUuids.push(stored.uuid)
  }
  return { threadUuid: thread.uuid, newThread: !target.thread, messageUuids }
}

/** Removes what {@link seed} stored. */
async function unseed(ctx: ResourceCtx, seeded: Seeded | null): Promise<void> {
  if (!seeded) return
  if (seeded.newThread) await threads.remove(ctx, seeded.threadUuid)
  else for (const uuid of seeded.messageUuids) await messages.remove(ctx, uuid)
}

/**
 * Runs `input` with the agent in the target thread after storing `history`, in the background or
 * until the end, and maps the runs service's refusals to this API's: the agent not found is the
 * model's 404; a thread of another agent a 400 naming the request's thread field; the agent's own
 * model not runnable a 400 naming `model`.
 */
async function runTurn(
  ctx: ResourceCtx,
  model: string,
  target: Target,
  conversation: { history: Turn[]; input: string },
  background: boolean,
  metadata: Record<string, unknown> | null | undefined,
): Promise<StartedRun> {
  const ifBusy = ifBusyOf(metadata)
  const { agentUuid, version } = await agentUuidOf(ctx, model)
  const seeded = await seed(ctx, agentUuid, target, conversation.history)
  const threadUuid = seeded?.threadUuid ?? (target.thread ? target.thread.uuid : undefined)
  try {
    const result = await runs.runAgent(ctx, { agent_uuid: agentUuid, input: conversation.input, thread_uuid: threadUuid, background, if_busy: ifBusy, version })
    return started(result, version)
  } catch (error) {
    if (!(error instanceof UpstreamError || error instanceof UpstreamTimeoutError)) await unseed(ctx, seeded)
    if (error instanceof NotFoundError) throw new ModelNotFoundError(model)
    if (error instanceof ValidationError && !(error instanceof OpenAiParamError)) {
      const field = error.issues[0]?.path[0]
      // A version the agent lacks is a model that does not exist.
      if (field === 'version') throw new ModelNotFoundError(model)
      if (field === 'thread_uuid' && target.thread) throw new OpenAiParamError(target.param, `The thread belongs to another model than '${model}'`, 'invalid_value')
      throw new OpenAiParamError(['model'], `The agent cannot run: ${error.message}`, 'model_not_runnable')
    }
    throw error
  }
}

/** The caller's thread `uuid`, named by request field `param`. @throws OpenAiParamError when the caller has none. */
async function threadTarget(ctx: ResourceCtx, uuid: string, param: FieldPath): Promise<Target> {
  try {
    const found = await threads.requireThread(ctx, uuid, true)
    return { thread: { uuid: found.uuid, id: found.id }, param }
  } catch (error) {
    if (error instanceof NotFoundError) throw new OpenAiParamError(param, 'No thread of yours has this uuid', 'thread_not_found')
    throw error
  }
}

/** A started or finished run of this API, with what its answers name. */
export interface StartedRun {
  ref: RunRef
  result: TRunResult
  /** A stream follows the run's events after this one (a run resumed by approval responses: only its rest). */
  afterSeq?: number
}

/** The run as this API names it; `version`: the version its model id pinned, which `model` names again. */
function started(result: TRunResult, version?: number): StartedRun {
  const { run } = result.data
  const model = run.agent_uuid === null ? '' : version === undefined ? run.agent_uuid : `${run.agent_uuid}@${version}`
  return { ref: { runUuid: run.uuid, threadUuid: run.thread_uuid, model, created: unixSeconds(run.created_at) }, result }
}

/**
 * `POST /api/v1/openai/chat/completions`: runs the request's conversation (see the module's
 * comment), until the end unless `background` (the streaming route follows its events).
 * @throws ModelNotFoundError, OpenAiParamError, ForbiddenError, UpstreamError, UpstreamTimeoutError.
 */
export async function startChat(ctx: ResourceCtx, request: TChatCompletionRequest, background: boolean): Promise<StartedRun> {
  const threadUuid = request.metadata?.thread_uuid
  const target: Target = threadUuid ? await threadTarget(ctx, threadUuid, ['metadata', 'thread_uuid']) : { thread: null }
  const conversation = splitConversation(request.messages, 'messages')
  // A continued thread already holds the history the client sends again: only its new message is run.
  const turn = target.thread ? { history: [], input: conversation.input } : conversation
  return runTurn(ctx, request.model, target, turn, background, request.metadata)
}

/**
 * `POST /api/v1/openai/responses`: `instructions` (a system message) and the input items, in
 * the thread of `previous_response_id` when given, else a new one.
 * @throws as {@link startChat}; OpenAiParamError `previous_response_not_found`.
 */
export async function startResponse(ctx: ResourceCtx, request: TResponseRequest, background: boolean): Promise<StartedRun> {
  const entries = typeof request.input === 'string' ? [{ role: 'user' as const, content: request.input }] : request.input
  if (entries.some(isApprovalResponse)) return continueAfterApprovals(ctx, request, entries, background)
  const items = entries.filter((entry): entry is TResponseInputItem => !isApprovalResponse(entry))
  const conversation = splitConversation(items, 'input')
  if (request.instructions) conversation.history.unshift({ role: 'system', content: request.instructions })
  let target: Target = { thread: null }
  if (request.previous_response_id) {
    const runUuid = request.previous_response_id.slice('resp_'.length)
    const previous = await runs.retrieve(ctx, runUuid).catch((error: unknown) => {
      if (error instanceof NotFoundError) throw new OpenAiParamError(['previous_response_id'], `Previous response with id '${request.previous_response_id}' not found.`, 'previous_response_not_found')
      throw error
    })
    const threadUuid = previous.data.run.thread_uuid
    if (!threadUuid) throw new OpenAiParamError(['previous_response_id'], 'The previous response has no thread to continue', 'previous_response_not_found')
    target = await threadTarget(ctx, threadUuid, ['previous_response_id'])
  }
  return runTurn(ctx, request.model, target, conversation, background, request.metadata)
}

const isApprovalResponse = (entry: TResponseInputItem | TApprovalResponseItem): entry is TApprovalResponseItem => entry.type === 'mcp_approval_response'

/**
 * A response whose input decides the `mcp_approval_request` items of `previous_response_id`
 * (docs/api/openai.md, "Approvals"): each decision is recorded as `POST approvals/{x}/approve` or
 * `deny` would, then the same run goes on and its rest is answered as this response, once it has
 * ended or waits again. Only decisions may be sent, each on an approval of that response's run.
 * @throws OpenAiParamError naming the item (`approval_not_found`, `invalid_value`) or
 *   `previous_response_id`; ConflictError (409) when an approval was decided already.
 */
async function continueAfterApprovals(
  ctx: ResourceCtx,
  request: TResponseRequest,
  entries: (TResponseInputItem | TApprovalResponseItem)[],
  background: boolean,
): Promise<StartedRun> {
  if (!request.previous_response_id) {
    throw new OpenAiParamError(['previous_response_id'], 'An mcp_approval_response continues the response that asked for it: send its id', 'missing_required_parameter')
  }
  const other = entries.findIndex((entry) => !isApprovalResponse(entry))
  if (other >= 0) throw new OpenAiParamError(['input', other, 'type'], 'Send only mcp_approval_response items to answer approval requests', 'invalid_value')
  const decisions = entries.flatMap((entry, index) => (isApprovalResponse(entry) ? [{ entry, index }] : []))
  const runUuid = request.previous_response_id.slice('resp_'.length)
  const previous = await runs.retrieve(ctx, runUuid).catch((error: unknown) => {
    if (error instanceof NotFoundError) throw new OpenAiParamError(['previous_response_id'], `Previous response with id '${request.previous_response_id}' not found.`, 'previous_response_not_found')
    throw error
  })
  const seq = previous.data.run.events_count
  for (const { entry, index } of decisions) {
    const asked = previous.data.run.approvals.find((approval) => approval.uuid === entry.approval_request_id)
    if (!asked) throw new OpenAiParamError(['input', index, 'approval_request_id'], `No approval request '${entry.approval_request_id}' in the previous response`, 'approval_not_found')
    if (asked.status !== 'pending') throw new ConflictError(`The approval request '${asked.uuid}' has been decided already (${asked.status})`)
  }
  for (const { entry } of decisions) {
    await approvals.decide(ctx, entry.approval_request_id, entry.approve, entry.reason ? { reason: entry.reason } : {})
  }
  // A stream follows the rest itself; otherwise the answer waits for it.
  if (background) return { ...started(await runs.retrieve(ctx, runUuid)), afterSeq: seq }
  return started(await runs.answerAfter(ctx, runUuid, seq))
}

/**
 * `metadata.if_busy`: what a turn sent to a busy thread does (docs/api/runs.md, "Busy threads").
 * @throws OpenAiParamError naming `metadata.if_busy` for another value.
 */
function ifBusyOf(metadata: Record<string, unknown> | null | undefined): IfBusy | undefined {
  const value = metadata?.if_busy
  if (value === undefined) return undefined
  if (value === 'enqueue' || value === 'reject' || value === 'interrupt') return value
  throw new OpenAiParamError(['metadata', 'if_busy'], "if_busy must be 'enqueue', 'reject' or 'interrupt'", 'invalid_value')
}
