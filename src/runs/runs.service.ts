/**
 * Runs (docs/api/runs.md): starting an agent, thread or prompt run,
 * reading and cancelling runs, and following their event logs.
 *
 * Everything a run can fail on before the model is called (visibility, the thread, the model and
 * its credential, prompt inputs, tools) is checked first and answers 4xx with nothing stored.
 * Then one transaction stores the run (`running`), the thread when a new one is needed, the
 * user's message and the agent's usage; the run then executes in this process, detached from the
 * request (src/runs/run-manager.ts). Without `background` the request waits for the end: 200
 * with the run, its stored messages and usage, or 502/504 when the upstream failed (the run and
 * the user's message stay stored). With `background: true` it answers 202 at once.
 *
 * Runs are the caller's own: a run is visible only to the user who started it (404 for anyone
 * else, another tenant included).
 */
import type { ModelMessage } from 'ai'
import { uuidv7 } from 'uuidv7'
import { activeTraceId } from '../platform/tracing.ts'
import { requireResource, requireResourceWith } from '../access/resource-access.ts'
import { executePrepared, writeOnce } from '../platform/db.ts'
import {
  ConflictError,
  DATABASE_RETRY_AFTER_SECONDS,
  NotFoundError,
  ServiceUnavailableError,
  BudgetExceededError,
  UpstreamError,
  UpstreamTimeoutError,
  ValidationError,
} from '../platform/errors.ts'
import { renderPrompt } from '../prompts/index.ts'
import { modelBySlugSql, type ResolvedModel } from '../models/index.ts'
import { resolveAgentModel, resolveFor } from '../models/index.ts'
import { eventsAfterSql, eventsOf, followRun } from './run-log.ts'
import { composeSystemPrompt } from './system-prompt.ts'
import { agentToolsSql, snapshotToolsSql } from '../catalog/index.ts'
import {
  RUN_FIELDS,
  toRun,
  toUsage,
  type RunRecord,
  type TRunAgentInput,
  type TRunPromptInput,
  type TRunResult,
  type TRunThreadInput,
  type RunEventRecord,
} from './run.schema.ts'
import { extractMemories, memoriesFor } from './memory-extraction.ts'
import { threadHistory } from '../threads/index.ts'
import { knowledgeForRun } from '../knowledge/index.ts'
import { toMessage, type MessageRow, messageColumns } from '../threads/index.ts'
import { isRecord, jsonRecordOf, jsonValueOf, storableJson, storableText } from '../access/wire.ts'
import { selectColumns, unprefix } from '../platform/sql.ts'
import { activeRunSql, requireThread } from '../threads/index.ts'
import { offeredTools } from './run-tools.ts'
import type { ResourceCtx } from '../context.ts'
import { BUDGET_EXCEEDED, type ClaimedRunRow, type ModelCall, type RunOutcome, type RunPlan } from './run-types.ts'
import type { RunKind } from '../../entities/index.ts'
import { APPROVALS_OF_RUN_SQL } from './approvals.service.ts'
import { accessTokenOf, budgetRefusal, requireWithinBudgets, spendScopeOf } from '../usage/index.ts'
import { endRuns, isActiveRunConflict, type EndedRun } from './run-ending.ts'
import { FINAL_EVENT_TYPES } from './run-log.ts'
import type { IfBusy } from './run.schema.ts'

/** The agent columns a run needs. */
export interface AgentForRun {
  id: number
  uuid: string
  name: string
  instruction: string
  metadata: Record<string, unknown>
  /** Its tools as read with it, opened by {@link toolsOf} (src/catalog/tool-calls.ts, `agentToolsSql`). */
  toolRows: unknown
  /** Its model as read with it (src/models/registry.ts, `modelBySlugSql`), for {@link resolveAgentModel}. */
  modelRow: unknown
  /** Its linked workflows the caller may run, as read with it (the `linkedWorkflows` port's `sql`, ./runs.port.ts). */
  workflowRows: unknown
  /** The agent's version these fields are (docs/api/versions.md): the current one, or the one asked for. */
  version: number
  /** Whether `version` was asked for (a queued run keeps it; otherwise it runs the version current when it starts). */
  pinned: boolean
}

/**
 * How a caller inside the service (a workflow's run nodes) waits for a run: `signal` cancels the
 * run (it ends `canceled`, as `POST runs/{x}/cancel` would) when it aborts before the run ended.
 */
export interface RunOptions {
  signal?: AbortSignal
  /**
   * Called once the run is stored, before it ends (a caller that waits for the end but must name
   * the run at once: a command room firing links it). A failure is the caller's: it is thrown to
   * it, and the run goes on.
   */
  onStored?: (run: { uuid: string; threadUuid: string | null }) => Promise<void>
  /** For a run a workflow execution starts: that execution's `toolDepth` (src/workflows/linked-workflows.ts). */
  toolDepth?: number
  /**
   * The run's uuid, chosen by the caller before it is stored (a command room firing links it
   * first, so a firing whose run does not exist is known to have started nothing); default a new UUIDv7.
   */
  runUuid?: string
  /**
   * The uuid of the new thread a run without one starts, chosen by the caller before it is stored
   * (a command room firing links it with the run); default a new UUIDv7. Unused for a run in a
   * thread that exists.
   */
  threadUuid?: string
  /** What a run sent to a busy thread does (docs/api/runs.md, "Busy threads"); default `enqueue`. */
  ifBusy?: IfBusy
  /**
   * Wait through approvals: answer once the run has ended, not when it starts waiting (a command
   * room firing or a workflow node stays running while its run waits, docs/api/runs.md, "Approvals").
   */
  untilEnd?: boolean
  /**
   * The evaluation this run is an item of (docs/api/evaluations.md): stored on the run and its new
   * thread, it keeps them out of the agent's usage count, thread lists, the leaderboard and metrics.
   */
  evaluationUuid?: string
}

