import { defineEntity, p, type InferEntity } from '@mikro-orm/core'
import { AccessToken } from './access-token.entity.ts'
import { Agent } from './agent.entity.ts'
import { resourceKeys, timestamps } from './columns.ts'
import { recordOwnership } from './ownership.ts'
import { Prompt } from './prompt.entity.ts'
import { Thread } from './thread.entity.ts'
import { Tool } from './tool.entity.ts'
import { User } from './user-workspace.entity.ts'
import { Workflow } from './workflow.entity.ts'

/** What was run (docs/api/runs.md). */
export const RUN_KINDS = ['agent', 'thread', 'prompt'] as const
export type RunKind = (typeof RUN_KINDS)[number]

/**
 * Lifecycle of a run (docs/api/runs.md, "States"): `queued` -> `running` -> (`awaiting_approval`
 * -> `running`)* -> one of the three final states.
 */
export const RUN_STATUSES = ['queued', 'running', 'awaiting_approval', 'succeeded', 'failed', 'canceled'] as const
export type RunStatus = (typeof RUN_STATUSES)[number]

/**
 * One run of an agent, a thread or a prompt (`runs`, docs/api/resources.md). Its events are the
 * append-only log in `run_events`; `events_count` is the sequence number of the last one.
 * Times: `started_at` / `finished_at` timestamps, `heartbeat_at` the executing process's last beat, `latency_ms` from start to finish and
 * `first_event_ms` from start to the first streamed delta, both in milliseconds. `cost` in US dollars.
 */
export const Run = defineEntity({
  name: 'Run',
  tableName: 'runs',
  indexes: [
    { properties: ['workspace', 'createdAt'] },
    // An agent's runs by time, carrying what the agent leaderboard aggregates (index-only scans).
    {
      name: 'runs_agent_id_created_at_index',
      expression: `create index "runs_agent_id_created_at_index" on "runs" ("agent_id", "created_at") include ("user_id", "status", "latency_ms", "total_tokens")`,
    },
    { properties: ['thread'] },
    // The recovery sweep's look-up: the few unfinished runs, oldest heartbeat first.
    {
      name: 'runs_unfinished_index',
      expression: `create index "runs_unfinished_index" on "runs" ("heartbeat_at") where "status" in ('queued', 'running')`,
    },
    // A thread runs one run at a time, across every process (docs/api/runs.md, "Busy threads").
    {
      name: 'runs_thread_active_index',
      expression: `create unique index "runs_thread_active_index" on "runs" ("thread_id") where "status" in ('running', 'awaiting_approval')`,
    },
    // A busy thread's queue, oldest first.
    {
      name: 'runs_thread_queued_index',
      expression: `create index "runs_thread_queued_index" on "runs" ("thread_id", "id") where "status" = 'queued'`,
    },
  ],
  properties: {
    ...resourceKeys(),
    kind: p.enum(RUN_KINDS),
    status: p.enum(RUN_STATUSES).default('queued'),
    agent: () =>
      p.manyToOne(Agent)
        .nullable()
        .fieldName('agent_id')
        .deleteRule('set null'),
    thread: () =>
      p.manyToOne(Thread)
        .nullable()
        .fieldName('thread_id')
        .deleteRule('set null'),
    prompt: () =>
      p.manyToOne(Prompt)
        .nullable()
        .fieldName('prompt_id')
        .deleteRule('set null'),
    /** The access token whose request started the run (null: started by the service, as a workflow execution's or a firing's user). */
    accessToken: () =>
      p.manyToOne(AccessToken)
        .nullable()
        .fieldName('access_token_id')
        .deleteRule('set null'),
    /** Slug of the model the run used (`large_language_models.slug`). */
    model: p.string().length(255).nullable(),
    /**
     * The agent's version the run used (docs/api/versions.md): set when it starts; a queued run holds
     * the version it was pinned to, or null for the agent's version when it starts.
     */
    agentVersion: p.integer().nullable().fieldName('agent_version'),
    input: p.json<unknown>().nullable(),
    output: p.text().nullable(),
    /** `{code, message}` of a failed or canceled run. */
    error: p.json<{ code: string; message: string }>().nullable(),
    background: p.boolean().default(false),
    promptTokens: p.integer().fieldName('prompt_tokens').default(0),
    completionTokens: p.integer().fieldName('completion_tokens').default(0),
    totalTokens: p.integer().fieldName('total_tokens').default(0),
    cost: p.decimal('number').precision(14).scale(6).default(0),
    eventsCount: p.integer().fieldName('events_count').default(0),
    startedAt: p.datetime().nullable().fieldName('started_at'),
    finishedAt: p.datetime().nullable().fieldName('finished_at'),
    /**
     * Refreshed every `RUN_HEARTBEAT_MS` by the process executing the run (null until its first
     * beat: `updated_at` stands in); stale means that process died (src/runs/run-manager.ts).
     */
    heartbeatAt: p.datetime().nullable().fieldName('heartbeat_at'),
    /**
     * Executions that claimed the run: 1 at launch, one more per takeover of a run whose process
     * died; only the current claimant writes the run (src/runs/run-log.ts, src/runs/run-executor.ts).
     */
    attempts: p.integer().default(1),
    /** The steps a running run has completed (src/runs/run-executor.ts, `Checkpoint`); null between executions. */
    checkpoint: p.json<unknown>().nullable(),
    latencyMs: p.integer().nullable().fieldName('latency_ms'),
    firstEventMs: p.integer().nullable().fieldName('first_event_ms'),
    /** The W3C trace id of the trace it was started in (docs/operations.md, "Traces"); null when tracing was off or the trace not sampled. */
    traceId: p.string().length(32).nullable().fieldName('trace_id'),
    /** The evaluation whose item this run is (docs/api/evaluations.md): kept out of the agent's usage count, the leaderboard and metrics. */
    evaluationUuid: p.uuid().nullable().fieldName('evaluation_uuid'),
    ...recordOwnership(),
    ...timestamps(),
  },
})

