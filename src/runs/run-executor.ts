/**
 * Executes one run against its model (docs/api/runs.md): streams the
 * answer through the AI SDK, writes every delta, tool call and tool result to the run's event
 * log, stores the answer as thread messages, and settles the run's status, usage and timings.
 *
 * Failures: whatever the upstream does (error status, timeout,
 * malformed JSON, a dropped stream), the run ends `failed` with `{code, message}`, an `error`
 * event and `run.failed`; the user's message (stored before the model was called) stays, and no
 * partial answer is stored as a message. A cancel ends it `canceled` the same way.
 *
 * A run whose model asked for calls a person must approve (docs/api/runs.md, "Approvals") stops
 * after that step instead: one statement stores what it answered so far (its messages and usage),
 * an approval per such call, `run.approval_requested` per approval and the status
 * `awaiting_approval`. Nothing of it stays in the process; it resumes later as the same run
 * ({@link executeRun} with the stored sequence), and the settle statements then add to its
 * output, usage and latency rather than replace them.
 *
 * Surviving its process (docs/api/runs.md, "Interrupted runs"): every write of a run is
 * conditional on its claim (`runs.attempts`) and runs again on a new connection when PostgreSQL
 * ended the one it ran on (src/platform/db.ts). After each step that called tools the run's
 * checkpoint (its completed steps) is stored with its events, and a tool call is logged before
 * the tool runs. A process that takes over a run whose process died goes on from there
 * (src/runs/run-driver.ts, {@link Recovery}); at shutdown a run still executing is handed over
 * rather than failed.
 */
import {
  BUDGET_EXCEEDED,
  type Checkpoint,
  type ExecutorDeps,
  type ModelCall,
  type Part,
  type PendingCall,
  type Recovery,
  type RunOutcome,
  type RunPlan,
  type Step,
} from './run-types.ts'
import { APICallError } from 'ai'
import { uuidv7 } from 'uuidv7'
import { executePrepared, retryOnConnectionLoss, writeOnce, type Orm } from '../platform/db.ts'
import { databaseUnavailable } from '../platform/errors.ts'
import { costOf } from '../models/index.ts'
import { RUN_FIELDS, type RunEventRecord, type TApproval, type TRunWarning } from './run.schema.ts'
import { isRecord, jsonValueOf, storableJson, storableText } from '../access/wire.ts'
import { selectColumns } from '../platform/sql.ts'
import { eventsJson, RunLog, RunLostError } from './run-log.ts'
import { modelParts } from './model-stream.ts'
import { messageColumns } from '../threads/index.ts'
import { budgetRefusal, type SpendScope } from '../usage/index.ts'

/**
 * Runs a run to its end; never throws for the upstream's faults (they become a `failed`
 * outcome). The model `call` starts at once, while `stored` (the run's launch statement) may
 * still be under way: the events wait for it, and when it fails the call is aborted and nothing
 * is written (the outcome is then `failed`, `not_stored`; the caller answers the launch's own
 * error). `cancel` aborts the run (a cancel request); `LLM_TIMEOUT_MS` bounds the whole run.
 */