/** Most earlier thread messages read for a run's context (then trimmed to the model's window). */
const HISTORY_LIMIT = 200

/** `POST /api/v1/agents/{agent_uuid}/run`. @throws NotFoundError, ValidationError, UpstreamError (502), UpstreamTimeoutError (504). */
export async function runAgent(ctx: ResourceCtx, input: TRunAgentInput, options: RunOptions = {}): Promise<TRunResult> {
  const agent = await requireAgent(ctx, input.agent_uuid, input.version)
  let thread: Ref | null = null
  if (input.thread_uuid) {
    const found = await requireThread(ctx, input.thread_uuid, true)
    if (found.agentId !== agent.id) throw new ValidationError(['thread_uuid'], 'The thread belongs to another agent')
    thread = found
  }
  return launchAgentRun(ctx, agent, thread, input.input, input.background === true, 'agent', { ifBusy: input.if_busy, ...options })
}

/** `POST /api/v1/threads/{thread_uuid}/run`. @throws as {@link runAgent}. */
export async function runThread(ctx: ResourceCtx, input: TRunThreadInput): Promise<TRunResult> {
  const thread = await requireThread(ctx, input.thread_uuid, true)
  // The thread stays the caller's, but running it still needs the agent to be usable by them.
  const agent = await requireAgent(ctx, { id: thread.agentId }, input.version)
  return launchAgentRun(ctx, agent, thread, input.content, input.background === true, 'thread', { ifBusy: input.if_busy })
}

/** `POST /api/v1/prompts/{prompt_uuid}/run`: the prompt's content rendered with `input`, no thread. */
export async function runPrompt(ctx: ResourceCtx, input: TRunPromptInput, options: RunOptions = {}): Promise<TRunResult> {
  const access = await requireResource(ctx, 'prompts', 'Prompt', input.prompt_uuid, 'read')
  const call = await promptCall(ctx, access.id, input.input, input.large_language_model ?? null)
  const budgeted = await requireWithinBudgets(ctx.em, spendScopeOf(ctx, null))
  const background = input.background === true
  return launch(
    ctx,
    { kind: 'prompt', agent: null, thread: null, prompt: access, model: call.model, input: input.input, background, budgeted },
    call,
    null,
    options,
  )
}

/**
 * The model call of a run of prompt `promptId` (the caller may read it): its content rendered
 * with `values`, on model `slug` (null: the default). Used by launches and by
 * src/runs/run-driver.ts (a prompt run taken over is rendered again from its stored input).
 * @throws ValidationError for values the prompt's inputs refuse, or a model without a credential.
 */
export async function promptCall(ctx: ResourceCtx, promptId: number, values: unknown, slug: string | null): Promise<ModelCall> {
  const [prompt] = await ctx.em.execute<{ content: string; metadata: unknown }[]>('select content, metadata from prompts where id = ?', [
    promptId,
  ])
  if (!prompt) throw new NotFoundError('Prompt')
  const metadata = jsonRecordOf(prompt.metadata)
  const declared = Array.isArray(metadata.input) ? metadata.input : []
  const rendered = renderPrompt(prompt.content, declared, values)
  const model = await resolveFor(ctx, slug, ['large_language_model'])
  return { model, system: undefined, messages: [{ role: 'user', content: rendered }], tools: [] }
}

/** `GET /api/v1/runs/{run_uuid}`. @throws NotFoundError */
export async function retrieve(ctx: ResourceCtx, runUuid: string): Promise<TRunResult> {
  return readResult(ctx, runUuid)
}

/**
 * `POST /api/v1/runs/{run_uuid}/cancel`: stops a queued, running or waiting run (it ends
 * `canceled`; a waiting run's pending approvals too).
 * @throws NotFoundError; ConflictError when the run has already ended.
 */
export async function cancel(ctx: ResourceCtx, runUuid: string): Promise<TRunResult> {
  const run = await requireRun(ctx, runUuid)
  if (!(await cancelRun(ctx, run.id))) throw new ConflictError(`The run has already ended (${run.status})`)
  return readResult(ctx, runUuid)
}

const CANCELED = { code: 'canceled', message: 'The run was canceled' }

/**
 * Cancels every run of evaluation `evaluationUuid` that has not ended, wherever it runs
 * (docs/api/evaluations.md, "Canceling"); no access check: the evaluation's own was made.
 * @returns how many it canceled.
 */
export async function cancelEvaluationRuns(ctx: ResourceCtx, evaluationUuid: string): Promise<number> {
  const ended = await endRuns(ctx.em.fork(), ctx.deps.runs.bus, { sql: 'evaluation_uuid = ?', params: [evaluationUuid] }, 'canceled', CANCELED)
  await afterEnding(ctx, ended)
  return ended.length
}
const SUPERSEDED = { code: 'superseded', message: 'A newer message to the thread interrupted this run' }

/** Marks run `runId` canceled unless it has ended, and stops it wherever it runs; answers whether it was canceled. */
async function cancelRun(ctx: ResourceCtx, runId: number): Promise<boolean> {
  const ended = await endRuns(ctx.em.fork(), ctx.deps.runs.bus, { sql: 'id = ?', params: [runId] }, 'canceled', CANCELED)
  await afterEnding(ctx, ended)
  return ended.length > 0
}

