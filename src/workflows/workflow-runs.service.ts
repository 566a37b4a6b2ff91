/**
 * `POST /api/v1/workflows/{workflow_uuid}/run` (docs/api/workflows.md): a manual
 * trigger with an `input`. Without `background` the execution runs in this process and the call
 * answers 200 with it, per-node data included, once it has ended (whatever its status); with
 * `background: true` it is queued for any worker and the call answers 202 as soon as it is stored
 * (its job sent or not: src/workflows/engine.ts, `runQueued`; a 503 stored nothing). Running needs
 * `read` on the workflow (docs/api/tenancy.md: read is "view, run, duplicate"); an inactive
 * workflow can be run by hand (only webhooks and schedules need it active). The execution acts
 * as the caller.
 */
import { requireResource } from '../access/resource-access.ts'
import { ConflictError, NotFoundError } from '../platform/errors.ts'
import type { TRunWorkflowInput } from './workflow.schema.ts'
import type { TWorkflowExecutionDetail } from './workflow-execution.schema.ts'
import { loadRunnable } from './engine.ts'
import { retrieve } from './workflow-executions.service.ts'
import type { ResourceCtx } from '../context.ts'

/**
 * The workflow `uuid` as the engine runs it, if the caller may run it (`read`).
 * @throws NotFoundError (not visible), ConflictError (the workflow has no nodes).
 */
export async function runnableWorkflow(ctx: ResourceCtx, uuid: string) {
  const { id } = await requireResource(ctx, 'workflows', 'Workflow', uuid, 'read')
  const workflow = await loadRunnable(ctx.em, id)
  if (!workflow) throw new NotFoundError('Workflow')
  if (!workflow.nodes.length) throw new ConflictError('The workflow has no nodes to run')
  return workflow
}

/**
 * Runs a workflow by hand (module comment).
 * @throws as {@link runnableWorkflow}.
 */
export async function run(ctx: ResourceCtx, input: TRunWorkflowInput): Promise<{ data: TWorkflowExecutionDetail }> {
  const workflow = await runnableWorkflow(ctx, input.workflow_uuid)
  const engine = ctx.deps.workflows
  const trigger = { mode: 'manual' as const, userId: ctx.auth.user.id, input: input.input ?? null }
  if (input.background) {
    const record = await engine.runQueued(workflow, trigger)
    return retrieve(ctx, record.uuid)
  }
  const started = await engine.runHere(workflow, trigger)
  await started.done
  return retrieve(ctx, started.record.uuid)
}
