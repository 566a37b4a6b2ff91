/**
 * The runs service's side of runs that waited (docs/api/runs.md, "Approvals", "Busy threads"):
 * what the run manager's jobs call (src/runs/run-manager.ts, `RunDriver`) to start a stored run
 * in this process.
 *
 * - **Resume**: one statement claims a run `awaiting_approval` with nothing pending (at most one
 *   process wins), marks its decided approvals as used, and logs `run.resumed`. The run then goes
 *   on as the user who started it: its agent, tools and thread history are read again (the
 *   history holds what it answered before it waited), the decided calls run first, and the model
 *   is asked again. Its event log, output and usage go on from where they stopped.
 * - **Dispatch**: one statement claims the oldest `queued` run of an idle thread (the thread's
 *   unique index on its active run refuses a second claimer), stores its user message and logs
 *   `run.started`; then it runs like any run.
 *
 * - **Take over** (./run-takeover.ts): a run whose process died goes on here from its checkpoint.
 *
 * A claimed run that can no longer go on (its agent was deleted, its user left the workspace, its
 * model has no credential any more) ends `failed` with the reason, and its thread's queue moves on.
 */
import { uuidv7 } from 'uuidv7'
import { databaseUnavailable } from '../platform/errors.ts'
import { actingContext } from '../access/acting-context.ts'
import { isRecord, jsonValueOf } from '../access/wire.ts'
import { resolveAgentModel } from '../models/index.ts'
import type { ServiceDeps } from '../context.ts'
import { extractMemories } from './memory-extraction.ts'
import { endRuns, isActiveRunConflict } from './run-ending.ts'
import type { RunDriver } from './run-manager.ts'
import { offeredTools } from './run-tools.ts'
import { claimedPlan, storedBefore, type ClaimedRunRow, type DecidedCall } from './run-types.ts'
import { agentCall, refusedByBudget, requireAgent } from './runs.service.ts'
import { takeOverRuns } from './run-takeover.ts'

/** What a claim statement answers about the run it claimed. */
interface ClaimedRow extends ClaimedRunRow {
  /** The event the claim logged (`run.resumed` or `run.started`). */
  event_type: string
  event_data: unknown
  event_at: string
  /** Resume only: the decided approvals it goes on with. */
  decided?: unknown
}

const CLAIMED_COLUMNS = `c.id::float8 as id, c.uuid, c.kind, c.user_id::float8 as user_id, c.workspace_id::float8 as workspace_id,
  c.agent_id::float8 as agent_id, c.agent_version, c.access_token_id::float8 as access_token_id, c.thread_id::float8 as thread_id, th.uuid as thread_uuid, coalesce(c.input #>> '{}', '') as input_text, c.output,
  c.prompt_tokens, c.completion_tokens, c.cost, c.events_count, c.attempts, l.type as event_type, l.data as event_data, l.created_at as event_at`

/** The resume claim (module comment). Parameters: the run id, twice. */
const RESUME_SQL = `with claimed as (
     update runs set status = 'running', heartbeat_at = clock_timestamp(), events_count = events_count + 1, updated_at = now()
     where id = ? and status = 'awaiting_approval'
       and not exists (select 1 from run_approvals p where p.run_id = runs.id and p.status = 'pending')
     returning *),
   decided as (
     update run_approvals set resumed_at = now()
     where run_id = ? and resumed_at is null and status <> 'pending' and exists (select 1 from claimed)
     returning id, tool_call_id, tool_name, arguments, status, reason),
   logged as (
     insert into run_events (run_id, seq, type, data, created_at)
     select id, events_count, 'run.resumed', jsonb_build_object('run_uuid', uuid), now() from claimed
     returning type, data, created_at)
   select ${CLAIMED_COLUMNS},
     (select coalesce(jsonb_agg(jsonb_build_object('tool_call_id', d.tool_call_id, 'tool_name', d.tool_name, 'arguments', d.arguments,
        'status', d.status, 'reason', d.reason) order by d.id), '[]'::jsonb) from decided d) as decided
   from claimed c left join threads th on th.id = c.thread_id cross join logged l`

/** The dispatch claim (module comment). Parameters: the thread id, the user message's uuid, the thread id. */
const DISPATCH_SQL = `with next as (
     select id from runs where thread_id = ? and status = 'queued' order by id limit 1 for update skip locked),
   claimed as (
     update runs r set status = 'running', started_at = now(), heartbeat_at = clock_timestamp(), events_count = 1, updated_at = now(),
       -- A run not pinned to a version runs the one current as it starts (docs/api/versions.md).
       agent_version = coalesce(r.agent_version, (select a.version from agents a where a.id = r.agent_id))
     from next where r.id = next.id
       and not exists (select 1 from runs a where a.thread_id = r.thread_id and a.status in ('running', 'awaiting_approval'))
     returning r.*),
   message as (
     insert into messages (uuid, thread_id, run_id, user_id, workspace_id, role, content, parts, created_at, updated_at)
     select ?, c.thread_id, c.id, c.user_id, c.workspace_id, 'user', c.input #>> '{}',
       jsonb_build_array(jsonb_build_object('type', 'text', 'text', c.input #>> '{}')), clock_timestamp(), clock_timestamp()
     from claimed c),
   counted as (update threads set messages_count = messages_count + 1, updated_at = now() where id = ? and exists (select 1 from claimed)),
   used as (update agents set usage_count = usage_count + 1, last_used_at = now() where id = (select agent_id from claimed)),
   logged as (
     insert into run_events (run_id, seq, type, data, created_at)
     select id, 1, 'run.started', jsonb_build_object('run_uuid', uuid, 'model', model), now() from claimed
     returning type, data, created_at)
   select ${CLAIMED_COLUMNS}
   from claimed c left join threads th on th.id = c.thread_id cross join logged l`