export type IRun = InferEntity<typeof Run>

/**
 * One event of a run's append-only log (`run_events`): `seq` counts from 1 per run with no gaps,
 * and is the SSE event id and the tRPC tracked id (docs/api/resources.md). The key is the run and
 * `seq`, the only way the log is ever read (no surrogate id, so no sequence and no second index
 * for every event stored).
 */
export const RunEvent = defineEntity({
  name: 'RunEvent',
  tableName: 'run_events',
  properties: {
    run: () =>
      p.manyToOne(Run)
        .fieldName('run_id')
        .deleteRule('cascade')
        .primary(),
    seq: p.integer().primary(),
    type: p.string().length(40),
    data: p.json<unknown>(),
    createdAt: p.datetime().fieldName('created_at').onCreate(() => new Date()),
  },
})

export type IRunEvent = InferEntity<typeof RunEvent>

/** Kinds of tool call an approval stands for (docs/api/runs.md, "Approvals"). */
export const APPROVAL_TOOL_KINDS = ['api', 'mcp', 'workflow'] as const
export type ApprovalToolKind = (typeof APPROVAL_TOOL_KINDS)[number]

/** Where an approval is: `pending` until a person decides, it expires, or its run is canceled. */
export const APPROVAL_STATUSES = ['pending', 'approved', 'denied', 'expired', 'canceled'] as const
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number]

/**
 * One tool call a run waits on a person for (`run_approvals`, docs/api/runs.md, "Approvals"): the
 * call as the model asked for it, then the decision. `arguments` is what runs: the model's, or
 * the person's edit. Who may see it follows its run (its starter, and the workspace's owners and
 * admins), so it carries no owner of its own.
 */
export const RunApproval = defineEntity({
  name: 'RunApproval',
  tableName: 'run_approvals',
  indexes: [
    // The expiry pass: the pending approvals, soonest first.
    {
      name: 'run_approvals_pending_index',
      expression: `create index "run_approvals_pending_index" on "run_approvals" ("expires_at") where "status" = 'pending'`,
    },
  ],
  uniques: [{ properties: ['run', 'toolCallId'] }],
  properties: {
    ...resourceKeys(),
    run: () =>
      p.manyToOne(Run)
        .fieldName('run_id')
        .deleteRule('cascade'),
    toolCallId: p.string().length(255).fieldName('tool_call_id'),
    toolKind: p.enum(APPROVAL_TOOL_KINDS).fieldName('tool_kind'),
    /** The function name the model called. */
    toolName: p.string().length(255).fieldName('tool_name'),
    tool: () =>
      p.manyToOne(Tool)
        .nullable()
        .fieldName('tool_id')
        .deleteRule('set null'),
    workflow: () =>
      p.manyToOne(Workflow)
        .nullable()
        .fieldName('workflow_id')
        .deleteRule('set null'),
    arguments: p.json<Record<string, unknown>>(),
    /** The JSON Schema the tool's input must satisfy, as the run offered it: edited arguments are checked against it. */
    inputSchema: p.json<Record<string, unknown>>().nullable().fieldName('input_schema'),
    status: p.enum(APPROVAL_STATUSES).default('pending'),
    decidedBy: () =>
      p.manyToOne(User)
        .nullable()
        .fieldName('decided_by_id')
        .deleteRule('set null'),
    decidedAt: p.datetime().nullable().fieldName('decided_at'),
    reason: p.text().nullable(),
    /** When the run went on with this decision (the decided call ran, or was refused, then); null before. */
    resumedAt: p.datetime().nullable().fieldName('resumed_at'),
    expiresAt: p.datetime().fieldName('expires_at'),
    ...timestamps(),
  },
})

export type IRunApproval = InferEntity<typeof RunApproval>
