/**
 * Taking over runs whose process died (docs/api/runs.md, "Interrupted runs"): the runs service's
 * side of the run manager's sweep (src/runs/run-manager.ts), bound through its `RunDriver`.
 *
 * One statement claims up to a batch of `running` runs whose heartbeat is stale (`for update skip
 * locked`, so two sweeping processes split them) and counts the claim in `attempts`: from then on
 * only this process's writes of the run land (src/runs/run-log.ts). The run then goes on here as
 * the same run, from what was stored before its process died, which is its checkpoint:
 *
 * - the thread's history (an agent run's user message, and what it stored before it last waited);
 * - `runs.checkpoint`, the steps it completed since (stored after each step that called tools);
 * - the events logged after that checkpoint. A step whose tool calls were logged is kept: a call's
 *   event is stored before its tool runs (src/runs/run-executor.ts), so every call that may have
 *   run is known. A call with a stored result keeps it; one without is made again when its tool is
 *   `idempotent` (an HTTP tool gets the same `Idempotency-Key` as the first time), else its result
 *   to the model says it may or may not have happened. A step that logged no call (its text was
 *   streaming) is asked again: `run.resumed` names the last event kept (`discarded_after`), and the
 *   text logged after it is not part of the answer.
 *
 * A run that can no longer go on (its agent or prompt was deleted, its user left the workspace)
 * ends `failed` as a run that waited does (./run-driver.ts).
 */
import type { ModelMessage } from 'ai'
import { actingContext } from '../access/acting-context.ts'
import { isRecord, jsonValueOf } from '../access/wire.ts'
import type { ServiceDeps } from '../context.ts'
import { requireResourceWith } from '../access/resource-access.ts'
import { resolveAgentModel } from '../models/index.ts'
import { readEvents } from './run-log.ts'
import { offeredTools } from './run-tools.ts'
import {
  claimedPlan,
  storedBefore,
  type Checkpoint,
  type ClaimedRunRow,
  type DecidedCall,
  type ModelCall,
  type Part,
  type RunPlan,
  type Step,
  type TakeoverRequest,
} from './run-types.ts'
import { agentCall, promptCall, refusedByBudget, requireAgent, toModelMessages } from './runs.service.ts'
import type { RunEventRecord } from './run.schema.ts'

/** What the takeover claim answers about each run it claimed. */
interface TakenRow extends ClaimedRunRow {
  prompt_id: number | null
  model: string | null
  /** A prompt run's input values (JSON). */
  input: unknown
  checkpoint: unknown
  /** The last `run.started` or `run.resumed` event: the events of the execution that died come after it. */
  began_seq: number | null
}

/**
 * The takeover claim (module comment). Parameters: the stale age in seconds, the ids to leave
 * (this process's own runs), the most attempts a run may have had, the batch size.
 */
const TAKEOVER_SQL = `with stale as (
     select id from runs
     where status = 'running' and coalesce(heartbeat_at, updated_at) < clock_timestamp() - make_interval(secs => ?)
       and not (id = any(string_to_array(?, ',')::bigint[])) and attempts < ?
     order by heartbeat_at nulls first limit ? for update skip locked),
   claimed as (
     update runs r set attempts = r.attempts + 1, heartbeat_at = clock_timestamp(), updated_at = now()
     from stale where r.id = stale.id returning r.*)
   select c.id::float8 as id, c.uuid, c.kind, c.user_id::float8 as user_id, c.workspace_id::float8 as workspace_id,
     c.agent_id::float8 as agent_id, c.agent_version, c.access_token_id::float8 as access_token_id, c.prompt_id::float8 as prompt_id, c.thread_id::float8 as thread_id, th.uuid as thread_uuid,
     c.model, c.input, coalesce(c.input #>> '{}', '') as input_text, c.output, c.prompt_tokens, c.completion_tokens, c.cost, c.events_count, c.attempts, c.checkpoint,
     (select max(e.seq) from run_events e where e.run_id = c.id and e.type in ('run.started', 'run.resumed')) as began_seq
   from claimed c left join threads th on th.id = c.thread_id`

/**
 * Claims runs whose process died and starts each here from its checkpoint (module comment);
 * answers how many it claimed. A run that cannot go on is ended by `cannotGoOn`.
 * @throws the claim statement's error (nothing claimed).
 */
export async function takeOverRuns(
  deps: ServiceDeps,
  request: TakeoverRequest,
  cannotGoOn: (row: { id: number; uuid: string; thread_id: number | null }, cause: unknown) => Promise<void>,
): Promise<number> {
  const rows = await deps.orm.em
    .fork()
    .execute<TakenRow[]>(TAKEOVER_SQL, [request.staleSeconds, request.own.join(','), request.maxAttempts, request.limit])
  await Promise.all(
    rows.map((row) =>
      goOn(deps, row).catch((error: unknown) =>
        cannotGoOn({ id: Number(row.id), uuid: row.uuid, thread_id: row.thread_id === null ? null : Number(row.thread_id) }, error),
      ),
    ),
  )
  return rows.length
}