export async function executeRun(
  deps: ExecutorDeps,
  call: ModelCall,
  stored: Promise<RunPlan>,
  cancel: AbortSignal,
  o: {
    storedSeq?: number
    recovered?: Recovery
    /** Ask the budgets before the first model call: a run going on after a wait, a queue or a takeover was not checked at its launch. */
    checkBudget?: boolean
  } = {},
): Promise<RunOutcome> {
  const { orm, config } = deps
  const notStored = new AbortController()
  const planned = stored.then(
    (plan) => plan,
    (error: unknown) => {
      notStored.abort(error)
      return null
    },
  )
  // `run.started` was stored with the run (src/runs/runs.service.ts): the log goes on at 2, or
  // after what a resumed run has logged so far.
  const log = new RunLog(
    orm,
    deps.bus,
    planned.then((plan) => (plan ? { id: plan.run.id, attempts: plan.run.attempts } : null)),
    o.storedSeq ?? 1,
  )
  const timeout = AbortSignal.timeout(config.llm.timeoutMs)
  const signal = AbortSignal.any([cancel, timeout, notStored.signal])
  const started = performance.now()
  const answer: Answer = {
    steps: structuredClone(o.recovered?.steps ?? []),
    step: emptyStep(),
    firstEventMs: null,
    warnings: [],
    approvals: [],
  }

  if (o.recovered) {
    // What it logged before its process died stays as it was: no second warning or retrieval event.
    log.append('run.resumed', { run_uuid: o.recovered.runUuid, reason: 'interrupted', discarded_after: o.recovered.discardedAfter })
  } else {
    // Before the answer, as they came before the model was asked.
    for (const warning of call.warnings ?? []) log.append('run.warning', warning)
    if (call.knowledge) log.append('knowledge.retrieved', call.knowledge.event)
  }
  const overBudget = budgetCheck(orm, planned, o.recovered?.steps ?? [])
  const budget: { stop: Failure | null } = { stop: o.checkBudget ? await overBudget([]) : null }
  let failure: Failure | null = budget.stop
  if (!failure) {
    try {
      await streamAnswer(call, config, signal, log, started, answer, async (steps) => {
        budget.stop = await overBudget(steps)
        return budget.stop !== null
      })
      failure = budget.stop
    } catch (error) {
      failure = classify(error, cancel, timeout)
    }
  }
  const plan = await planned
  if (!plan) return { status: 'failed', error: { code: 'not_stored', message: 'The run could not be stored' }, output: '' }
  // Another process ended the run (and wrote its final event), or took it over: nothing more is ours to write.
  if (cancel.reason instanceof RunLostError) return lost(cancel.reason)
  // This process shuts down under it: another one takes it over from its last completed step.
  if (cancel.reason instanceof RunInterruptedError && (await handOver(deps, plan, log)))
    return { status: 'running', error: null, output: '' }
  const outcome = await conclude(deps, plan, log, failure, answer, started)
  return answer.warnings.length > 0 ? { ...outcome, warnings: answer.warnings } : outcome
}

/** The tokens of a model step. */
type StepUsage = Pick<Step, 'promptTokens' | 'completionTokens'>

/** The tokens of `steps` together. */
const totalUsage = (steps: StepUsage[]): StepUsage => ({
  promptTokens: steps.reduce((sum, s) => sum + s.promptTokens, 0),
  completionTokens: steps.reduce((sum, s) => sum + s.completionTokens, 0),
})

/** Whose spend a run's model calls are: the scope its budgets cover. */
export const spendScopeOfPlan = (plan: RunPlan): SpendScope => ({
  workspaceId: plan.workspaceId,
  agentId: plan.agent?.id ?? null,
  userId: plan.userId,
  accessTokenId: plan.accessTokenId,
})

/**
 * How a run asks its budgets whether it may call the model again (docs/api/usage-and-budgets.md,
 * "Enforcement"): the failure a reached `block` budget ends it with, or null. What it used and has
 * not stored counts with the stored spend: `recovered` (a taken-over run's completed steps) and
 * the steps of this execution so far.
 */
function budgetCheck(orm: Orm, planned: Promise<RunPlan | null>, recovered: StepUsage[]): (steps: StepUsage[]) => Promise<Failure | null> {
  return async (steps) => {
    const plan = await planned
    if (!plan) return null
    const used = totalUsage([...recovered, ...steps])
    const unstored = { tokens: used.promptTokens + used.completionTokens, cost: costOf(plan.model.llm, used) }
    const refusal = await budgetRefusal(orm.em.fork(), spendScopeOfPlan(plan), unstored)
    return refusal ? { status: 'failed', code: BUDGET_EXCEEDED, message: refusal.message } : null
  }
}

/** The outcome of an execution whose run another process ended or took over: nothing more was written. */
const lost = (error: RunLostError): RunOutcome => ({ status: 'failed', error: { code: 'interrupted', message: error.message }, output: '' })

/**
 * Hands a run this process shuts down under over to the others: its events and checkpoint stored,
 * its heartbeat set long past, so the next sweep of any process takes it over at once
 * (src/runs/run-manager.ts). Answers false when that could not be stored (it then ends `failed`).
 */
