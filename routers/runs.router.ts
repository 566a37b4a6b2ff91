/**
 * Runs (docs/api/runs.md): `POST agents/{x}/run`, `POST threads/{x}/run`,
 * `POST prompts/{x}/run`, `GET runs/{x}`, `POST runs/{x}/cancel`, and the subscription
 * `runs.events` (tracked event ids, resumable with `lastEventId`, over WebSocket and SSE).
 * REST clients follow events at `GET /api/v1/runs/{run_uuid}/events` (src/http/run-events.routes.ts).
 */
import { tracked } from '@trpc/server'
import { runs } from '../src/runs/index.ts'
import { RunAgentInput, RunEventsInput, RunPathInput, RunPromptInput, RunResult, RunThreadInput, type TRunResult } from '../src/runs/index.ts'
import type { Ctx } from '../src/trpc/context.ts'
import { router, workspaceProcedure } from '../src/trpc/init.ts'

const tags = ['Runs']
const summary = (what: string) => `${what}: 200 when done, 202 at once with background: true, or its events as Server-Sent Events`

/**
 * `stream: true` runs the run in the background: the REST surface then answers its events on the
 * same request (src/http/run-event-stream.ts), a tRPC caller gets the started run, as with
 * `background: true`, and follows `runs.events` (docs/api/runs.md, "One-request streaming").
 */
const inBackground = <T extends { background?: boolean; stream?: boolean }>(input: T): T =>
  input.stream ? { ...input, background: true } : input

/** The status is the surface's: 202 for a run left in the background, else 200 (docs/api/runs.md). */
async function answered(ctx: Ctx, input: { background?: boolean; stream?: boolean }, run: Promise<TRunResult>): Promise<TRunResult> {
  const result = await run
  if (input.background || input.stream) ctx.successStatus = 202
  return result
}

// The run procedures leave the call's `signal` alone: a run is detached from its request
// (docs/api/runs.md), so a REST client that disconnects does not stop it and its answer is stored.
export const runsRouter = router({
  agent: workspaceProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/agents/{agent_uuid}/run',
        tags: ['Agents', ...tags],
        summary: summary('Run an agent'),
        protect: true,
      },
      backgroundStatus: 202,
      runEventStream: true,
      callsModel: true,
    })
    .input(RunAgentInput)
    .output(RunResult)
    .mutation(({ ctx, input }) => answered(ctx, input, runs.runAgent(ctx, inBackground(input)))),

  thread: workspaceProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/threads/{thread_uuid}/run',
        tags: ['Threads', ...tags],
        summary: summary('Run a thread'),
        protect: true,
      },
      backgroundStatus: 202,
      runEventStream: true,
      callsModel: true,
    })
    .input(RunThreadInput)
    .output(RunResult)
    .mutation(({ ctx, input }) => answered(ctx, input, runs.runThread(ctx, inBackground(input)))),

  prompt: workspaceProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/prompts/{prompt_uuid}/run',
        tags: ['Prompts', ...tags],
        summary: summary('Run a prompt'),
        protect: true,
      },
      backgroundStatus: 202,
      runEventStream: true,
      callsModel: true,
    })
    .input(RunPromptInput)
    .output(RunResult)
    .mutation(({ ctx, input }) => answered(ctx, input, runs.runPrompt(ctx, inBackground(input)))),

  retrieve: workspaceProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/runs/{run_uuid}',
        tags,
        summary: 'Retrieve a run with its stored messages and usage',
        protect: true,
      },
    })
    .input(RunPathInput)
    .output(RunResult)
    .query(({ ctx, input }) => runs.retrieve(ctx, input.run_uuid)),

  cancel: workspaceProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/runs/{run_uuid}/cancel',
        tags,
        summary: 'Cancel a queued or running run (409 once it ended)',
        protect: true,
      },
    })
    .input(RunPathInput)
    .output(RunResult)
    .mutation(({ ctx, input }) => runs.cancel(ctx, input.run_uuid)),

  /** The run's events after `lastEventId`, each tracked by its sequence number; ends after the final event. */
  events: workspaceProcedure.input(RunEventsInput).subscription(async function* ({ ctx, input, signal }) {
    const events = await runs.events(ctx, input.run_uuid, Number(input.lastEventId ?? 0), signal)
    for await (const event of events) yield tracked(String(event.seq), event)
  }),
})