/** See the module comment; `deps` are the runtime's (src/app.ts binds the driver). */
export function createRunDriver(deps: ServiceDeps): RunDriver {
  return {
    async resume(runId) {
      const [row] = await deps.orm.em.fork().execute<ClaimedRow[]>(RESUME_SQL, [runId, runId])
      if (!row) return
      await start(deps, row, 'resume')
    },
    takeOver: (request) => takeOverRuns(deps, request, (row, cause) => cannotGoOn(deps, row, cause)),
    async dispatch(threadId) {
      let rows: ClaimedRow[]
      try {
        rows = await deps.orm.em.fork().execute<ClaimedRow[]>(DISPATCH_SQL, [threadId, uuidv7(), threadId])
      } catch (error) {
        // Another process claimed a run of the thread at the same moment: that one runs.
        if (isActiveRunConflict(error)) return
        throw error
      }
      if (rows[0]) await start(deps, rows[0], 'dispatch')
    },
  }
}

/** Publishes the claim's event, plans the run as its user and starts it here; a run that cannot go on ends `failed`. */
async function start(deps: ServiceDeps, row: ClaimedRow, how: 'resume' | 'dispatch'): Promise<void> {
  const runId = Number(row.id)
  const seq = Number(row.events_count)
  deps.runs.bus.publish(runId, [
    { seq, type: row.event_type, data: jsonValueOf(row.event_data), created_at: new Date(row.event_at).toISOString() },
  ])
  try {
    if (row.agent_id === null) throw new Error('The run’s agent was deleted')
    const ctx = await actingContext(deps, Number(row.user_id), Number(row.workspace_id))
    const agent = await requireAgent(ctx, { id: Number(row.agent_id) }, row.agent_version)
    const model = await resolveAgentModel(ctx, agent.metadata, agent)
    const offered = offeredTools(ctx, agent, model, 0)
    const content = row.input_text
    const decided = how === 'resume' ? decidedCalls(row.decided) : []
    const answeredLater = new Set(decided.map((d) => d.toolCallId))
    // Asked once here: a blocked run is planned without knowledge, and only its executor asks again (to end it).
    const refused = await refusedByBudget(ctx, row)
    const call = await agentCall(ctx, agent, row.thread_id === null ? null : Number(row.thread_id), content, model, offered, {
      inHistory: true,
      answeredLater,
      skipKnowledge: refused,
    })
    call.runUuid = row.uuid
    if (how === 'resume') {
      // What it logged before it waited stays as it was: no second warning or retrieval event.
      call.warnings = []
      delete call.knowledge
      call.decided = decided
    }
    const plan = claimedPlan(call, row, { id: agent.id, uuid: agent.uuid }, how === 'resume' ? storedBefore(row) : undefined)
    const execution = deps.runs.start(call, Promise.resolve(plan), { storedSeq: seq, checkBudget: refused })
    if (how === 'dispatch' && agent.metadata.memory === true) {
      deps.runs.track(
        execution.then((outcome) =>
          outcome.status === 'succeeded'
            ? extractMemories({ orm: deps.orm, config: deps.config }, { plan, userText: content, answer: outcome.output })
            : undefined,
        ),
      )
    }
  } catch (error) {
    await cannotGoOn(deps, row, error)
  }
}

/** Ends a claimed run that cannot go on `failed`, and moves its thread's queue on. */
async function cannotGoOn(deps: ServiceDeps, row: Pick<ClaimedRow, 'id' | 'uuid' | 'thread_id'>, cause: unknown): Promise<void> {
  if (databaseUnavailable(cause)) {
    // Not the run's fault: it keeps its claim's heartbeat until that goes stale, and is taken over again.
    deps.log.warn({ err: cause, run: row.uuid }, 'a run could not be planned while the database was unavailable')
    return
  }
  const message = cause instanceof Error && cause.message ? cause.message : 'The run could not go on'
  deps.log.warn({ err: cause, run: row.uuid }, 'a run could not go on')
  const error = { code: 'not_resumable', message: `The run could not go on: ${message}`.slice(0, 500) }
  await endRuns(deps.orm.em.fork(), deps.runs.bus, { sql: 'id = ?', params: [Number(row.id)] }, 'failed', error, { executorless: true })
  if (row.thread_id !== null) await deps.runs.requestDispatch(Number(row.thread_id))
}

/** The decided approvals a resume claim answered, as the calls the model stream runs first. */
function decidedCalls(value: unknown): DecidedCall[] {
  const list = jsonValueOf(value)
  if (!Array.isArray(list)) return []
  return list.filter(isRecord).map((item) => ({
    toolCallId: String(item.tool_call_id),
    toolName: String(item.tool_name),
    input: isRecord(item.arguments) ? item.arguments : {},
    approved: item.status === 'approved',
    reason: item.status === 'expired' ? 'expired' : typeof item.reason === 'string' ? item.reason : null,
  }))
}
