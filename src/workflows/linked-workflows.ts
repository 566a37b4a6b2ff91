/**
 * An agent's linked workflows as tools of its runs (docs/api/runs.md, "Linked workflows"): the
 * workflows capability's side of the runs' `LinkedWorkflowsPort` (src/runs/runs.port.ts), which
 * the runtime hands to the runs (src/app.ts) so that they never import workflows.
 *
 * Linked workflows offered: every workflow linked to the agent (`agent_workflows`, in the agent's order) that the
 * run's caller may run as `POST /api/v1/workflows/{workflow_uuid}/run` allows: visible to them
 * (`read`), not deleted, with nodes. Active or not, as a manual run: activation only governs
 * webhooks and schedules. A workflow the caller cannot see is simply not offered (the agent's
 * owner may have linked a private one).
 *
 * Each call is an ordinary manual execution (mode `manual`, the caller as its user), started
 * and waited for in this process as a manual run without `background` is
 * (./workflow-runs.service.ts), so it is listed, counted and readable like any other.
 * The workflow is looked up again when the model calls it, so a permission lost or a graph
 * emptied since the run began refuses the call. The run's cancel and timeout cancel the
 * execution; the workflow's own `timeout_seconds` still applies inside it.
 */
import { serviceScopeSql, viewerOf } from '../access/resource-access.ts'
import { visibleSql } from '../access/visibility.ts'
import { AppError } from '../platform/errors.ts'
import type { SqlFragment } from '../platform/sql.ts'
import { functionNames } from '../catalog/index.ts'
import type { LinkedWorkflowsPort } from '../runs/index.ts'
import type { WorkflowToolBinding, WorkflowToolOutcome } from '../runs/index.ts'
import { isRecord, jsonValueOf } from '../access/wire.ts'
import { triggerOf } from './node-types.ts'
import { cancelExecution } from './workflow-executions.service.ts'
import { runnableWorkflow } from './workflow-runs.service.ts'
import type { ResourceCtx } from '../context.ts'

/**
 * Most linked-workflow calls nested in one another: a workflow that runs an agent whose run calls
 * a workflow (perhaps the same one) nests, and without a bound such a loop would go on until
 * every level timed out. A run this deep offers no linked workflows.
 */
const MAX_TOOL_DEPTH = 3

/**
 * The select of the workflow rows {@link linkedWorkflowsSql} and {@link snapshotWorkflowsSql}
 * answer: of `from` (alias `w` for the workflow), those the caller may run, ordered by `order`.
 */
function workflowRowsSql(ctx: ResourceCtx, from: string, where: string, order: string): SqlFragment {
  const visible = visibleSql('w', 'workflows', viewerOf(ctx))
  const scope = serviceScopeSql('w', ctx)
  return {
    sql: `(select coalesce(json_agg(json_build_object('uuid', w.uuid, 'name', w.name, 'description', w.description, 'nodes', w.nodes,
         'requiresApproval', coalesce(w.settings->'requires_approval', 'false'::jsonb) = 'true'::jsonb)
         order by ${order}), '[]')
       ${from}
       where ${where} and w.deleted_at is null and jsonb_array_length(w.nodes) > 0 and ${visible.sql} and ${scope.sql})`,
    params: [...visible.params, ...scope.params],
  }
}

/**
 * A subquery answering, as a JSON array, the workflows linked to the agent whose id is the SQL
 * `agentId` (a column or a `?`) that the caller may run (module comment), for the agent's own
 * statement; {@link workflowToolBindings} reads it.
 */
function linkedWorkflowsSql(ctx: ResourceCtx, agentId: string): SqlFragment {
  return workflowRowsSql(ctx, 'from agent_workflows x join workflows w on w.id = x.workflow_id', `x.agent_id = ${agentId}`, 'x.position, x.id')
}

/**
 * {@link linkedWorkflowsSql} for the workflows of an agent version's snapshot: the jsonb
 * expression `workflows` is its `[{workflow_uuid}]` (docs/api/versions.md), read in its order.
 */
function snapshotWorkflowsSql(ctx: ResourceCtx, workflows: string): SqlFragment {
  return workflowRowsSql(
    ctx,
    `from jsonb_array_elements(${workflows}) with ordinality x(link, position) join workflows w on w.uuid = (x.link->>'workflow_uuid')::uuid`,
    'true',
    'x.position',
  )
}

/** What a trigger type asks of the tool's arguments, and the execution input it makes of them. */
export interface TriggerShape {
  schema: Record<string, unknown>
  /** A note appended to the tool's description, or ''. */
  note: string
  input: (args: Record<string, unknown>) => unknown
}

const FREE_FORM: Record<string, unknown> = { type: 'object', properties: {}, additionalProperties: true }

/**
 * The tool's side of each trigger. No trigger declares the shape of its input, so the arguments
 * are a free-form object: a manual trigger gets them as the run's `input`; a webhook trigger as
 * the `body` of the `{method, headers, query, body}` its webhook would give, so a graph written
 * for its webhook reads them where it expects; a schedule trigger takes none (its output is the
 * firing time and its `input` parameter). The MCP server's workflow tools take the same shape
 * (./mcp-server.service.ts).
 */
