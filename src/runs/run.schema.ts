/**
 * Wire shapes of runs (docs/api/runs.md): the three ways to start
 * one, the stored `Run`, the answer of a run request, and the events of its log.
 */
import type { RunEventRecord } from './run-event.ts'
import { z } from 'zod'
import { APPROVAL_STATUSES, APPROVAL_TOOL_KINDS, RUN_KINDS, RUN_STATUSES, type IRun } from '../../entities/index.ts'
import { Message } from '../threads/index.ts'
import { envelope, iso, isoOrNull, isRecord, jsonBoolean, jsonInt, jsonValueOf, text, timestamp } from '../access/wire.ts'
import { UserSummary } from '../access/user-workspace.schema.ts'

/** Longest user input or message of a run, in characters (docs/api/resources.md bounds `instruction`/`content` alike). */
export const RUN_INPUT_MAX = 100_000

const background = jsonBoolean().optional()
/**
 * `stream: true` answers as Server-Sent Events on the REST surface (docs/api/runs.md, "One-request
 * streaming"); through tRPC it runs the run as `background: true` does.
 */
const stream = jsonBoolean()
  .optional()
  .meta({
    description:
      "Answer as Server-Sent Events (REST): the run's events, then the stream ends. Through tRPC, the same as `background: true`.",
  })
const workspaceUuid = z.uuid().optional()

/** What a run sent to a busy thread does (docs/api/runs.md, "Busy threads"). */
export const IF_BUSY = ['enqueue', 'reject', 'interrupt'] as const
export type IfBusy = (typeof IF_BUSY)[number]
const ifBusy = z
  .enum(IF_BUSY)
  .optional()
  .meta({
    description:
      'When the thread already has an unfinished run: `enqueue` (default) runs this one after it, `reject` answers 409, `interrupt` cancels it and runs this one at once.',
  })

/** The agent's version a run uses (docs/api/versions.md, "Pinned runs"): 1 to the current one (checked when it starts); omitted: the current one. */
const agentVersion = jsonInt(1, 2_147_483_647).optional()

/** `POST /api/v1/agents/{agent_uuid}/run`: `{input, thread_uuid?, background?, stream?}`. */
export const RunAgentInput = z.strictObject({
  agent_uuid: z.uuid(),
  workspace_uuid: workspaceUuid,
  input: text(RUN_INPUT_MAX, 1),
  thread_uuid: z.uuid().optional(),
  version: agentVersion,
  if_busy: ifBusy,
  background,
  stream,
})
export type TRunAgentInput = z.infer<typeof RunAgentInput>

/** `POST /api/v1/threads/{thread_uuid}/run`: `{content, background?, stream?}`. */
export const RunThreadInput = z.strictObject({
  thread_uuid: z.uuid(),
  workspace_uuid: workspaceUuid,
  content: text(RUN_INPUT_MAX, 1),
  version: agentVersion,
  if_busy: ifBusy,
  background,
  stream,
})
export type TRunThreadInput = z.infer<typeof RunThreadInput>

/** `POST /api/v1/prompts/{prompt_uuid}/run`: `{input: {key: value}, large_language_model?, background?, stream?}`. */
export const RunPromptInput = z.strictObject({
  prompt_uuid: z.uuid(),
  workspace_uuid: workspaceUuid,
  /** Checked against the prompt's declared inputs by src/prompts/prompt-render.ts (400 naming `input.<key>`). */
  input: z.record(z.string(), z.unknown()).default({}),
  large_language_model: z.string().min(1).max(120).optional(),
  background,
  stream,
})
export type TRunPromptInput = z.infer<typeof RunPromptInput>

/** `{run_uuid}` of the run paths. */
export const RunPathInput = z.strictObject({ run_uuid: z.uuid(), workspace_uuid: workspaceUuid })

/** `runs.events`: the run and, to resume, the last event id seen (tRPC's tracked `lastEventId`). */
export const RunEventsInput = z.strictObject({
  run_uuid: z.uuid(),
  workspace_uuid: workspaceUuid,
  lastEventId: z.union([z.string().regex(/^\d{1,9}$/), z.number().int().min(0)]).nullish(),
})

/** Token counts and cost in US dollars. */
export const Usage = z.object({
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  total_tokens: z.number().int(),
  cost: z.number(),
})
export type TUsage = z.infer<typeof Usage>