/**
 * Tells the processes of ended `running` runs to stop them, and, unless `o.dispatch` is false (a
 * new run takes the thread at once), starts the next queued run of a thread whose run ended
 * without an executor to notice (queued or waiting).
 */
async function afterEnding(ctx: ResourceCtx, ended: EndedRun[], o: { dispatch: boolean } = { dispatch: true }): Promise<void> {
  for (const run of ended) {
    if (run.was === 'running') await ctx.deps.runs.cancel(run.id)
    else if (o.dispatch && run.threadId !== null) await ctx.deps.runs.requestDispatch(run.threadId)
  }
}

/**
 * The events of a run after `lastEventId` (0: from the start), stored then live, ending after its
 * final event (`runs.events`, `GET /api/v1/runs/{run_uuid}/events`). One prepared statement checks
 * that the caller started the run and reads its log: a run that has ended needs no other
 * (src/runs/run-log.ts, `followRun`).
 * @throws NotFoundError before the first event.
 */
export async function events(
  ctx: ResourceCtx,
  runUuid: string,
  lastEventId: number,
  signal?: AbortSignal,
): Promise<AsyncGenerator<RunEventRecord>> {
  const [row] = await executePrepared(ctx.deps.orm, () => ctx.em, 'run_follow', FOLLOW_SQL, [lastEventId, runUuid, ctx.auth.user.id])
  if (!row) throw new NotFoundError('Run')
  return followRun(ctx.deps.orm, ctx.deps.runs.bus, Number(row.id), lastEventId, signal, eventsOf(row.events))
}

/** The run `r` by uuid, if the caller started it (parameters: the uuid, the caller's id); anyone else's is not found. */
const CALLERS_RUN = 'r.uuid = ? and r.user_id = ?'

/** The statement of {@link events}: the caller's run by uuid, and its first events after the one given. */
const FOLLOW_SQL = `select r.id::float8 as id, ${eventsAfterSql('r', '?::int')} as events from runs r where ${CALLERS_RUN}`

/** The id and status of run `uuid` if the caller started it. @throws NotFoundError */
export async function requireRun(ctx: ResourceCtx, uuid: string): Promise<{ id: number; status: string }> {
  const [row] = await ctx.em.execute<{ id: number; status: string }[]>(
    `select r.id::float8 as id, r.status from runs r where ${CALLERS_RUN}`,
    [uuid, ctx.auth.user.id],
  )
  if (!row) throw new NotFoundError('Run')
  return { id: Number(row.id), status: row.status }
}

/**
 * The answer of a run request for the run `uuid` if the caller started it: the run, the live
 * messages it stored (its user message first) and its usage, in one statement.
 * @throws NotFoundError
 */
async function readResult(ctx: ResourceCtx, uuid: string): Promise<TRunResult> {
  const rows = await ctx.em.execute<Record<string, unknown>[]>(
    `select ${RUN_COLUMNS}, ${messageColumns('m', 'mt.uuid', 'r.uuid', 'm.')}
     from ${RUN_FROM} left join messages m on m.run_id = r.id and m.deleted_at is null left join threads mt on mt.id = m.thread_id
     where ${CALLERS_RUN} order by m.id`,
    [uuid, ctx.auth.user.id],
  )
  if (rows.length === 0) throw new NotFoundError('Run')
  return answerOf(rows[0] as unknown as RunRecord, rows)
}

/**
 * A run answer from `run` and `rows` that each hold one of its messages as `m.`-prefixed
 * {@link MessageRow} columns (all null in a row without one), in the order given.
 */
function answerOf(run: RunRecord, rows: Record<string, unknown>[]): TRunResult {
  const messages = rows.flatMap((row) => (row['m.id'] == null ? [] : [toMessage(unprefix<MessageRow>(row, 'm.'))]))
  const wire = toRun(run)
  return {
    data: { run: wire, messages, usage: toUsage(run), approvals: wire.approvals.filter((approval) => approval.status === 'pending') },
  }
}

/** A run (`r`) with the uuids of its agent, thread (`t`; its messages' thread too) and prompt. */
const RUN_FROM =
  'runs r left join agents a on a.id = r.agent_id left join threads t on t.id = r.thread_id left join prompts p on p.id = r.prompt_id'
const RUN_COLUMNS = `${selectColumns('r', '', RUN_FIELDS)}, a.uuid as "agentUuid", t.uuid as "threadUuid", p.uuid as "promptUuid",
  (select json_agg(w.data order by w.seq) from run_events w where w.run_id = r.id and w.type = 'run.warning') as warnings,
  ${APPROVALS_OF_RUN_SQL} as approvals`

/** What the agent's statement reads besides its keys: the fields a run needs, as they are now or as a version's snapshot holds them. */
interface AgentRunColumns extends Record<string, unknown> {
  version: number
  name: string
  instruction: string
  metadata: unknown
  tools: unknown
  model: unknown
  workflows: unknown
}

/**
 * The agent (by uuid, or by id for a thread's agent) with the columns a run needs, if the caller
 * may use it, in one statement: its tools, and its model (the one its metadata names, else the
 * default) with the accounts that could serve it. With `version`, those of that version's snapshot
 * (docs/api/versions.md, "Pinned runs"), read in the same statement.
 * @throws NotFoundError, ForbiddenError; ValidationError naming `version` when the agent has no such version.
 */