async function handOver(deps: ExecutorDeps, plan: RunPlan, log: RunLog): Promise<boolean> {
  try {
    await log.drain()
    const rows = await retryOnConnectionLoss(() =>
      deps.orm.em
        .fork()
        .execute(
          `update runs set heartbeat_at = to_timestamp(0), updated_at = now() where id = ? and attempts = ? and status = 'running' returning id`,
          [plan.run.id, plan.run.attempts],
        ),
    )
    return rows.length > 0
  } catch (error) {
    deps.log.warn({ err: error, run: plan.run.uuid }, 'run not handed over')
    return false
  }
}

/** What the model has answered so far: its finished steps, the step under way and when its first text came. */
interface Answer {
  steps: Step[]
  step: Step
  firstEventMs: number | null
  /** The warnings logged while it streamed. */
  warnings: TRunWarning[]
  /** The calls the model asked for that wait for a person. */
  approvals: PendingCall[]
}

/**
 * Streams the model's answer into `answer` and the run's event log. Throws what the stream
 * throws, or the abort reason when `signal` ended it; what came before stays in `answer`, whose
 * `firstEventMs` the failed run still records.
 */
async function streamAnswer(
  call: ModelCall,
  config: ExecutorDeps['config'],
  signal: AbortSignal,
  log: RunLog,
  started: number,
  answer: Answer,
  stopAfterStep: (steps: StepUsage[]) => Promise<boolean>,
): Promise<void> {
  const calls = new CallLedger(log)
  for await (const part of modelParts(call, { config, signal, beforeExecute: (toolCallId) => calls.stored(toolCallId), stopAfterStep })) {
    switch (part.type) {
      case 'text':
        if (part.text.length === 0) break
        answer.firstEventMs ??= Math.round(performance.now() - started)
        answer.step.text += part.text
        log.append('text.delta', { text: part.text })
        break
      case 'tool-call': {
        const called: Part = { type: 'tool-call', tool_call_id: part.toolCallId, tool_name: part.toolName, input: part.input }
        // A provider's own tool (its web search) is only logged: sent back to the model in a later
        // run as an ordinary call, it would name a function the provider does not know.
        if (part.providerExecuted) log.append('tool.call', { ...called, provider_executed: true })
        else {
          answer.step.calls.push(called)
          calls.logged(part.toolCallId, log.append('tool.call', called))
        }
        break
      }
      case 'tool-result':
      case 'tool-error': {
        // A tool's failure is stored as its result, marked `is_error`, for the model's next step.
        const failed = part.type === 'tool-error'
        const result: Part = {
          type: 'tool-result',
          tool_call_id: part.toolCallId,
          tool_name: part.toolName,
          output: failed ? { error: errorText(part.error) } : part.output,
          is_error: failed,
        }
        if (part.providerExecuted) log.append('tool.result', { ...result, provider_executed: true })
        else {
          answer.step.results.push(result)
          // A workflow tool's event names its execution, so a client can open it.
          log.append('tool.result', part.link ? { ...result, ...part.link } : result)
        }
        break
      }
      case 'warning':
        answer.warnings.push(part.warning)
        log.append('run.warning', part.warning)
        break
      case 'approval-request':
        answer.approvals.push({ uuid: uuidv7(), toolCallId: part.toolCallId, toolName: part.toolName, input: part.input, tool: part.tool })
        break
      case 'step-end': {
        answer.step.promptTokens = part.inputTokens
        answer.step.completionTokens = part.outputTokens
        answer.steps.push(answer.step)
        // A step that called tools is followed by another: a takeover goes on after it.
        const toolStep = answer.step.calls.length > 0 || answer.step.results.length > 0
        answer.step = emptyStep()
        if (toolStep) log.checkpoint({ seq: log.seq, steps: answer.steps } satisfies Checkpoint)
        break
      }
    }
  }
  if (signal.aborted) throw signal.reason
}

/**
 * Tool calls logged before their tool runs: the SDK starts a tool as it hands the call's part on,
 * so the tool waits ({@link stored}) until the executor has logged the call ({@link logged}) and
 * the log has stored it. A process that takes the run over then knows every call that may have
 * run (src/runs/run-driver.ts).
 */