/**
 * Something a run could not do as its agent asks, and went on without (docs/api/runs.md,
 * "Warnings"): `web_search_unavailable` when the model's provider offers no web search.
 */
export const RunWarning = z.object({ code: z.string(), message: z.string() })
export type TRunWarning = z.infer<typeof RunWarning>


/**
 * A tool call a run waits on a person for (docs/api/runs.md, "Approvals"). `arguments` are the
 * model's until a person approves with an edit; then what ran.
 */
export const Approval = z
  .object({
    uuid: z.uuid(),
    run_uuid: z.uuid(),
    thread_uuid: z.uuid().nullable(),
    agent_uuid: z.uuid().nullable(),
    tool_call_id: z.string(),
    tool_kind: z.enum(APPROVAL_TOOL_KINDS),
    tool_name: z.string(),
    tool_uuid: z.uuid().nullable(),
    workflow_uuid: z.uuid().nullable(),
    arguments: z.record(z.string(), z.unknown()),
    status: z.enum(APPROVAL_STATUSES),
    decided_by: UserSummary.nullable(),
    decided_at: timestamp().nullable(),
    reason: z.string().nullable(),
    expires_at: timestamp(),
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .meta({ id: 'Approval' })
export type TApproval = z.infer<typeof Approval>

/** A stored run. Times in milliseconds; `first_event_ms` is from start to the first text delta. */
export const Run = z.object({
  uuid: z.uuid(),
  kind: z.enum(RUN_KINDS),
  status: z.enum(RUN_STATUSES),
  agent_uuid: z.uuid().nullable(),
  /** The agent's version the run used (docs/api/versions.md); null for prompt runs and for a queued run not pinned to one. */
  agent_version: z.number().int().nullable(),
  thread_uuid: z.uuid().nullable(),
  prompt_uuid: z.uuid().nullable(),
  model: z.string().nullable(),
  input: z.unknown(),
  output: z.string().nullable(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  background: z.boolean(),
  usage: Usage,
  events_count: z.number().int(),
  started_at: timestamp().nullable(),
  finished_at: timestamp().nullable(),
  latency_ms: z.number().int().nullable(),
  first_event_ms: z.number().int().nullable(),
  /** The run's `run.warning` events' data, in order; empty for most runs. */
  warnings: z.array(RunWarning),
  /** Its tool calls that waited for a person, oldest first; empty for most runs. */
  approvals: z.array(Approval),
  /** The W3C trace id of the trace the run was started in (docs/operations.md, "Traces"); null when tracing was off or the trace not sampled. */
  trace_id: z.string().nullable(),
  /** The evaluation whose item this run is (docs/api/evaluations.md); null for every other run. */
  evaluation_uuid: z.uuid().nullable(),
  created_at: timestamp(),
  updated_at: timestamp(),
})
export type TRun = z.infer<typeof Run>

/**
 * The answer of a run request and of `GET /api/v1/runs/{run_uuid}`: the run, its stored messages,
 * its usage, and its approvals still pending (a run answered while it waits).
 */
export const RunResult = envelope(z.object({ run: Run, messages: z.array(Message), usage: Usage, approvals: z.array(Approval) }))
export type TRunResult = z.infer<typeof RunResult>

/**
 * One event of a run's log as Server-Sent Events carry it (the `data:` line of each event; the
 * event's `id:` is `id` and its `event:` is `type`). Declared once in the OpenAPI document as the
 * schema of every run event stream (docs/api/runs.md, "Events").
 */
export const RunEvent = z
  .object({
    id: z.number().int().describe('Sequence number from 1 per run, no gaps; send it back as Last-Event-ID to resume after it'),
    type: z
      .string()
      .describe(
        'run.started, run.resumed, knowledge.retrieved, text.delta, tool.call, tool.result, run.approval_requested, message, run.warning, error, then one of run.succeeded, run.failed, run.canceled',
      ),
    data: z.unknown().describe("The event's data (docs/api/runs.md lists each type's)"),
    created_at: timestamp(),
  })
  .meta({ id: 'RunEvent' })
export type TRunEvent = z.infer<typeof RunEvent>

/** A stored event on the wire (SSE `data`). Mapped, not parsed: the log holds only what the executor wrote. */
export const toRunEvent = (event: RunEventRecord): TRunEvent => ({
  id: event.seq,
  type: event.type,
  data: event.data,
  created_at: event.created_at,
})

/** A run row with the uuids of what it refers to, as src/runs/runs.service.ts reads it. */
export type RunRecord = Pick<
  IRun,
  | 'uuid'
  | 'kind'
  | 'status'
  | 'model'
  | 'agentVersion'
  | 'input'
  | 'output'
  | 'error'
  | 'background'
  | 'promptTokens'
  | 'completionTokens'
  | 'totalTokens'
  | 'cost'
  | 'eventsCount'
  | 'startedAt'
  | 'finishedAt'
  | 'latencyMs'
  | 'firstEventMs'
  | 'traceId'
  | 'evaluationUuid'
  | 'createdAt'
  | 'updatedAt'
> & {
  id: number
  agentUuid: string | null
  threadUuid: string | null
  promptUuid: string | null
  /** The data of its `run.warning` events (JSON text or parsed); absent or null: none. */
  warnings?: unknown
  /** Its approvals as wire objects (JSON text or parsed, ./approvals.service.ts `APPROVALS_OF_RUN_SQL`); absent or null: none. */
  approvals?: unknown
}

/** The stored columns of a {@link RunRecord} (camelCase; read through `selectColumns` of src/platform/sql.ts). */
// prettier-ignore
export const RUN_FIELDS = [
  'id', 'uuid', 'kind', 'status', 'model', 'agentVersion', 'input', 'output', 'error', 'background', 'promptTokens', 'completionTokens', 'totalTokens',
  'cost', 'eventsCount', 'startedAt', 'finishedAt', 'latencyMs', 'firstEventMs', 'traceId', 'evaluationUuid', 'createdAt', 'updatedAt',
] as const

/** Maps a run row to the wire. */
export function toRun(row: RunRecord): TRun {
  return {
    uuid: row.uuid,
    kind: row.kind,
    status: row.status,
    agent_uuid: row.agentUuid,
    agent_version: row.agentVersion == null ? null : Number(row.agentVersion),
    thread_uuid: row.threadUuid,
    prompt_uuid: row.promptUuid,
    model: row.model ?? null,
    input: row.input ?? null,
    output: row.output ?? null,
    error: row.error ?? null,
    background: row.background,
    usage: toUsage(row),
    events_count: Number(row.eventsCount),
    started_at: isoOrNull(row.startedAt),
    finished_at: isoOrNull(row.finishedAt),
    latency_ms: row.latencyMs ?? null,
    first_event_ms: row.firstEventMs ?? null,
    warnings: warningsOf(row.warnings),
    approvals: approvalsOf(row.approvals),
    trace_id: row.traceId ?? null,
    evaluation_uuid: row.evaluationUuid ?? null,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  }
}

/** Stored warnings (a JSON array, as text or parsed) as the wire's list; anything malformed is left out. */
function warningsOf(value: unknown): TRunWarning[] {
  const parsed = jsonValueOf(value)
  if (!Array.isArray(parsed)) return []
  return parsed.flatMap((item) =>
    isRecord(item) && typeof item.code === 'string' && typeof item.message === 'string' ? [{ code: item.code, message: item.message }] : [],
  )
}

/**
 * Approvals read as wire objects by SQL (a JSON array, as text or parsed): the `expires_at`-style
 * timestamps come as PostgreSQL renders them in JSON and are normalised to the wire's ISO form.
 */
export function approvalsOf(value: unknown): TApproval[] {
  const parsed = jsonValueOf(value)
  if (!Array.isArray(parsed)) return []
  return parsed.filter(isRecord).map(toApproval)
}

/** One approval built by SQL as a JSON object (./approvals.service.ts) on the wire. */
export function toApproval(row: Record<string, unknown>): TApproval {
  return {
    ...(row as unknown as TApproval),
    decided_at: row.decided_at == null ? null : iso(String(row.decided_at)),
    expires_at: iso(String(row.expires_at)),
    created_at: iso(String(row.created_at)),
    updated_at: iso(String(row.updated_at)),
  }
}

/** The usage of a run row. */
export function toUsage(row: Pick<RunRecord, 'promptTokens' | 'completionTokens' | 'totalTokens' | 'cost'>): TUsage {
  return {
    prompt_tokens: Number(row.promptTokens),
    completion_tokens: Number(row.completionTokens),
    total_tokens: Number(row.totalTokens),
    cost: Number(row.cost),
  }
}

// In a file of its own that imports nothing: the runs.events subscription's declared output names it.
export type { RunEventRecord } from './run-event.ts'