export function triggerShape(type: string | undefined): TriggerShape {
  switch (type) {
    case 'webhook_trigger':
      return {
        schema: FREE_FORM,
        note: 'The arguments are the JSON body of the webhook request that starts it.',
        input: (args) => ({ method: 'POST', headers: {}, query: {}, body: args }),
      }
    case 'schedule_trigger':
      return { schema: { type: 'object', properties: {}, additionalProperties: false }, note: 'It takes no arguments.', input: () => ({}) }
    default:
      return { schema: FREE_FORM, note: '', input: (args) => args }
  }
}

/**
 * The tools of the rows {@link linkedWorkflowsSql} read, named after their workflows
 * (lower-case letters, digits, `_` and `-`, at most 64 characters; `_2`, `_3`, ... after a name in
 * `taken` or an earlier workflow's), described by the workflow's `description` (its name when
 * empty). Each tool's `run` acts as the caller of `ctx` (module comment). None when the run is
 * `o.toolDepth` (its execution's, 0 for a run no execution started) {@link MAX_TOOL_DEPTH} deep.
 */
function workflowToolBindings(
  ctx: ResourceCtx,
  rows: unknown,
  o: { taken: ReadonlySet<string>; toolDepth: number },
): WorkflowToolBinding[] {
  if (o.toolDepth >= MAX_TOOL_DEPTH) return []
  const parsed = jsonValueOf(rows)
  const list = Array.isArray(parsed) ? parsed.filter(isRecord) : []
  const names = functionNames(
    list.map((row) => String(row.name)),
    o.taken,
  )
  return list.map((row, index): WorkflowToolBinding => {
    const nodes = jsonValueOf(row.nodes)
    const shape = triggerShape(triggerOf(Array.isArray(nodes) ? nodes : [])?.type)
    const uuid = String(row.uuid)
    const said = String(row.description ?? '').trim() || `Runs the workflow "${String(row.name)}".`
    return {
      name: names[index],
      description: shape.note ? `${said}\n\n${shape.note}` : said,
      inputSchema: shape.schema,
      workflowUuid: uuid,
      requiresApproval: row.requiresApproval === true,
      run: (args, signal) => runLinkedWorkflow(ctx, { uuid, input: shape.input(args), toolDepth: o.toolDepth + 1 }, signal),
    }
  })
}

/**
 * One call of a workflow tool: a manual execution of workflow `uuid` with `input` (`toolDepth`
 * deep: a run it starts offers linked workflows only below {@link MAX_TOOL_DEPTH}), waited for;
 * `signal` cancels it. Never throws: a refusal (the workflow is gone, no longer visible or
 * empty) or a fault is an outcome the model is told about.
 */
async function runLinkedWorkflow(
  ctx: ResourceCtx,
  { uuid, input, toolDepth }: { uuid: string; input: unknown; toolDepth: number },
  signal: AbortSignal | undefined,
): Promise<WorkflowToolOutcome> {
  const refused = (code: string, message: string): WorkflowToolOutcome => ({
    executionUuid: null,
    status: 'not_started',
    output: null,
    error: { code, message },
  })
  let workflow: Awaited<ReturnType<typeof runnableWorkflow>>
  try {
    workflow = await runnableWorkflow(ctx, uuid)
  } catch (error) {
    if (error instanceof AppError) return refused('not_runnable', error.message)
    ctx.log.error({ err: error, workflow: uuid }, 'workflow tool not started')
    return refused('internal_error', 'The workflow could not be started')
  }
  if (signal?.aborted) return refused('canceled', 'The run ended before the workflow started')
  let started: Awaited<ReturnType<typeof ctx.deps.workflows.runHere>>
  try {
    started = await ctx.deps.workflows.runHere(workflow, { mode: 'manual', userId: ctx.auth.user.id, input, toolDepth })
  } catch (error) {
    ctx.log.error({ err: error, workflow: uuid }, 'workflow tool not started')
    return refused('internal_error', 'The workflow execution could not be stored')
  }
  const executionUuid = started.record.uuid
  const stop = () =>
    void cancelExecution(ctx, started.record.id).catch((error: unknown) =>
      ctx.log.warn({ err: error, execution: executionUuid }, 'workflow tool cancel failed'),
    )
  if (signal?.aborted) stop()
  signal?.addEventListener('abort', stop, { once: true })
  try {
    const outcome = await started.done
    if (outcome.handedOver) {
      return {
        executionUuid,
        status: 'queued',
        output: null,
        error: { code: 'interrupted', message: 'The service shut down; the execution resumes elsewhere' },
      }
    }
    const error = outcome.error ? { code: outcome.error.code, message: outcome.error.message } : null
    return { executionUuid, status: outcome.status, output: outcome.status === 'succeeded' ? (outcome.output ?? null) : null, error }
  } catch (error) {
    ctx.log.error({ err: error, execution: executionUuid }, 'workflow tool execution not settled')
    return {
      executionUuid,
      status: 'failed',
      output: null,
      error: { code: 'internal_error', message: 'The execution could not be stored' },
    }
  } finally {
    signal?.removeEventListener('abort', stop)
  }
}

/** The port the runs reach linked workflows through (src/runs/runs.port.ts). */
export const linkedWorkflows: LinkedWorkflowsPort = { sql: linkedWorkflowsSql, snapshotSql: snapshotWorkflowsSql, bindings: workflowToolBindings }