class CallLedger {
  readonly #seqs = new Map<string, PromiseWithResolvers<number>>()
  constructor(private readonly log: RunLog) {}

  #entry(toolCallId: string): PromiseWithResolvers<number> {
    let entry = this.#seqs.get(toolCallId)
    if (!entry) {
      entry = Promise.withResolvers<number>()
      this.#seqs.set(toolCallId, entry)
    }
    return entry
  }

  /** Call `toolCallId` was logged as event `seq`. */
  logged(toolCallId: string, seq: number): void {
    this.#entry(toolCallId).resolve(seq)
  }

  /** Resolves once call `toolCallId`'s event is stored. @throws the log's error when it cannot be. */
  async stored(toolCallId: string): Promise<void> {
    await this.log.stored(await this.#entry(toolCallId).promise)
  }
}

/**
 * Ends a stored run: settles its answer, or its failure (`streamFailure`, or an answer that could
 * not be stored), then waits for its events to be written.
 */
async function conclude(
  deps: ExecutorDeps,
  plan: RunPlan,
  log: RunLog,
  streamFailure: Failure | null,
  answer: Answer,
  started: number,
): Promise<RunOutcome> {
  let failure = streamFailure
  let outcome: RunOutcome | null = null
  if (!failure) {
    try {
      outcome = await succeed(deps, plan, log, answer, started)
    } catch (error) {
      if (error instanceof RunLostError) return lost(error)
      // The answer came but could not be stored (the database stayed out of reach past the
      // retries): our fault, not the upstream's, and the caller may try again (503).
      deps.log.error({ err: error, run: plan.run.uuid }, 'run answer not stored')
      failure = { status: 'failed', code: 'not_stored', message: 'The answer could not be stored' }
    }
  }
  if (failure) {
    try {
      outcome = await fail(deps, plan, log, failure, started, answer.firstEventMs, answer.steps)
    } catch (error) {
      if (error instanceof RunLostError) return lost(error)
      // Not even the failure could be stored: the run stays `running` without a heartbeat once
      // this execution ends, and a sweep takes it over (src/runs/run-manager.ts).
      deps.log.error({ err: error, run: plan.run.uuid }, 'run failure not stored')
      outcome = { status: 'failed', error: { code: 'not_stored', message: 'The answer could not be stored' }, output: '' }
    }
  }
  await log.drain().catch((error: unknown) => deps.log.error({ err: error, run: plan.run.uuid }, 'run events not stored'))
  return outcome ?? { status: 'failed', error: { code: 'not_stored', message: 'The run ended without an outcome' }, output: '' }
}

/** How a run that did not succeed ends. */
type Failure = { status: 'failed' | 'canceled'; code: string; message: string }

const emptyStep = (): Step => ({ text: '', calls: [], results: [], promptTokens: 0, completionTokens: 0 })

/**
 * Stores the answer: the run `succeeded`, or `awaiting_approval` with its approvals when the model
 * asked for calls a person must approve (module comment).
 */