export async function requireAgent(ctx: ResourceCtx, key: string | { id: number }, version?: number | null): Promise<AgentForRun> {
  const pinned = version !== undefined && version !== null
  // The agent's own columns (`r`), or its version's snapshot opened once into columns (`p`): it is
  // stored compressed, and reading each field from the jsonb would decompress it each time.
  const from = pinned ? 'p' : 'r'
  // The slug resolveAgentModel reads from the metadata: a non-empty string, else the default.
  const slug = {
    sql: `coalesce(case when jsonb_typeof(${from}.metadata->'large_language_model') = 'string' then nullif(${from}.metadata->>'large_language_model', '') end, ?)`,
    params: [ctx.config.llm.defaultModel],
  }
  const model = modelBySlugSql(slug, { workspaceId: ctx.workspace.workspace.id, userId: ctx.auth.user.id })
  const workflows = pinned ? ctx.deps.linkedWorkflows.snapshotSql(ctx, 'p.workflows') : ctx.deps.linkedWorkflows.sql(ctx, 'r.id')
  const tools = pinned ? snapshotToolsSql('p.tools') : agentToolsSql('r.id')
  const columns = pinned
    ? {
        sql: `r.version as current, (select row_to_json(s) from (select v.version, p.name, p.instruction, p.metadata,
            ${tools} as tools, ${model.sql} as model, ${workflows.sql} as workflows
            from agent_versions v cross join lateral jsonb_to_record(v.snapshot) as p(name text, instruction text, metadata jsonb, tools jsonb, workflows jsonb)
            where v.agent_id = r.id and v.version = ?::int) s) as pinned`,
        params: [...model.params, ...workflows.params, version],
      }
    : {
        sql: `r.version, r.name, r.instruction, r.metadata, ${tools} as tools, ${model.sql} as model, ${workflows.sql} as workflows`,
        params: [...model.params, ...workflows.params],
      }
  const access = await requireResourceWith<AgentRunColumns & { current?: number; pinned?: unknown }>(
    ctx,
    'agents',
    'Agent',
    key,
    'read',
    columns,
  )
  let row: AgentRunColumns = access.row
  if (pinned) {
    const found = jsonValueOf(access.row.pinned)
    if (!isRecord(found)) {
      throw new ValidationError(['version'], `The agent has no version ${version}: its versions are 1 to ${Number(access.row.current)}`)
    }
    row = found as AgentRunColumns
  }
  return {
    id: access.id,
    uuid: access.uuid,
    name: row.name,
    instruction: row.instruction,
    metadata: jsonRecordOf(row.metadata),
    toolRows: row.tools,
    modelRow: row.model,
    workflowRows: row.workflows,
    version: Number(row.version),
    pinned,
  }
}

async function launchAgentRun(
  ctx: ResourceCtx,
  agent: AgentForRun,
  existingThread: Ref | null,
  content: string,
  background: boolean,
  kind: RunKind,
  options: RunOptions = {},
): Promise<TRunResult> {
  const model = await resolveAgentModel(ctx, agent.metadata, agent)
  // Before anything is stored or any model is asked, knowledge's embeddings included (docs/api/usage-and-budgets.md, "Enforcement").
  const budgeted = await requireWithinBudgets(ctx.em, spendScopeOf(ctx, agent.id))
  const offered = offeredTools(ctx, agent, model, options.toolDepth ?? 0)
  const ifBusy = options.ifBusy ?? 'enqueue'
  const queue = () => enqueue(ctx, { kind, agent, thread: existingThread as Ref, model, content, background }, options)
  if (existingThread) {
    const busy = await activeRunOf(ctx, existingThread.id)
    if (busy && ifBusy === 'reject') throw busyConflict(busy)
    if (busy && ifBusy === 'enqueue') return queue()
    if (busy) await supersede(ctx, existingThread.id)
  }
  const call = await agentCall(ctx, agent, existingThread?.id ?? null, content, model, offered)
  const launchInput = {
    kind,
    agent: { id: agent.id, uuid: agent.uuid, version: agent.version },
    thread: existingThread ?? 'new',
    prompt: null,
    model,
    input: content,
    background,
    warnings: offered.warnings,
    budgeted,
  } as const
  // An evaluation's inputs are not the caller's conversation: nothing is remembered from them.
  const memoryInput = agent.metadata.memory === true && !options.evaluationUuid ? content : null
  try {
    return await launch(ctx, launchInput, call, memoryInput, options)
  } catch (error) {
    // Another run of the thread started between the look and the launch (the unique index on a
    // thread's active run refused this one; nothing was stored): the policy decides again.
    if (!existingThread || !isActiveRunConflict(error)) throw error
    const busy = await activeRunOf(ctx, existingThread.id)
    if (ifBusy === 'reject') throw busyConflict(busy ?? { uuid: 'unknown', status: 'running' })
    if (ifBusy === 'enqueue') return queue()
    await supersede(ctx, existingThread.id)
    return launch(ctx, launchInput, await agentCall(ctx, agent, existingThread.id, content, model, offered), memoryInput, options)
  }
}

/**
 * The model call of an agent's run: its system prompt (with the caller's memories and the
 * knowledge retrieved for `content`), the thread's history that fits the model's window, then
 * `content` as the user's message unless `o.inHistory` (a stored run going on: its user message
 * is the history's last). Used by launches and by src/runs/run-driver.ts.
 */