/** Plans a taken-over run as its user, from its checkpoint, and starts it here. */
async function goOn(deps: ServiceDeps, row: TakenRow): Promise<void> {
  const runId = Number(row.id)
  const storedSeq = Number(row.events_count)
  const checkpoint = checkpointOf(row.checkpoint)
  const after = Math.max(checkpoint?.seq ?? 0, Number(row.began_seq ?? 0))
  const logged = stepsOf(await eventsAfter(deps, runId, after))
  const steps = [...(checkpoint?.steps ?? []), ...logged.steps]
  const ctx = await actingContext(deps, Number(row.user_id), Number(row.workspace_id))
  const threadId = row.thread_id === null ? null : Number(row.thread_id)
  const open = openCalls(steps)
  const approvals = await approvalsOf(deps, runId)
  let call: ModelCall
  let agent: RunPlan['agent'] = null
  // An agent run is asked here, before its knowledge is retrieved; a prompt run (no retrieval) by its executor only.
  let checkBudget = true
  if (row.kind === 'prompt') {
    if (row.prompt_id === null) throw new Error('The run’s prompt was deleted')
    await requireResourceWith(ctx, 'prompts', 'Prompt', { id: Number(row.prompt_id) }, 'read', '')
    call = await promptCall(ctx, Number(row.prompt_id), jsonValueOf(row.input), row.model)
  } else {
    if (row.agent_id === null) throw new Error('The run’s agent was deleted')
    const found = await requireAgent(ctx, { id: Number(row.agent_id) }, row.agent_version)
    const model = await resolveAgentModel(ctx, found.metadata, found)
    const offered = offeredTools(ctx, found, model, 0)
    // Calls answered in the steps, or answered here, are not closed as never run in the history.
    const answeredLater = new Set([...steps.flatMap((step) => step.results.map(callIdOf)), ...approvals.keys()])
    checkBudget = await refusedByBudget(ctx, row)
    call = await agentCall(ctx, found, threadId, row.input_text, model, offered, { inHistory: true, answeredLater, skipKnowledge: checkBudget })
    agent = { id: found.id, uuid: found.uuid }
  }
  const history = call.messages
  const unanswered = [...historyCalls(history, steps, approvals), ...open]
  call.messages = [...history, ...toModelMessages(stepMessages(steps))]
  call.decided = unanswered.map((pending) => decide(call, pending, approvals.get(pending.toolCallId)))
  call.warnings = []
  call.runUuid = row.uuid
  const plan = claimedPlan(call, row, agent, storedBefore(row))
  deps.runs.start(call, Promise.resolve(plan), {
    storedSeq,
    checkBudget,
    recovered: { runUuid: row.uuid, steps, discardedAfter: logged.keptThrough ?? after },
  })
}

/** Every event of run `runId` after `afterSeq`. */
async function eventsAfter(deps: ServiceDeps, runId: number, afterSeq: number): Promise<RunEventRecord[]> {
  const events: RunEventRecord[] = []
  for (let last = afterSeq; ;) {
    const batch = await readEvents(deps.orm.em.fork(), runId, last)
    if (batch.length === 0) return events
    events.push(...batch)
    last = batch[batch.length - 1].seq
  }
}

/** A stored checkpoint (src/runs/run-executor.ts wrote it), or null. */
function checkpointOf(value: unknown): Checkpoint | null {
  const parsed = jsonValueOf(value)
  return isRecord(parsed) && typeof parsed.seq === 'number' && Array.isArray(parsed.steps) ? (parsed as unknown as Checkpoint) : null
}

/**
 * The steps an execution logged after its checkpoint (module comment): each complete step, and the
 * last one if it logged a call; `keptThrough` is the last event of those, or null when none is kept.
 * Token counts of these steps were not logged: they count 0.
 */
export function stepsOf(events: RunEventRecord[]): { steps: Step[]; keptThrough: number | null } {
  const steps: Step[] = []
  let step: Step = { text: '', calls: [], results: [], promptTokens: 0, completionTokens: 0 }
  let stepEnd: number | null = null
  let keptThrough: number | null = null
  const answered = (s: Step) => s.results.length > 0 && s.calls.every((c) => s.results.some((r) => callIdOf(r) === callIdOf(c)))
  const close = () => {
    if (step.calls.length > 0 || step.results.length > 0) {
      steps.push(step)
      keptThrough = stepEnd
    }
    step = { text: '', calls: [], results: [], promptTokens: 0, completionTokens: 0 }
  }
  for (const event of events) {
    const data = isRecord(event.data) ? event.data : {}
    if (data.provider_executed === true) continue
    if (event.type === 'text.delta' || event.type === 'tool.call') {
      // The step before ended once all its calls were answered: this starts the next one.
      if (answered(step)) close()
    }
    if (event.type === 'text.delta' && typeof data.text === 'string') step.text += data.text
    else if (event.type === 'tool.call')
      step.calls.push({
        type: 'tool-call',
        tool_call_id: String(data.tool_call_id),
        tool_name: String(data.tool_name),
        input: data.input ?? {},
      })
    else if (event.type === 'tool.result') {
      step.results.push({
        type: 'tool-result',
        tool_call_id: String(data.tool_call_id),
        tool_name: String(data.tool_name),
        output: data.output ?? null,
        is_error: data.is_error === true,
      })
    } else continue
    stepEnd = event.seq
  }
  close()
  return { steps, keptThrough }
}