async function succeed(deps: ExecutorDeps, plan: RunPlan, log: RunLog, answer: Answer, started: number): Promise<RunOutcome> {
  const { steps, firstEventMs, approvals } = answer
  const waits = approvals.length > 0
  const latencyMs = Math.round(performance.now() - started)
  const promptTokens = steps.reduce((sum, s) => sum + s.promptTokens, 0)
  const completionTokens = steps.reduce((sum, s) => sum + s.completionTokens, 0)
  const cost = costOf(plan.model.llm, { promptTokens, completionTokens })
  const output = storableText(steps.map((s) => s.text).join(''))
  // The messages it stores in the thread: per step the assistant's text and tool calls, then the tool results.
  const stored: StoredMessage[] = []
  if (plan.threadId !== null) {
    for (const [index, step] of steps.entries()) {
      const parts: Part[] = [...(step.text ? [{ type: 'text' as const, text: step.text }] : []), ...step.calls]
      if (parts.length > 0) {
        stored.push({
          uuid: uuidv7(),
          role: 'assistant',
          content: storableText(step.text),
          parts,
          promptTokens: step.promptTokens,
          completionTokens: step.completionTokens,
          latencyMs: index === steps.length - 1 ? latencyMs : null,
          cost: costOf(plan.model.llm, step),
          // The final answer cites the knowledge the run was given.
          citations: index === steps.length - 1 && plan.knowledge ? plan.knowledge.citations : null,
        })
      }
      if (step.results.length > 0) {
        stored.push({ uuid: uuidv7(), role: 'tool', content: '', parts: step.results, promptTokens: null, completionTokens: null, latencyMs: null, cost: null, citations: null })
      }
    }
  }
  // The deltas not stored yet go into the settle statement, in order, ahead of the final events.
  const queued = await log.takeQueued()
  const now = new Date()
  const expiresAt = new Date(now.getTime() + deps.config.llm.approvalTtlSeconds * 1000)
  const asked = approvals.map((call) => approvalOf(plan, call, now, expiresAt))
  const messageEvents = stored.map((m) => ({ type: 'message' as const, data: { message_uuid: m.uuid, role: m.role, content: m.content, parts: m.parts } }))
  const whole = wholeRun(plan.before, { output, promptTokens, completionTokens, cost })
  const finals = log.reserve([
    ...messageEvents,
    ...(waits
      ? asked.map((approval) => ({ type: 'run.approval_requested' as const, data: { approval } }))
      : [{ type: 'run.succeeded' as const, data: { run_uuid: plan.run.uuid, ...whole } }]),
  ])
  const events = [...queued, ...finals]
  const status = waits ? 'awaiting_approval' : 'succeeded'
  const askedRows = asked.map((approval, index) => ({ ...approval, input_schema: approvals[index].tool.inputSchema }))
  let settled: Settled
  try {
    settled = await settle(deps.orm, plan, stored, events, askedRows, { status, output, promptTokens, completionTokens, cost, latencyMs, firstEventMs })
  } catch (error) {
    log.release(finals)
    log.requeue(queued)
    throw error
  }
  if (settled.kind === 'lost') throw new RunLostError('Another process took the run over')
  if (settled.kind === 'ended') {
    // Canceled meanwhile (by a process that could not reach this one): the cancel wins.
    log.release(finals)
    log.requeue(queued)
    log.append('run.canceled', { run_uuid: plan.run.uuid })
    return { status: 'canceled', error: { code: 'canceled', message: 'The run was canceled' }, output }
  }
  log.publish(events)
  // Stored by a first try whose answer was lost: the caller reads the run back.
  if (settled.kind === 'stored-before') return { status, error: null, output: whole.output, settledRows: [], ...(waits ? { approvals: asked } : {}) }
  const settledRows = settled.rows
  const queuedNext = settledRows[0].queuedNext === true
  return { status, error: null, output: whole.output, settledRows, queuedNext, ...(waits ? { approvals: asked } : {}) }
}

/**
 * The run's whole output and usage (wire names): what it did before it waited (a resumed run's
 * `before`) plus this execution's, as `run.succeeded` carries them.
 */
function wholeRun(before: RunPlan['before'], now: { output: string; promptTokens: number; completionTokens: number; cost: number }) {
  const promptTokens = (before?.promptTokens ?? 0) + now.promptTokens
  const completionTokens = (before?.completionTokens ?? 0) + now.completionTokens
  return {
    output: (before?.output ?? '') + now.output,
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
      cost: Number(((before?.cost ?? 0) + now.cost).toFixed(6)),
    },
  }
}

/** The Approval shape (src/runs/run.schema.ts) of a call the run now waits on, as `run.approval_requested` carries it. */
function approvalOf(plan: RunPlan, call: PendingCall, now: Date, expiresAt: Date): TApproval {
  return {
    uuid: call.uuid,
    run_uuid: plan.run.uuid,
    thread_uuid: plan.threadUuid,
    agent_uuid: plan.agent?.uuid ?? null,
    tool_call_id: call.toolCallId,
    tool_kind: call.tool.kind,
    tool_name: call.toolName,
    tool_uuid: call.tool.toolUuid,
    workflow_uuid: call.tool.workflowUuid,
    arguments: call.input,
    status: 'pending',
    decided_by: null,
    decided_at: null,
    reason: null,
    expires_at: expiresAt.toISOString(),
    created_at: now.toISOString(),
    updated_at: now.toISOString(),
  }
}