export async function agentCall(
  ctx: ResourceCtx,
  agent: AgentForRun,
  threadId: number | null,
  content: string,
  model: ResolvedModel,
  offered: ReturnType<typeof offeredTools>,
  o: {
    inHistory?: boolean
    answeredLater?: ReadonlySet<string>
    /** Retrieve no knowledge (no embedding call): a run a budget refuses before its model call. */
    skipKnowledge?: boolean
  } = {},
): Promise<ModelCall> {
  const { tools, mcpServers, workflowTools, webSearch, warnings } = offered
  const memories = agent.metadata.memory === true ? await memoriesFor(ctx.em, ctx.auth.user.id, agent.id) : []
  const knowledge = agent.metadata.knowledge === true && !o.skipKnowledge ? await knowledgeForRun(ctx, agent.id, content, model) : null
  const system = composeSystemPrompt(agent, { memories, knowledge: knowledge?.context })
  const history = threadId === null ? [] : await threadHistory(ctx.em, threadId, HISTORY_LIMIT)
  const earlier = closeUnanswered(toModelMessages(history), o.answeredLater ?? new Set())
  const messages: ModelMessage[] = o.inHistory
    ? fitWindow(earlier, model, system, '')
    : [...fitWindow(earlier, model, system, content), { role: 'user', content }]
  return {
    model,
    system,
    messages,
    tools,
    mcpServers,
    workflowTools,
    webSearch,
    warnings,
    ...(knowledge ? { knowledge: { event: knowledge.event, citations: knowledge.citations } } : {}),
    invokedAgent: { uuid: agent.uuid, name: agent.name, version: agent.version },
  }
}

/**
 * Whether a budget blocks a claimed run now. Such a run is planned without knowledge (no embedding
 * call), and its executor's own check ends it `budget_exceeded` before its model call
 * (src/runs/run-executor.ts, `checkBudget`).
 */
export async function refusedByBudget(ctx: ResourceCtx, row: ClaimedRunRow): Promise<boolean> {
  const scope = {
    workspaceId: Number(row.workspace_id),
    agentId: row.agent_id === null ? null : Number(row.agent_id),
    userId: Number(row.user_id),
  }
  return (
    (await budgetRefusal(ctx.em, { ...scope, accessTokenId: row.access_token_id === null ? null : Number(row.access_token_id) })) !== null
  )
}

/** The thread's oldest unfinished run (running, waiting or queued), if any. */
async function activeRunOf(ctx: ResourceCtx, threadId: number): Promise<{ uuid: string; status: string } | null> {
  const [row] = await ctx.em.execute<{ uuid: string; status: string }[]>(`select ar.uuid, ar.status from ${activeRunSql('?')}`, [threadId])
  return row ?? null
}

/** 409 for `if_busy: reject`, naming the thread's active run. */
const busyConflict = (run: { uuid: string; status: string }) => new ConflictError(`The thread is busy: run ${run.uuid} is ${run.status}`)

/** Ends every unfinished run of the thread `canceled` (`superseded`) for `if_busy: interrupt`. */
async function supersede(ctx: ResourceCtx, threadId: number): Promise<void> {
  const ended = await endRuns(ctx.em.fork(), ctx.deps.runs.bus, { sql: 'thread_id = ?', params: [threadId] }, 'canceled', SUPERSEDED)
  await afterEnding(ctx, ended, { dispatch: false })
}

/**
 * Stores a run `queued` behind the thread's unfinished ones (`if_busy: enqueue`): its input is
 * kept in the run, and its user message is stored when it starts (src/runs/run-driver.ts). It
 * starts in whichever process takes the thread's dispatch job once every earlier run has ended.
 * Answers at once in the background (202, `queued`), else once the run has ended or waits for an
 * approval, wherever it executed.
 */
async function enqueue(
  ctx: ResourceCtx,
  o: { kind: RunKind; agent: AgentForRun; thread: Ref; model: ResolvedModel; content: string; background: boolean },
  options: RunOptions,
): Promise<TRunResult> {
  const uuid = options.runUuid ?? uuidv7()
  await ctx.em.execute(
    `insert into runs (uuid, kind, status, agent_id, agent_version, thread_id, model, input, background, events_count, user_id, workspace_id, access_token_id, trace_id, created_at, updated_at)
     values (?, ?, 'queued', ?, ?, ?, ?, ?::jsonb, ?, 0, ?, ?, ?::bigint, ?, now(), now())`,
    [
      uuid,
      o.kind,
      o.agent.id,
      // A pinned run keeps its version; another runs the version current when it starts (src/runs/run-driver.ts).
      o.agent.pinned ? o.agent.version : null,
      o.thread.id,
      o.model.llm.slug,
      storableJson(storableText(o.content)),
      o.background,
      ctx.auth.user.id,
      ctx.workspace.workspace.id,
      accessTokenOf(ctx),
      activeTraceId(),
    ],
  )
  // The run before it may have ended between the look and this insert, seeing no queue: ask anyway.
  await ctx.deps.runs.requestDispatch(o.thread.id)
  await options.onStored?.({ uuid, threadUuid: o.thread.uuid })
  if (o.background) return readResult(ctx, uuid)
  return answerWhenDone(ctx, uuid, options)
}

/**
 * The answer of the caller's run `uuid` once, after its event `afterSeq`, it has ended or waits
 * for an approval again (the OpenAI-compatible API answers a resumed run this way).
 * @throws NotFoundError; UpstreamError, UpstreamTimeoutError for a run the upstream failed.
 */
export function answerAfter(ctx: ResourceCtx, uuid: string, afterSeq: number): Promise<TRunResult> {
  return answerWhenDone(ctx, uuid, {}, afterSeq)
}

