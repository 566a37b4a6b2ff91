/**
 * What a command room firing does (docs/api/command-room.md, "Firing"): the scheduler's
 * {@link FiringActor} (src/command-room/engine.ts), which the runtime binds (src/app.ts), so the
 * engine imports no service.
 *
 * A firing acts as the task's owner in the task's workspace with the owner's current role there
 * (src/access/acting-context.ts), through the same services and access rules as a request of
 * theirs: an agent task is an ordinary run (src/runs/runs.service.ts) in a new thread of the
 * owner, executed in this process, a workflow task an ordinary execution (mode `schedule`, or `manual` for
 * "run now") run in this process. The engine's claim read the owner's acting context and linked
 * the uuids the run and its thread, or the execution, are stored under here, so a firing whose
 * process dies before they are stored links a run or execution that does not exist, which tells
 * the engine's sweep that it started nothing (src/command-room/engine.ts). The firing then waits
 * for the end.
 * A firing the owner may no longer make (no longer a member, the agent or workflow deleted or no
 * longer visible to them) fails with the reason and stops the task; any other failure the
 * services name (the model call failed, no credential) fails this firing only. What they cannot
 * name (a lost database connection, a fault of ours) is thrown for the engine to tell apart.
 */
import { AppError, ForbiddenError, NotFoundError } from '../platform/errors.ts'
import type { FiringActor, FiringOutcome, FiringTarget } from './engine.ts'
import { actingContextOf } from '../access/acting-context.ts'
import { runAgent } from '../runs/index.ts'
import { runnableWorkflow } from '../workflows/index.ts'
import type { ResourceCtx, ServiceDeps } from '../context.ts'

/** A failure that means the owner may no longer make this firing. */
const lostAccess = (error: unknown) => error instanceof NotFoundError || error instanceof ForbiddenError

/**
 * The failed outcome of a service's `error` before the firing started anything, stopping the task
 * when the owner lost access.
 * @throws `error` itself when it is no AppError (a lost connection, a fault of ours): the engine's.
 */
function failure(error: unknown, what: string): FiringOutcome {
  if (lostAccess(error)) {
    const reason = error instanceof Error ? error.message : 'not found'
    return { status: 'failed', error: `The task's owner may no longer run this ${what} (${reason}); the task was deactivated`, deactivate: true }
  }
  if (error instanceof AppError) return { status: 'failed', error: error.message }
  throw error
}

/**
 * Runs the agent in a new thread of the owner, both stored under the uuids the claim linked, and
 * waits for the run's end. The run executes here, so its end is awaited in memory, not read from
 * its events.
 * @throws what {@link failure} throws; after the run was stored, what the wait for its end throws
 *   (an AppError is the run's own failure, recorded on the run too).
 */
async function fireAgent(ctx: ResourceCtx, target: FiringTarget): Promise<FiringOutcome> {
  let stored = false
  let ended
  try {
    ended = await runAgent(
      ctx,
      { agent_uuid: target.agentUuid as string, input: typeof target.input === 'string' ? target.input : '' },
      {
        // A firing stays running while its run waits for an approval (docs/api/runs.md, "Approvals").
        untilEnd: true,
        runUuid: target.runUuid as string,
        threadUuid: target.threadUuid as string,
        onStored: async () => {
          stored = true
        },
      },
    )
  } catch (error) {
    // Before the run was stored, the owner may have lost access; after, it is the run's own
    // failure (the upstream's 502 or 504), or the database's while the run goes on: the engine's.
    if (!stored) return failure(error, 'agent')
    throw error
  }
  const run = ended.data.run
  if (run.status === 'succeeded') return { status: 'succeeded' }
  return { status: 'failed', error: run.error?.message ?? `The run ended ${run.status}` }
}

/**
 * Runs the workflow here as the owner, its execution stored under the uuid the claim linked, and
 * waits for the execution's end.
 * @throws what {@link failure} throws.
 */
async function fireWorkflow(ctx: ResourceCtx, target: FiringTarget): Promise<FiringOutcome> {
  let started
  try {
    const workflow = await runnableWorkflow(ctx, target.workflowUuid as string)
    started = await ctx.deps.workflows.runHere(workflow, {
      mode: target.manual ? 'manual' : 'schedule',
      userId: ctx.auth.user.id,
      input: target.input ?? {},
      uuid: target.executionUuid as string,
    })
  } catch (error) {
    return failure(error, 'workflow')
  }
  const outcome = await started.done
  // Handed back to the queue at shutdown: the execution ends elsewhere, the sweep records it.
  if (outcome.handedOver) return { status: 'pending' }
  if (outcome.status === 'succeeded') return { status: 'succeeded' }
  return { status: 'failed', error: outcome.error?.message ?? `The execution ended ${outcome.status}` }
}

/** The {@link FiringActor} of this process over `deps` (the runtime's long-lived dependencies). */
export function createCommandRoomActor(deps: ServiceDeps): FiringActor {
  return {
    fire: async (target) => {
      let ctx: ResourceCtx
      try {
        ctx = actingContextOf(deps, target.owner, target.workspaceId)
      } catch (error) {
        if (error instanceof NotFoundError) {
          return { status: 'failed', error: "The task's owner is no longer a member of its workspace; the task was deactivated", deactivate: true }
        }
        throw error
      }
      if (target.agentUuid) return fireAgent(ctx, target)
      if (target.workflowUuid) return fireWorkflow(ctx, target)
      return { status: 'failed', error: "The task's agent or workflow was deleted; the task was deactivated", deactivate: true }
    },
  }
}