/** A message a succeeded run stores in its thread. */
interface StoredMessage {
  uuid: string
  role: 'assistant' | 'tool'
  content: string
  parts: Part[]
  promptTokens: number | null
  completionTokens: number | null
  latencyMs: number | null
  cost: number | null
  /** The knowledge chunks the answer was given (`messages.citations`); null for none. */
  citations: unknown[] | null
}

/**
 * The settle statement of {@link settle}, one text for every run whatever its number of events,
 * messages and approvals (they come as JSON arrays, opened by `jsonb_to_recordset`), so it runs
 * prepared (src/platform/db.ts, `executePrepared`): PostgreSQL parses and plans it once per pooled
 * connection, where a statement with a VALUES row per event was a new text to parse and plan at
 * the end of every run (about 0.5 ms of server time, more than running it). With no message
 * (a prompt run, or an answer without text or calls), `stored` inserts nothing, `counted` adds 0
 * and the answer is one row whose `m.` columns are null. Output, usage and latency are added to
 * what the run holds (nothing for a run that never waited); `finished_at` is set once it succeeds.
 */
const SETTLE_SQL = `with settled as (
     update runs set status = ?::text, output = coalesce(output, '') || ?, prompt_tokens = prompt_tokens + ?, completion_tokens = completion_tokens + ?,
       total_tokens = total_tokens + ?, cost = cost + ?, finished_at = case when ?::text = 'succeeded' then now() end,
       latency_ms = coalesce(latency_ms, 0) + ?, first_event_ms = coalesce(first_event_ms, ?), events_count = ?, checkpoint = null, updated_at = now()
     where id = ? and status = 'running' and attempts = ? returning *),
   logged as (
     insert into run_events (run_id, seq, type, data, created_at)
     select settled.id, e.seq, e.type, e.data, e.created_at
     from settled cross join jsonb_to_recordset(?::jsonb) as e(seq int, type text, data jsonb, created_at timestamptz)),
   stored as (
     insert into messages (uuid, thread_id, run_id, user_id, workspace_id, role, content, parts, model, agent_version,
       prompt_tokens, completion_tokens, total_tokens, latency_ms, cost, citations, created_at, updated_at)
     select v.uuid, ?::bigint, settled.id, null, ?::bigint, v.role, v.content, v.parts, ?, case when v.role = 'assistant' then settled.agent_version end,
       v.pt, v.ct, v.tt, v.lat, v.cost, v.citations, clock_timestamp(), clock_timestamp()
     from settled cross join jsonb_to_recordset(?::jsonb)
       as v(uuid uuid, role text, content text, parts jsonb, pt int, ct int, tt int, lat int, cost numeric, citations jsonb, ord int)
     order by v.ord
     returning *),
   asked as (
     insert into run_approvals (uuid, run_id, tool_call_id, tool_kind, tool_name, tool_id, workflow_id, arguments, input_schema, status, expires_at, created_at, updated_at)
     select a.uuid, settled.id, a.tool_call_id, a.tool_kind, a.tool_name, (select t.id from tools t where t.uuid = a.tool_uuid),
       (select w.id from workflows w where w.uuid = a.workflow_uuid), a.arguments, a.input_schema, 'pending', a.expires_at, a.created_at, a.created_at
     from settled cross join jsonb_to_recordset(?::jsonb)
       as a(uuid uuid, tool_call_id text, tool_kind text, tool_name text, tool_uuid uuid, workflow_uuid uuid, arguments jsonb, input_schema jsonb, expires_at timestamptz, created_at timestamptz)),
   counted as (update threads set messages_count = messages_count + ?::int, updated_at = now() where id = ?::bigint and ?::int > 0 and exists (select 1 from settled))
   select ${selectColumns('settled', '', RUN_FIELDS)}, ${messageColumns('stored', '?::uuid', 'settled.uuid', 'm.')},
     exists (select 1 from runs q where q.thread_id = settled.thread_id and q.status = 'queued') as "queuedNext"
   from settled left join stored on true order by stored.id`