/**
 * The answer of run `uuid` once it has ended or (unless `untilEnd`) waits for an approval,
 * wherever it executes (its log is followed from after `afterSeq`); a run the upstream failed
 * answers 502/504 as a launch does.
 */
async function answerWhenDone(
  ctx: ResourceCtx,
  uuid: string,
  options: Pick<RunOptions, 'signal' | 'untilEnd'>,
  afterSeq = 0,
): Promise<TRunResult> {
  const { signal } = options
  const run = await requireRun(ctx, uuid)
  const stop = () => void cancelRun(ctx, run.id).catch(() => undefined)
  signal?.addEventListener('abort', stop, { once: true })
  try {
    for await (const event of await events(ctx, uuid, afterSeq, signal)) {
      if (FINAL_EVENT_TYPES.has(event.type) || (event.type === 'run.approval_requested' && !options.untilEnd)) break
    }
  } finally {
    signal?.removeEventListener('abort', stop)
  }
  const result = await readResult(ctx, uuid)
  const { status, error } = result.data.run
  if (status === 'failed' && error) failIfUpstream(ctx, { status, error, output: '' }, uuid)
  return result
}

/**
 * Stores the run ({@link insertRun}) and starts its model call at once, without waiting for the
 * store: the model's first bytes come while the launch statement commits (the executor holds the
 * events until the run is stored, and aborts the call if storing fails). Then answers as
 * {@link settle} does.
 * @throws the launch statement's error (nothing stored, the model call aborted); as {@link settle}.
 */
async function launch(
  ctx: ResourceCtx,
  o: LaunchInput,
  modelCall: ModelCall,
  memoryInput: string | null,
  options: RunOptions,
): Promise<TRunResult> {
  const runUuid = options.runUuid ?? uuidv7()
  const call: ModelCall = { ...modelCall, runUuid }
  const launching = insertRun(ctx, o, runUuid, options.evaluationUuid ?? null, options.threadUuid)
  const stored = launching.then((launched): RunPlan => ({
    ...call,
    run: { id: launched.record.id, uuid: launched.record.uuid, attempts: 1 },
    kind: o.kind,
    workspaceId: ctx.workspace.workspace.id,
    userId: ctx.auth.user.id,
    accessTokenId: accessTokenOf(ctx),
    budgeted: o.budgeted,
    agent: o.agent,
    threadId: launched.threadId,
    threadUuid: launched.record.threadUuid,
  }))
  const execution = ctx.deps.runs.start(call, stored)
  const launched = await launching
  const plan = await stored
  await options.onStored?.({ uuid: plan.run.uuid, threadUuid: plan.threadUuid })
  return settle(ctx, plan, launched, execution, o.background, memoryInput, options)
}

/** Answers a started run at once in the background (the router answers 202), else when its `execution` ended. */
async function settle(
  ctx: ResourceCtx,
  plan: RunPlan,
  launched: LaunchedRun,
  execution: Promise<RunOutcome>,
  background: boolean,
  memoryInput: string | null,
  options: RunOptions,
): Promise<TRunResult> {
  const runs = ctx.deps.runs
  const { signal } = options
  if (signal) {
    const stop = () => void cancelRun(ctx, plan.run.id).catch((error: unknown) => ctx.deps.log.warn({ err: error }, 'run cancel failed'))
    if (signal.aborted) stop()
    else {
      signal.addEventListener('abort', stop, { once: true })
      const forget = () => signal.removeEventListener('abort', stop)
      // Both ways: a `.finally` chain would be a second, unhandled rejection if the run rejected.
      execution.then(forget, forget)
    }
  }
  if (memoryInput !== null) {
    runs.track(
      execution.then((outcome) =>
        outcome.status === 'succeeded'
          ? extractMemories({ orm: ctx.deps.orm, config: ctx.config }, { plan, userText: memoryInput, answer: outcome.output })
          : undefined,
      ),
    )
  }
  // Answered from what the launch and settle statements returned, without reading the run again.
  if (background) return answerOf(launched.record, launched.rows)
  const outcome = await execution
  failIfUpstream(ctx, outcome, plan.run.uuid)
  // Handed over at shutdown: it goes on in another process; the caller gets the run as it stands.
  if (outcome.status === 'running') return readResult(ctx, plan.run.uuid)
  if (outcome.status === 'awaiting_approval' && options.untilEnd) {
    // It goes on in whichever process resumes it: follow its log from where this execution stopped.
    const seq = Number((outcome.settledRows?.[0] as { eventsCount?: unknown } | undefined)?.eventsCount ?? 0)
    return answerWhenDone(ctx, plan.run.uuid, options, seq)
  }
  const settledRows = outcome.settledRows ?? []
  if (settledRows.length === 0) return readResult(ctx, plan.run.uuid)
  // The warnings of the launch, then those the run met while it executed (src/runs/run-executor.ts).
  const launchWarnings = Array.isArray(launched.record.warnings) ? launched.record.warnings : []
  const warnings = outcome.warnings ? [...launchWarnings, ...outcome.warnings] : launched.record.warnings
  const approvals = outcome.approvals ?? []
  return answerOf({ ...launched.record, ...(settledRows[0] as unknown as RunRecord), warnings, approvals }, [
    ...launched.rows,
    ...settledRows,
  ])
}

/**
 * Errors of runs that failed through the service's own fault, not the upstream's: the answer could
 * not be stored, or the run was interrupted more often than it is taken over (503 with Retry-After).
 */
const SERVICE_FAILURES = new Set(['not_stored', 'interrupted'])