const callIdOf = (part: Part): string => (part.type === 'text' ? '' : part.tool_call_id)

/** A call of the run that has no result yet: to answer before the model is asked again. */
interface OpenCall {
  toolCallId: string
  toolName: string
  input: Record<string, unknown>
}

/** The calls of `steps` without a result in them. */
function openCalls(steps: Step[]): OpenCall[] {
  const answered = new Set(steps.flatMap((step) => step.results.map(callIdOf)))
  return steps.flatMap((step) =>
    step.calls.flatMap((part) =>
      part.type === 'tool-call' && !answered.has(part.tool_call_id)
        ? [{ toolCallId: part.tool_call_id, toolName: part.tool_name, input: isRecord(part.input) ? part.input : {} }]
        : [],
    ),
  )
}

/**
 * Calls of the history that waited for a person and were decided (`approvals`) but whose result
 * is neither in the history nor in `steps`: the run died after it resumed, before it stored them.
 */
function historyCalls(history: ModelMessage[], steps: Step[], approvals: Map<string, DecidedApproval>): OpenCall[] {
  const answered = new Set<string>(steps.flatMap((step) => step.results.map(callIdOf)))
  for (const message of history) {
    if (message.role !== 'tool') continue
    for (const part of message.content) if (part.type === 'tool-result') answered.add(part.toolCallId)
  }
  const open: OpenCall[] = []
  for (const [toolCallId, approval] of approvals) {
    if (!answered.has(toolCallId)) open.push({ toolCallId, toolName: approval.toolName, input: approval.arguments })
  }
  return open
}

/** A decided approval of the run (its last resume used it). */
interface DecidedApproval {
  toolName: string
  arguments: Record<string, unknown>
  approved: boolean
  reason: string | null
}

/** The run's approvals a resume used, by tool call id. */
async function approvalsOf(deps: ServiceDeps, runId: number): Promise<Map<string, DecidedApproval>> {
  const rows = await deps.orm.em
    .fork()
    .execute<{ tool_call_id: string; tool_name: string; arguments: unknown; status: string; reason: string | null }[]>(
      `select tool_call_id, tool_name, arguments, status, reason from run_approvals where run_id = ? and resumed_at is not null`,
      [runId],
    )
  const arguments_ = (value: unknown) => {
    const parsed = jsonValueOf(value)
    return isRecord(parsed) ? parsed : {}
  }
  return new Map(
    rows.map((row) => [
      row.tool_call_id,
      {
        toolName: row.tool_name,
        arguments: arguments_(row.arguments),
        approved: row.status === 'approved',
        reason: row.status === 'expired' ? 'expired' : row.reason,
      },
    ]),
  )
}

/**
 * How an unanswered call is answered before the model is asked again: a call a person refused is
 * refused again (it never ran); one that may have run is made again when its tool is idempotent,
 * else answered as lost (module comment).
 */
function decide(call: ModelCall, open: OpenCall, approval: DecidedApproval | undefined): DecidedCall {
  const base = { toolCallId: open.toolCallId, toolName: open.toolName, input: open.input, reason: approval?.reason ?? null }
  if (approval && !approval.approved) return { ...base, approved: false }
  return idempotent(call, open.toolName) ? { ...base, approved: true } : { ...base, approved: false, lost: true }
}

/** Whether the tool the model calls `toolName` is marked idempotent (an HTTP tool, or an MCP server's tool). */
function idempotent(call: ModelCall, toolName: string): boolean {
  if (call.tools.some((tool) => tool.name === toolName && tool.idempotent)) return true
  return (call.mcpServers ?? []).some((server) => server.idempotent && toolName.startsWith(`${server.prefix}__`))
}

/** Steps as the stored messages they become (assistant text and calls, then tool results), for {@link toModelMessages}. */
function stepMessages(steps: Step[]): { role: string; content: string; parts: unknown }[] {
  return steps.flatMap((step) => {
    const parts = [...(step.text ? [{ type: 'text', text: step.text }] : []), ...step.calls]
    return [
      ...(parts.length > 0 ? [{ role: 'assistant', content: step.text, parts }] : []),
      ...(step.results.length > 0 ? [{ role: 'tool', content: '', parts: step.results }] : []),
    ]
  })
}