/**
 * What {@link settle} did: `stored` (with the {@link RunOutcome} `settledRows`), `stored-before` (a
 * first try committed but its answer was lost; the rows are not at hand), `ended` (the run was no
 * longer `running`, canceled meanwhile) or `lost` (another process took it over). Nothing is
 * written but in the first two.
 */
type Settled = { kind: 'stored'; rows: Record<string, unknown>[] } | { kind: 'stored-before' } | { kind: 'ended' } | { kind: 'lost' }

/**
 * Settles a run in one statement (one round trip, atomic; {@link SETTLE_SQL}): its status
 * (`succeeded`, or `awaiting_approval` with the approvals `asked`: Approval shapes plus their `input_schema`), output, usage and
 * times, its messages (in order), the thread's `messages_count` and `events` (the deltas not
 * stored yet, then the final events), under the executor's claim. A lost connection runs it again
 * (src/platform/db.ts, `writeOnce`), once the run's row shows the first try did not commit.
 * @throws the database's error once the retries are spent (nothing stored).
 */
async function settle(
  orm: Orm,
  plan: RunPlan,
  messages: StoredMessage[],
  events: RunEventRecord[],
  asked: Record<string, unknown>[],
  o: {
    status: string
    output: string
    promptTokens: number
    completionTokens: number
    cost: number
    latencyMs: number
    firstEventMs: number | null
  },
): Promise<Settled> {
  // A run without a thread stores no message (succeed() builds none then).
  const stored = plan.threadId === null ? [] : messages
  const rows = stored.map((m, index) => ({
    uuid: m.uuid,
    role: m.role,
    content: m.content,
    parts: m.parts,
    pt: m.promptTokens,
    ct: m.completionTokens,
    tt: m.promptTokens === null || m.completionTokens === null ? null : m.promptTokens + m.completionTokens,
    lat: m.latencyMs,
    cost: m.cost,
    citations: m.citations,
    ord: index,
  }))
  const lastSeq = events.at(-1)?.seq ?? 0
  // In the order the placeholders appear: settled, logged, stored (thread, workspace, model, rows), asked, counted, the answer's thread.
  // prettier-ignore
  const params: unknown[] = [
    o.status, o.output, o.promptTokens, o.completionTokens, o.promptTokens + o.completionTokens, o.cost, o.status, o.latencyMs, o.firstEventMs, lastSeq, plan.run.id, plan.run.attempts,
    eventsJson(events),
    plan.threadId, plan.workspaceId, plan.model.llm.slug, storableJson(rows),
    storableJson(asked),
    stored.length, plan.threadId, stored.length,
    plan.threadUuid,
  ]
  const write = async (): Promise<Settled> => {
    const answer = await executePrepared(orm, () => orm.em.fork(), 'run_settle', SETTLE_SQL, params)
    if (answer.length > 0) return { kind: 'stored', rows: answer }
    return (await runState(orm, plan)).held ? { kind: 'ended' } : { kind: 'lost' }
  }
  // The run's row says whether a first try committed: our status and our last event, under our claim.
  const storedBefore = async (): Promise<Settled | undefined> => {
    const state = await runState(orm, plan)
    return state.held && state.status === o.status && state.eventsCount === lastSeq ? { kind: 'stored-before' } : undefined
  }
  return writeOnce(write, storedBefore)
}

/** Run `plan.run`'s status and `events_count`, and whether its executor still holds it (`held`: its claim is still the run's). */
async function runState(orm: Orm, plan: RunPlan): Promise<{ held: boolean; status: string; eventsCount: number }> {
  const [row] = await orm.em
    .fork()
    .execute<{ status: string; events_count: number; attempts: number }[]>('select status, events_count, attempts from runs where id = ?', [
      plan.run.id,
    ])
  return { held: Number(row?.attempts) === plan.run.attempts, status: String(row?.status), eventsCount: Number(row?.events_count) }
}