/**
 * 502/504 for a run the upstream failed, 503 with `Retry-After` for one the service could not
 * store or finish ({@link SERVICE_FAILURES}); the run itself stays stored and readable, and the
 * failure names it in `X-Run-UUID` (so does a kept `Idempotency-Key` answer, docs/api/conventions.md).
 */
function failIfUpstream(ctx: ResourceCtx, outcome: RunOutcome, runUuid: string): void {
  if (outcome.status !== 'failed' || !outcome.error) return
  ctx.setHeader('x-run-uuid', runUuid)
  const message = `Run ${runUuid} failed: ${outcome.error.message}`
  if (SERVICE_FAILURES.has(outcome.error.code)) throw new ServiceUnavailableError(message, DATABASE_RETRY_AFTER_SECONDS)
  // Stopped between steps by a budget: over a budget is a 429, and waiting for its period helps (its message names it).
  if (outcome.error.code === BUDGET_EXCEEDED) throw new BudgetExceededError(message, null)
  if (outcome.error.code === 'upstream_timeout') throw new UpstreamTimeoutError(message)
  throw new UpstreamError(message)
}

/** The keys of the thread, agent or prompt a run goes with. */
interface Ref {
  id: number
  uuid: string
}

/**
 * A run as its launch statement stored it: `record` (the run with its agent, thread and prompt
 * uuids) and `rows`, each holding the user's message it stored as `m.` columns (none for prompt
 * runs), for {@link answerOf}.
 */
interface LaunchedRun {
  threadId: number | null
  record: RunRecord
  rows: Record<string, unknown>[]
}

/** What {@link insertRun} stores: the run's kind, what it goes with, its model, input and mode. */
interface LaunchInput {
  kind: RunKind
  /** The agent, with the version the run uses (docs/api/versions.md). */
  agent: (Ref & { version: number }) | null
  thread: Ref | 'new' | null
  prompt: Ref | null
  model: ResolvedModel
  input: unknown
  background: boolean
  /** The run's warnings, answered with it at once (its executor logs them as `run.warning` events). */
  warnings?: ModelCall['warnings']
  /** Whether an active budget covered the run when it was checked (`RunPlan.budgeted`). */
  budgeted: boolean
}

/**
 * The launch statement of {@link insertRun}, prepared (src/platform/db.ts, `executePrepared`): one text for
 * every run, planned once per pooled connection. A thread inserted by this statement is invisible
 * to its other parts: it starts at one message.
 */
const LAUNCH_SQL = `with new_thread as (
     insert into threads (uuid, name, agent_id, messages_count, metadata, user_id, workspace_id, evaluation_uuid, created_at, updated_at)
     select ?, null, ?, 1, '{}', ?, ?, ?::uuid, now(), now() where ?::boolean returning id),
   run as (
     insert into runs (uuid, kind, status, agent_id, agent_version, thread_id, prompt_id, model, input, background, events_count, started_at, user_id, workspace_id, access_token_id, trace_id, evaluation_uuid, created_at, updated_at)
     values (?, ?, 'running', ?, ?::int, coalesce((select id from new_thread), ?::bigint), ?, ?, ?::jsonb, ?, 1, now(), ?, ?, ?::bigint, ?, ?::uuid, now(), now())
     returning *),
   message as (
     insert into messages (uuid, thread_id, run_id, user_id, workspace_id, role, content, parts, created_at, updated_at)
     select ?, run.thread_id, run.id, ?, ?, 'user', ?, ?::jsonb, clock_timestamp(), clock_timestamp() from run where run.thread_id is not null
     returning *),
   counted as (update threads set messages_count = messages_count + 1, updated_at = now() where id = ?::bigint),
   used as (update agents set usage_count = usage_count + 1, last_used_at = now() where id = ?::bigint and ?::uuid is null),
   started as (insert into run_events (run_id, seq, type, data, created_at) select run.id, 1, 'run.started', ?::jsonb, now() from run)
   select ${selectColumns('run', '', RUN_FIELDS)}, run.thread_id::float8 as "threadId", ${messageColumns('message', '?::uuid', 'run.uuid', 'm.')}
   from run left join message on true`

/** A launched run read back as {@link LAUNCH_SQL} answers it (parameters: the thread's uuid, the run's). */
const LAUNCHED_SQL = `select ${selectColumns('run', '', RUN_FIELDS)}, run.thread_id::float8 as "threadId", ${messageColumns('message', '?::uuid', 'run.uuid', 'm.')}
   from runs run left join messages message on message.run_id = run.id and message.role = 'user' where run.uuid = ?`

/**
 * Stores a starting run in one statement (so atomically, in one round trip): the new thread when
 * `thread` is `'new'` (under `newThreadUuid` when given), the run (`running`, its log holding
 * `run.started` as event 1), the user's message with the thread's `messages_count`, and the
 * agent's usage. Prompt runs (`thread` null) store the run and its first event only. Answers the
 * stored run and message as they would be read back.
 */