async function fail(
  deps: ExecutorDeps,
  plan: RunPlan,
  log: RunLog,
  failure: Failure,
  started: number,
  firstEventMs: number | null,
  steps: StepUsage[],
): Promise<RunOutcome> {
  const ours = { code: failure.code, message: failure.message }
  // The model steps it completed were spent: their usage is stored with the failure (budgets count it).
  const used = totalUsage(steps)
  const cost = costOf(plan.model.llm, used)
  // A run another request ended first (canceled, or superseded by a newer run of its thread) keeps
  // that request's error, and its final event says so. Safe to run again after a lost connection:
  // a second run finds the run ended with our own error and changes nothing.
  const latencyMs = Math.round(performance.now() - started)
  const [row] = await retryOnConnectionLoss(() =>
    deps.orm.em.fork().execute<{ applied: boolean; held: boolean; error: unknown }[]>(
      `with ended as (
         update runs set status = ?, error = ?::jsonb, finished_at = now(), latency_ms = coalesce(latency_ms, 0) + ?, first_event_ms = coalesce(first_event_ms, ?),
           prompt_tokens = prompt_tokens + ?, completion_tokens = completion_tokens + ?, total_tokens = total_tokens + ?, cost = cost + ?,
           checkpoint = null, updated_at = now()
         where id = ? and status in ('queued', 'running') and attempts = ? returning id)
       select exists (select 1 from ended) as applied, exists (select 1 from runs where id = ? and attempts = ?) as held,
         (select error from runs where id = ? and status = 'canceled') as error`,
      // prettier-ignore
      [failure.status, JSON.stringify(ours), latencyMs, firstEventMs, used.promptTokens, used.completionTokens, used.promptTokens + used.completionTokens, cost,
        plan.run.id, plan.run.attempts, plan.run.id, plan.run.attempts, plan.run.id],
    ),
  )
  if (!row?.held) throw new RunLostError('Another process took the run over')
  const stored = row?.applied ? null : jsonValueOf(row?.error)
  const error =
    isRecord(stored) && typeof stored.code === 'string' && typeof stored.message === 'string'
      ? { code: stored.code, message: stored.message }
      : ours
  const status = error === ours ? failure.status : 'canceled'
  if (status === 'failed') log.append('error', error)
  log.append(status === 'failed' ? 'run.failed' : 'run.canceled', { run_uuid: plan.run.uuid, error })
  return { status, error, output: '' }
}

/** Maps what the run threw to its final status and a message fit for the caller (no secrets, no stack). */
function classify(error: unknown, cancel: AbortSignal, timeout: AbortSignal): Failure {
  if (cancel.aborted) {
    const reason: unknown = cancel.reason
    if (reason instanceof RunInterruptedError) return { status: 'failed', code: 'interrupted', message: reason.message }
    return { status: 'canceled', code: 'canceled', message: 'The run was canceled' }
  }
  if (timeout.aborted) return { status: 'failed', code: 'upstream_timeout', message: 'The model did not answer in time' }
  // Nothing of the driver's own text reaches the run's record.
  if (databaseUnavailable(error))
    return { status: 'failed', code: 'not_stored', message: 'The database was unavailable while the run executed' }
  if (APICallError.isInstance(error)) {
    const status = error.statusCode
    return {
      status: 'failed',
      code: 'upstream_error',
      message: status
        ? `The model provider answered ${status}${status === 429 ? ' (rate limited)' : ''}`
        : `The model provider could not be reached`,
    }
  }
  return { status: 'failed', code: 'upstream_error', message: `The model provider failed: ${errorText(error)}` }
}

/** Thrown into a run's cancel signal when the process shuts down under it. */
export class RunInterruptedError extends Error {
  override name = 'RunInterruptedError'
}

/** A short, single-line description of an error for a run's record. */
function errorText(error: unknown): string {
  if (databaseUnavailable(error)) return 'The database was unavailable'
  const text = error instanceof Error ? `${error.name === 'Error' ? '' : `${error.name}: `}${error.message}` : String(error)
  return text.replace(/\s+/g, ' ').slice(0, 300)
}