async function insertRun(ctx: ResourceCtx, o: LaunchInput, uuid: string, evaluation: string | null, newThreadUuid?: string): Promise<LaunchedRun> {
  const user = ctx.auth.user.id
  const workspace = ctx.workspace.workspace.id
  const isNew = o.thread === 'new'
  const existing = o.thread === 'new' ? null : o.thread
  const threadUuid = isNew ? (newThreadUuid ?? uuidv7()) : (existing?.uuid ?? null)
  const agentId = o.agent?.id ?? null
  const text = typeof o.input === 'string' ? storableText(o.input) : ''
  // prettier-ignore
  const params = [
    // One line per part of the statement: new_thread, run, message, then counted, used, started, the answer.
    threadUuid, agentId, user, workspace, evaluation, isNew,
    uuid, o.kind, agentId, o.agent?.version ?? null, existing?.id ?? null, o.prompt?.id ?? null, o.model.llm.slug, storableJson(o.input), o.background, user, workspace, accessTokenOf(ctx), activeTraceId(), evaluation,
    uuidv7(), user, workspace, text, storableJson([{ type: 'text', text }]),
    existing?.id ?? null,
    agentId, evaluation,
    storableJson({ run_uuid: uuid, model: o.model.llm.slug }),
    threadUuid,
  ]
  // A lost connection runs it again, once the run's uuid shows the first try did not commit; a
  // first try that did is read back, so the caller answers what was stored, once.
  const rows = await writeOnce(
    () => executePrepared(ctx.deps.orm, () => ctx.em, 'run_launch', LAUNCH_SQL, params),
    async () => {
      const found = await ctx.em.fork().execute<Record<string, unknown>[]>(LAUNCHED_SQL, [threadUuid, uuid])
      return found.length > 0 ? found : undefined
    },
  )
  const row = rows[0]
  const threadId = row.threadId === null ? null : Number(row.threadId)
  const record = {
    ...(row as unknown as RunRecord),
    agentUuid: o.agent?.uuid ?? null,
    threadUuid,
    promptUuid: o.prompt?.uuid ?? null,
    warnings: o.warnings ?? [],
    approvals: [],
  }
  return { threadId, record, rows }
}

/** Stored thread messages as the AI SDK's model messages (tool calls and results kept paired). */
export function toModelMessages(history: { role: string; content: string; parts: unknown }[]): ModelMessage[] {
  const out: ModelMessage[] = []
  for (const message of history) {
    const parts = Array.isArray(message.parts) ? message.parts.filter(isRecord) : []
    if (message.role === 'user') out.push({ role: 'user', content: message.content })
    else if (message.role === 'system') out.push({ role: 'system', content: message.content })
    else if (message.role === 'assistant') {
      const calls = parts.filter((part) => part.type === 'tool-call')
      if (calls.length === 0) out.push({ role: 'assistant', content: message.content })
      else {
        out.push({
          role: 'assistant',
          content: [
            ...(message.content ? [{ type: 'text' as const, text: message.content }] : []),
            ...calls.map((call) => ({
              type: 'tool-call' as const,
              toolCallId: String(call.tool_call_id),
              toolName: String(call.tool_name),
              input: call.input ?? {},
            })),
          ],
        })
      }
    } else if (message.role === 'tool') {
      const results = parts.filter((part) => part.type === 'tool-result')
      if (results.length === 0) continue
      out.push({
        role: 'tool',
        content: results.map((part) => ({
          type: 'tool-result' as const,
          toolCallId: String(part.tool_call_id),
          toolName: String(part.tool_name),
          output:
            part.is_error === true
              ? { type: 'error-text' as const, value: JSON.stringify(part.output) }
              : { type: 'json' as const, value: jsonValue(part.output) },
        })),
      })
    }
  }
  return out
}

/**
 * `messages` with a failed result after every tool call that has none (its run was canceled or
 * superseded while the call waited for a person, docs/api/runs.md, "Busy threads"): a model
 * refuses a conversation with an unanswered call. Calls in `answeredLater` are left open: a
 * resumed run answers them itself (src/runs/run-driver.ts).
 */
export function closeUnanswered(messages: ModelMessage[], answeredLater: ReadonlySet<string>): ModelMessage[] {
  const answered = new Set<string>()
  for (const message of messages) {
    if (message.role !== 'tool') continue
    for (const part of message.content) if (part.type === 'tool-result') answered.add(part.toolCallId)
  }
  const out: ModelMessage[] = []
  for (const message of messages) {
    out.push(message)
    if (message.role !== 'assistant' || typeof message.content === 'string') continue
    const open = message.content.flatMap((part) =>
      part.type === 'tool-call' && !answered.has(part.toolCallId) && !answeredLater.has(part.toolCallId) ? [part] : [],
    )
    if (open.length === 0) continue
    out.push({
      role: 'tool',
      content: open.map((part) => ({
        type: 'tool-result' as const,
        toolCallId: part.toolCallId,
        toolName: part.toolName,
        output: { type: 'error-text' as const, value: 'The call did not run: its run ended before a person decided on it' },
      })),
    })
  }
  return out
}

/**
 * The newest history that fits the model's context window next to the system prompt, the new
 * input and the answer (tokens estimated as characters / 4), never starting on a tool result
 * whose call was cut off.
 */
export function fitWindow(history: ModelMessage[], model: ResolvedModel, system: string | undefined, input: string): ModelMessage[] {
  const estimate = (value: unknown) => Math.ceil(JSON.stringify(value).length / 4)
  let budget = model.llm.contextWindow - model.llm.maxOutputTokens - estimate(system ?? '') - estimate(input)
  let start = history.length
  while (start > 0) {
    const cost = estimate(history[start - 1].content)
    if (cost > budget) break
    budget -= cost
    start -= 1
  }
  while (start < history.length && history[start].role === 'tool') start += 1
  return history.slice(start)
}

/** A stored value as the AI SDK's JSON value type (stored JSON is JSON; `undefined` becomes null). */
function jsonValue(value: unknown): import('@ai-sdk/provider').JSONValue {
  return JSON.parse(JSON.stringify(value ?? null))
}
